import { sql } from 'kysely'
import { paged, type Executor, type Page } from '@svc/db'
import type { OrganizationRole } from '@svc/auth'
import type { ProductRoles } from './queries.js'

export const invitationStatuses = ['pending', 'accepted', 'revoked', 'expired'] as const
export type InvitationStatus = (typeof invitationStatuses)[number]

/**
 * The status a reader sees: a pending invitation whose membership is gone (the member was
 * removed) is revoked, and one past its expiry is expired. Computed in the query, so lists can
 * filter by it.
 */
const statusNow = sql<InvitationStatus>`case
  when i.status = 'pending' and i.member_id is null then 'revoked'
  when i.status = 'pending' and i.expires_at <= now() then 'expired'
  else i.status end`

const invitationColumns = [
  'i.id',
  'i.organizationId',
  'i.memberId',
  'i.email',
  'i.role',
  'i.productRoles',
  'i.invitedBy',
  'inviter.email as invitedByEmail',
  'i.expiresAt',
  'i.sentCount',
  'i.lastSentAt',
  'i.acceptedAt',
  'i.revokedAt',
  'i.createdAt',
  statusNow.as('status'),
] as const

function invitationsOf(db: Executor, organizationId: string) {
  return db
    .selectFrom('core.invitations as i')
    .leftJoin('core.users as inviter', 'inviter.id', 'i.invitedBy')
    .where('i.organizationId', '=', organizationId)
}

export type InvitationRow = Awaited<ReturnType<typeof findInvitation>> & object

export interface NewInvitation {
  organizationId: string
  memberId: string
  email: string
  role: OrganizationRole
  productRoles: ProductRoles
  invitedBy: string | null
  tokenHash: string
  expiresAt: Date
}

export async function insertInvitation(db: Executor, invitation: NewInvitation): Promise<string> {
  const { id } = await db
    .insertInto('core.invitations')
    .values({ ...invitation, productRoles: JSON.stringify(invitation.productRoles) })
    .returning('id')
    .executeTakeFirstOrThrow()
  return id
}

/** @replica */
export async function listInvitations(db: Executor, organizationId: string, filter: Page & { status?: InvitationStatus }) {
  let query = invitationsOf(db, organizationId)
  if (filter.status) query = query.where(statusNow, '=', filter.status)
  return paged(query, (rows) => rows.select(invitationColumns).orderBy('i.createdAt', 'desc').orderBy('i.id'), filter)
}

export async function findInvitation(db: Executor, organizationId: string, invitationId: string) {
  return invitationsOf(db, organizationId).select(invitationColumns).where('i.id', '=', invitationId).executeTakeFirst()
}

/** The invitation's row, locked for a change (resend, revoke, accept), with its status now. */
export async function lockInvitation(db: Executor, where: { organizationId: string; id: string } | { tokenHash: string }) {
  let query = db
    .selectFrom('core.invitations as i')
    .innerJoin('core.organizations as o', 'o.id', 'i.organizationId')
    .select(['i.id', 'i.organizationId', 'o.name as organizationName', 'o.slug as organizationSlug', 'i.memberId', 'i.email'])
    .select(['i.role', 'i.productRoles', 'i.expiresAt', statusNow.as('status')])
    .forUpdate('i')
  query =
    'tokenHash' in where
      ? query.where('i.tokenHash', '=', where.tokenHash)
      : query.where('i.organizationId', '=', where.organizationId).where('i.id', '=', where.id)
  return query.executeTakeFirst()
}

/**
 * The invitation's resends within the last hour, from the audit log (each resend records
 * `invitation.resent` in the transaction that resends), and when the earliest of them was.
 */
export async function resendsInLastHour(db: Executor, organizationId: string, invitationId: string) {
  const row = await db
    .selectFrom('core.auditLogs')
    .select((eb) => [eb.fn.countAll<string>().as('count'), eb.fn.min<Date>('createdAt').as('earliest')])
    .where('organizationId', '=', organizationId)
    .where('action', '=', 'invitation.resent')
    .where('entityId', '=', invitationId)
    .where('createdAt', '>', sql<Date>`now() - interval '1 hour'`)
    .executeTakeFirstOrThrow()
  return { count: Number(row.count), earliest: row.earliest }
}

export async function markResent(db: Executor, id: string, tokenHash: string, expiresAt: Date): Promise<void> {
  await db
    .updateTable('core.invitations')
    .set({ tokenHash, expiresAt, sentCount: sql<number>`sent_count + 1`, lastSentAt: sql<Date>`now()`, updatedAt: sql<Date>`now()` })
    .where('id', '=', id)
    .execute()
}

export async function markRevoked(db: Executor, id: string, revokedBy: string | null): Promise<void> {
  await db
    .updateTable('core.invitations')
    .set({ status: 'revoked', revokedAt: sql<Date>`now()`, revokedBy, updatedAt: sql<Date>`now()` })
    .where('id', '=', id)
    .execute()
}

export async function markAccepted(db: Executor, id: string, acceptedBy: string): Promise<void> {
  await db
    .updateTable('core.invitations')
    .set({ status: 'accepted', acceptedAt: sql<Date>`now()`, acceptedBy, updatedAt: sql<Date>`now()` })
    .where('id', '=', id)
    .execute()
}

/**
 * The membership an invitation holds open, joined now by `userId` (who may be another account row
 * than the pending one); answers its role, which an owner may have changed since the invitation.
 */
export async function joinMembership(db: Executor, memberId: string, userId: string): Promise<string> {
  const { role } = await db
    .updateTable('core.organizationMembers')
    .set({ userId, joinedAt: sql<Date>`now()`, updatedAt: sql<Date>`now()` })
    .where('id', '=', memberId)
    .returning('role')
    .executeTakeFirstOrThrow()
  return role
}

/** Drops the membership an invitation held open, unless it was joined meanwhile. */
export async function deleteUnjoinedMembership(db: Executor, memberId: string): Promise<void> {
  await db.deleteFrom('core.organizationMembers').where('id', '=', memberId).where('joinedAt', 'is', null).execute()
}

/** Whether the address the account signed in with was verified by the identity provider, and what it is. */
export async function verifiedAddressOf(db: Executor, userId: string) {
  return db.selectFrom('core.users').select(['email', 'emailVerified']).where('id', '=', userId).executeTakeFirst()
}

/** The account's membership in the organization, joined or not. */
export async function membershipOfUser(db: Executor, organizationId: string, userId: string) {
  return db
    .selectFrom('core.organizationMembers')
    .select(['id', 'joinedAt'])
    .where('organizationId', '=', organizationId)
    .where('userId', '=', userId)
    .executeTakeFirst()
}
