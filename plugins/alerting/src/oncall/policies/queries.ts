import { sql } from 'kysely'
import { containing, jsonb, jsonColumn, paged, type Executor, type Page } from '@svc/db'
import type { AckTimeout } from '../../alerts/index.js'
import type { Step } from './schemas.js'

/** A policy's stored steps, as the validated body wrote them. */
export const storedSteps = jsonColumn<Step[]>()

/**
 * The lifecycle's acknowledgement timeout (alerts/lifecycle.ts): the policy's, from now, or never
 * when it sets none or is gone.
 */
export const ackTimeoutFromNow: AckTimeout = (policyId) => sql<Date | null>`(
  select now() + make_interval(mins => p.ack_timeout_minutes)
  from divinux.escalation_policies p where p.id = ${policyId})`

const policyColumns = [
  'p.id',
  'p.name',
  'p.description',
  'p.repeatCount',
  'p.ackTimeoutMinutes',
  'p.steps',
  'p.createdBy',
  'p.createdAt',
  'p.updatedAt',
] as const
const returnedColumns = [
  'id',
  'name',
  'description',
  'repeatCount',
  'ackTimeoutMinutes',
  'steps',
  'createdBy',
  'createdAt',
  'updatedAt',
] as const

function policiesOf(db: Executor, organizationId: string) {
  return db.selectFrom('divinux.escalationPolicies as p').where('p.organizationId', '=', organizationId)
}

/** Policies by name (then id); `q` matches names containing it. */
export async function listPolicies(db: Executor, organizationId: string, q: string | undefined, page: Page) {
  const base = q ? policiesOf(db, organizationId).where('p.name', 'ilike', containing(q)) : policiesOf(db, organizationId)
  return paged(
    base,
    (rows) =>
      rows
        .select(policyColumns)
        .orderBy(sql`lower(p.name)`)
        .orderBy('p.id'),
    page,
  )
}

export async function findPolicy(db: Executor, organizationId: string, policyId: string, forUpdate = false) {
  const query = policiesOf(db, organizationId).select(policyColumns).where('p.id', '=', policyId)
  return forUpdate ? query.forUpdate().executeTakeFirst() : query.executeTakeFirst()
}

export type PolicyRow = NonNullable<Awaited<ReturnType<typeof findPolicy>>>

/** Of the given ids, those naming policies of the organization. */
export async function policiesAmong(db: Executor, organizationId: string, policyIds: string[]): Promise<Set<string>> {
  if (policyIds.length === 0) return new Set()
  const rows = await policiesOf(db, organizationId).select('p.id').where('p.id', 'in', policyIds).execute()
  return new Set(rows.map((row) => row.id))
}

/** Policies with a step naming this target, locked for the caller to rewrite. */
export async function policiesTargeting(db: Executor, organizationId: string, target: { type: string; id: string }) {
  const needle = JSON.stringify([{ targets: [target] }])
  return policiesOf(db, organizationId)
    .select(policyColumns)
    .where(sql<boolean>`p.steps @> ${needle}::jsonb`)
    .forUpdate()
    .execute()
}

export async function policyNameTaken(db: Executor, organizationId: string, name: string, exceptId?: string) {
  let query = policiesOf(db, organizationId)
    .select('p.id')
    .where(sql`lower(p.name)`, '=', name.toLowerCase())
  if (exceptId) query = query.where('p.id', '<>', exceptId)
  return (await query.executeTakeFirst()) !== undefined
}

export async function insertPolicy(
  db: Executor,
  policy: {
    organizationId: string
    name: string
    description: string | null
    repeatCount: number
    ackTimeoutMinutes: number | null
    steps: unknown[]
    createdBy: string
  },
): Promise<PolicyRow> {
  return db
    .insertInto('divinux.escalationPolicies')
    .values({ ...policy, steps: jsonb(policy.steps) })
    .returning(returnedColumns)
    .executeTakeFirstOrThrow()
}

export async function updatePolicy(
  db: Executor,
  organizationId: string,
  policyId: string,
  change: { name?: string; description?: string | null; repeatCount?: number; ackTimeoutMinutes?: number | null; steps?: unknown[] },
) {
  const { steps, ...rest } = change
  return db
    .updateTable('divinux.escalationPolicies')
    .set({ ...rest, ...(steps ? { steps: jsonb(steps) } : {}), updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', policyId)
    .returning(returnedColumns)
    .executeTakeFirst()
}

export async function deletePolicy(db: Executor, organizationId: string, policyId: string) {
  return db
    .deleteFrom('divinux.escalationPolicies')
    .where('organizationId', '=', organizationId)
    .where('id', '=', policyId)
    .returning('id')
    .executeTakeFirst()
}

/** The organization's escalation policies by name, lower-cased. */
export async function policyIdsByName(db: Executor, organizationId: string): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('divinux.escalationPolicies')
    .select(['id', 'name'])
    .where('organizationId', '=', organizationId)
    .execute()
  return new Map(rows.map((row) => [row.name.toLowerCase(), row.id]))
}
