import { sql } from 'kysely'
import { containing, paged, type Executor, type Page } from '@svc/db'
import type { TeamRole } from './schemas.js'

const teamColumns = ['t.id', 't.name', 't.description', 't.createdBy', 't.createdAt', 't.updatedAt'] as const
const returnedColumns = ['id', 'name', 'description', 'createdBy', 'createdAt', 'updatedAt'] as const

function teamsOf(db: Executor, organizationId: string) {
  return db.selectFrom('divinux.teams as t').where('t.organizationId', '=', organizationId)
}

/** Teams by name (then id), with how many members each has; `q` matches names containing it. */
export async function listTeams(db: Executor, organizationId: string, q: string | undefined, page: Page) {
  const base = q ? teamsOf(db, organizationId).where('t.name', 'ilike', containing(q)) : teamsOf(db, organizationId)
  return paged(
    base,
    (rows) =>
      rows
        .select([
          ...teamColumns,
          (eb) =>
            eb
              .selectFrom('divinux.teamMembers as m')
              .select(sql<number>`count(*)::int`.as('count'))
              .whereRef('m.teamId', '=', 't.id')
              .as('memberCount'),
        ])
        .orderBy(sql`lower(t.name)`)
        .orderBy('t.id'),
    page,
  )
}

export async function findTeam(db: Executor, organizationId: string, teamId: string, forUpdate = false) {
  const query = teamsOf(db, organizationId).select(teamColumns).where('t.id', '=', teamId)
  return forUpdate ? query.forUpdate().executeTakeFirst() : query.executeTakeFirst()
}

export type TeamRow = NonNullable<Awaited<ReturnType<typeof findTeam>>>

function membersOfTeam(db: Executor, organizationId: string, teamId: string) {
  return db
    .selectFrom('divinux.teamMembers as m')
    .innerJoin('core.users as u', 'u.id', 'm.userId')
    .select(['m.userId', 'u.email', 'm.role', 'm.createdAt'])
    .where('m.organizationId', '=', organizationId)
    .where('m.teamId', '=', teamId)
}

/** A team's members with their e-mail addresses, by e-mail. */
export async function teamMembers(db: Executor, organizationId: string, teamId: string) {
  return membersOfTeam(db, organizationId, teamId).orderBy('u.email').orderBy('m.userId').execute()
}

/** One member of a team. */
export async function findTeamMember(db: Executor, organizationId: string, teamId: string, userId: string) {
  return membersOfTeam(db, organizationId, teamId).where('m.userId', '=', userId).executeTakeFirst()
}

export type TeamMemberRow = Awaited<ReturnType<typeof teamMembers>>[number]

/** Whether a team of this name (any letter case) exists in the organization, other than `exceptId`. */
export async function teamNameTaken(db: Executor, organizationId: string, name: string, exceptId?: string) {
  let query = teamsOf(db, organizationId)
    .select('t.id')
    .where(sql`lower(t.name)`, '=', name.toLowerCase())
  if (exceptId) query = query.where('t.id', '<>', exceptId)
  return (await query.executeTakeFirst()) !== undefined
}

export async function insertTeam(
  db: Executor,
  team: { organizationId: string; name: string; description: string | null; createdBy: string },
): Promise<TeamRow> {
  return db.insertInto('divinux.teams').values(team).returning(returnedColumns).executeTakeFirstOrThrow()
}

export async function updateTeam(
  db: Executor,
  organizationId: string,
  teamId: string,
  change: { name?: string; description?: string | null },
) {
  return db
    .updateTable('divinux.teams')
    .set({ ...change, updatedAt: sql<Date>`now()` })
    .where('organizationId', '=', organizationId)
    .where('id', '=', teamId)
    .returning(returnedColumns)
    .executeTakeFirst()
}

export async function deleteTeam(db: Executor, organizationId: string, teamId: string) {
  return db
    .deleteFrom('divinux.teams')
    .where('organizationId', '=', organizationId)
    .where('id', '=', teamId)
    .returning('id')
    .executeTakeFirst()
}

/** Adds the user, or changes their role; answers the role before (undefined for a new member). */
export async function putTeamMember(db: Executor, organizationId: string, teamId: string, userId: string, role: TeamRole) {
  const before = await db
    .selectFrom('divinux.teamMembers')
    .select('role')
    .where('organizationId', '=', organizationId)
    .where('teamId', '=', teamId)
    .where('userId', '=', userId)
    .forUpdate()
    .executeTakeFirst()
  await db
    .insertInto('divinux.teamMembers')
    .values({ teamId, organizationId, userId, role })
    .onConflict((oc) => oc.columns(['teamId', 'userId']).doUpdateSet({ role }))
    .execute()
  return before?.role
}

export async function removeTeamMember(db: Executor, organizationId: string, teamId: string, userId: string) {
  return db
    .deleteFrom('divinux.teamMembers')
    .where('organizationId', '=', organizationId)
    .where('teamId', '=', teamId)
    .where('userId', '=', userId)
    .returning('role')
    .executeTakeFirst()
}

/** Of the given ids, those naming teams of the organization. */
export async function teamsAmong(db: Executor, organizationId: string, teamIds: string[]): Promise<Set<string>> {
  if (teamIds.length === 0) return new Set()
  const rows = await teamsOf(db, organizationId).select('t.id').where('t.id', 'in', teamIds).execute()
  return new Set(rows.map((row) => row.id))
}

/** The members of the given teams with the team role responder: who a team target pages. */
export async function teamResponders(db: Executor, organizationId: string, teamIds: string[]) {
  if (teamIds.length === 0) return []
  return db
    .selectFrom('divinux.teamMembers')
    .select(['teamId', 'userId'])
    .where('organizationId', '=', organizationId)
    .where('teamId', 'in', teamIds)
    .where('role', '=', 'responder')
    .orderBy('createdAt')
    .execute()
}

/** The organization's teams by name, lower-cased: how an imported catalog's owner finds its team. */
export async function teamIdsByName(db: Executor, organizationId: string): Promise<Map<string, string>> {
  const rows = await db.selectFrom('divinux.teams').select(['id', 'name']).where('organizationId', '=', organizationId).execute()
  return new Map(rows.map((row) => [row.name.toLowerCase(), row.id]))
}
