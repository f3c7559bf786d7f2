import { sql } from 'kysely'
import type { Executor, Json } from '@svc/db'

export async function storedPreferences(db: Executor, userId: string) {
  return db.selectFrom('divinux.notificationPreferences').select(['preferences', 'updatedAt']).where('userId', '=', userId).executeTakeFirst()
}

export async function savePreferences(db: Executor, userId: string, preferences: Json) {
  return db
    .insertInto('divinux.notificationPreferences')
    .values({ userId, preferences })
    .onConflict((oc) => oc.column('userId').doUpdateSet({ preferences, updatedAt: sql<Date>`now()` }))
    .returning(['preferences', 'updatedAt'])
    .executeTakeFirstOrThrow()
}

/** Members of the organization with their direct product roles, by e-mail. */
export async function organizationUsers(db: Executor, organizationId: string, page: { offset: number; limit: number }) {
  const members = db
    .selectFrom('core.organizationMembers as m')
    .innerJoin('core.users as u', 'u.id', 'm.userId')
    .where('m.organizationId', '=', organizationId)
  const [rows, count] = await Promise.all([
    members
      .select([
        'm.id as memberId', 'u.id as userId', 'u.email', 'u.displayName', 'm.role', 'm.suspendedAt', 'm.createdAt',
        sql<boolean>`u.idp_subject is null`.as('pending'),
        sql<Record<string, string>>`coalesce((select jsonb_object_agg(r.product, r.role) from core.org_product_roles r where r.organization_id = m.organization_id and r.member_id = m.id), '{}'::jsonb)`.as('productRoles'),
      ])
      .orderBy('u.email')
      .orderBy('m.id')
      .offset(page.offset)
      .limit(page.limit)
      .execute(),
    members.select(sql<number>`count(*)`.as('total')).executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.total) }
}
