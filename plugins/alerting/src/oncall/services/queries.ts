import { sql } from 'kysely'
import { containing, paged, type Executor, type Json, type Page } from '@svc/db'

const columns = [
  's.id',
  's.key',
  's.name',
  's.description',
  's.ownerTeamId',
  's.escalationPolicyId',
  's.tier',
  's.tags',
  's.links',
  's.aliases',
  's.createdBy',
  's.createdAt',
  's.updatedAt',
] as const

export interface ServiceFields {
  key: string
  name: string
  description: string | null
  ownerTeamId: string | null
  escalationPolicyId: string | null
  tier: number | null
  tags: string[]
  links: Record<string, string>
  aliases: string[]
}

const returned = [
  'id',
  'key',
  'name',
  'description',
  'ownerTeamId',
  'escalationPolicyId',
  'tier',
  'tags',
  'links',
  'aliases',
  'createdBy',
  'createdAt',
  'updatedAt',
] as const

const servicesOf = (db: Executor, organizationId: string) =>
  db.selectFrom('divinux.services as s').where('s.organizationId', '=', organizationId)

/** Services by key; `q` matches keys, names and aliases containing it, `tag` those carrying it. */
export async function listServices(db: Executor, organizationId: string, filter: { q?: string; tag?: string }, page: Page) {
  let base = servicesOf(db, organizationId)
  if (filter.q) {
    const q = filter.q
    base = base.where((eb) =>
      eb.or([
        eb('s.key', 'ilike', containing(q)),
        eb('s.name', 'ilike', containing(q)),
        sql<boolean>`exists (select 1 from unnest(s.aliases) alias where alias ilike ${containing(q)})`,
      ]),
    )
  }
  if (filter.tag) base = base.where(sql<boolean>`${filter.tag} = any(s.tags)`)
  return paged(base, (rows) => rows.select(columns).orderBy('s.key').orderBy('s.id'), page)
}

export async function findService(db: Executor, organizationId: string, serviceId: string, forUpdate = false) {
  const query = servicesOf(db, organizationId).select(columns).where('s.id', '=', serviceId)
  return forUpdate ? query.forUpdate().executeTakeFirst() : query.executeTakeFirst()
}

export type ServiceRow = NonNullable<Awaited<ReturnType<typeof findService>>>

/**
 * The services that answer to one of `names` (lower-case), by key or alias: how an alert's
 * `service` finds its service (`checkout`, `checkout-api` and `svc-checkout` may be one).
 */
const answeringTo = (names: string[]) => sql<boolean>`(s.key = any(${sql.val(names)}::text[]) or s.aliases && ${sql.val(names)}::text[])`

/** Which of `names` (keys or aliases) another service of the organization holds already: name → its key. */
export async function namesTaken(db: Executor, organizationId: string, names: string[], exceptServiceId?: string) {
  const taken = new Map<string, string>()
  if (names.length === 0) return taken
  const rows = await servicesOf(db, organizationId)
    .select(['s.key', 's.aliases'])
    .where(answeringTo(names))
    .$if(exceptServiceId !== undefined, (query) => query.where('s.id', '<>', exceptServiceId!))
    .execute()
  for (const row of rows) for (const name of [row.key, ...row.aliases]) if (names.includes(name)) taken.set(name, row.key)
  return taken
}

/** The organization's services among `keys` (lower-case): key → id. */
export async function serviceIdsByKey(db: Executor, organizationId: string, keys: string[]): Promise<Map<string, string>> {
  if (keys.length === 0) return new Map()
  const rows = await servicesOf(db, organizationId).select(['s.id', 's.key']).where('s.key', 'in', keys).execute()
  return new Map(rows.map((row) => [row.key, row.id]))
}

/** The organization's services among `keys` (lower-case), whole: key → row. */
export async function servicesByKey(db: Executor, organizationId: string, keys: string[]): Promise<Map<string, ServiceRow>> {
  if (keys.length === 0) return new Map()
  const rows = await servicesOf(db, organizationId).select(columns).where('s.key', 'in', keys).forUpdate().execute()
  return new Map(rows.map((row) => [row.key, row]))
}

/** The service that answers to `name` (by key or alias, any case), if any. */
export async function serviceAnsweringTo(db: Executor, organizationId: string, name: string) {
  return servicesOf(db, organizationId)
    .select(['s.id', 's.key'])
    .where(answeringTo([name.toLowerCase()]))
    .executeTakeFirst()
}

export async function insertService(db: Executor, organizationId: string, fields: ServiceFields, createdBy: string) {
  return db
    .insertInto('divinux.services')
    .values({ organizationId, ...fields, links: fields.links as Json, createdBy })
    .returning(returned)
    .executeTakeFirstOrThrow()
}

export async function updateService(db: Executor, organizationId: string, serviceId: string, fields: Partial<ServiceFields>) {
  const { links, ...rest } = fields
  return db
    .updateTable('divinux.services')
    .set({ ...rest, ...(links ? { links: links as Json } : {}), updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', serviceId)
    .returning(returned)
    .executeTakeFirstOrThrow()
}

export async function deleteService(db: Executor, organizationId: string, serviceId: string) {
  await db.deleteFrom('divinux.services').where('organizationId', '=', organizationId).where('id', '=', serviceId).execute()
}

/** What a page says of a catalog service. */
export interface CatalogEntry {
  key: string
  tier: number | null
  ownerTeam: string | null
  runbook: string | null
}

/**
 * What a page says of the service an alert names (by key or alias): its key, tier, owner team's
 * name and runbook; undefined when the catalog does not know the name.
 */
export async function catalogEntryOf(db: Executor, organizationId: string, name: string) {
  return (await catalogEntriesOf(db, organizationId, [name])).get(name.toLowerCase())
}

/** `catalogEntryOf` for many names in one statement (a starter's batch of pages): lower-cased name → entry, known names only. */
export async function catalogEntriesOf(db: Executor, organizationId: string, names: string[]) {
  const lower = [...new Set(names.map((name) => name.toLowerCase()))]
  const entries = new Map<string, CatalogEntry>()
  if (lower.length === 0) return entries
  const rows = await servicesOf(db, organizationId)
    .leftJoin('divinux.teams as t', 't.id', 's.ownerTeamId')
    .select(['s.key', 's.aliases', 's.tier', 's.links', 't.name as ownerTeam'])
    .where(answeringTo(lower))
    .execute()
  for (const row of rows) {
    const links = row.links as Record<string, string | undefined>
    const entry = { key: row.key, tier: row.tier, ownerTeam: row.ownerTeam, runbook: links.runbook ?? null }
    for (const name of [row.key, ...row.aliases]) if (lower.includes(name)) entries.set(name, entry)
  }
  return entries
}

/**
 * The names given, and every other name (key and aliases) of the catalog services they answer to:
 * what status page components follow for them (`svc-checkout` finds the component following
 * `checkout`). In the order given, then the catalog's.
 */
export async function withCatalogNames(db: Executor, organizationId: string, names: string[]): Promise<string[]> {
  if (names.length === 0) return []
  const rows = await servicesOf(db, organizationId)
    .select(['s.key', 's.aliases'])
    .where(answeringTo([...new Set(names.map((name) => name.toLowerCase()))]))
    .execute()
  return [...new Set([...names, ...rows.flatMap((row) => [row.key, ...row.aliases])])]
}

/** Every name (key and aliases) the organization's services answer to. */
export async function catalogNames(db: Executor, organizationId: string): Promise<Set<string>> {
  const rows = await servicesOf(db, organizationId).select(['s.key', 's.aliases']).execute()
  return new Set(rows.flatMap((row) => [row.key, ...row.aliases]))
}

/**
 * The organizations whose catalog routes alerts (a service of theirs names an escalation policy),
 * as a relation of `organization_id`: intake's configs escalate their alerts even without a policy
 * of their own, so the escalator can route them by their service (paging/escalator.ts).
 */
export const catalogRoutedOrganizations = sql`select organization_id from divinux.services where escalation_policy_id is not null`

/** The escalation policy of the service each of `names` names (by key or alias), for routing: lower-cased name → policy. */
export async function servicePoliciesOf(db: Executor, organizationId: string, names: string[]) {
  const lower = [...new Set(names.map((name) => name.toLowerCase()))]
  const policies = new Map<string, string>()
  if (lower.length === 0) return policies
  const rows = await servicesOf(db, organizationId)
    .select(['s.key', 's.aliases', 's.escalationPolicyId'])
    .where('s.escalationPolicyId', 'is not', null)
    .where(answeringTo(lower))
    .execute()
  for (const row of rows)
    for (const name of [row.key, ...row.aliases]) if (lower.includes(name)) policies.set(name, row.escalationPolicyId!)
  return policies
}
