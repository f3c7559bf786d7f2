import { sql } from 'kysely'
import { recordAudit, type AuditContext } from '@svc/audit'
import type { Database, Executor } from '@svc/db'
import type { MemberRemoved } from '@svc/events'
import { removeTargetEverywhere } from './policies/targets.js'
import { storedLayers } from './schedules/queries.js'
import type { Layer } from './schedules/rotation.js'

/** The queue alerting's copy of `member.removed` arrives on. */
export const MEMBER_REMOVED_QUEUE = 'alerting.member-removed'

const SYSTEM: AuditContext = { actor: { type: 'system' } }

async function isMember(db: Executor, organizationId: string, userId: string) {
  const row = await db
    .selectFrom('core.organizationMembers')
    .select('id')
    .where('organizationId', '=', organizationId)
    .where('userId', '=', userId)
    .executeTakeFirst()
  return row !== undefined
}

/**
 * A person who left the organization disappears from what alerting keeps of them, each change
 * audited as the system's: their turns in schedule layers, their current and future overrides,
 * their team memberships and the escalation steps naming them. A layer left with nobody pages
 * nobody; a step left with no targets says so on its policy. Idempotent (the event may come
 * twice), and a person added back before it is handled is left as they are.
 */
export async function forgetMember(database: Database, { organizationId, userId }: MemberRemoved): Promise<void> {
  await database.db.transaction().execute(async (trx) => {
    if (await isMember(trx, organizationId, userId)) return
    const audit = (
      entityType: string,
      entityId: string,
      action: string,
      before: Record<string, unknown>,
      after?: Record<string, unknown>,
    ) =>
      recordAudit(trx, SYSTEM, { organizationId, product: 'alerting', entityType, entityId, action, before, ...(after ? { after } : {}) })

    const rotating = await trx
      .selectFrom('divinux.schedules')
      .select(['id', 'layers'])
      .where('organizationId', '=', organizationId)
      .where(sql<boolean>`layers @> ${JSON.stringify([{ users: [userId] }])}::jsonb`)
      .forUpdate()
      .execute()
    for (const schedule of rotating) {
      const layers: Layer[] = storedLayers(schedule.layers)
      const after = layers.map((layer) => ({ ...layer, users: layer.users.filter((user) => user !== userId) }))
      await trx
        .updateTable('divinux.schedules')
        .set({ layers: sql`${JSON.stringify(after)}::jsonb`, updatedAt: sql<Date>`now()` })
        .where('id', '=', schedule.id)
        .execute()
      await audit('schedule', schedule.id, 'schedule.member_removed', { userId, layers }, { layers: after })
    }

    const overrides = await trx
      .deleteFrom('divinux.scheduleOverrides')
      .where('organizationId', '=', organizationId)
      .where('userId', '=', userId)
      .where('endsAt', '>', sql<Date>`now()`)
      .returning(['id', 'scheduleId', 'startsAt', 'endsAt'])
      .execute()
    for (const override of overrides) {
      await audit('schedule', override.scheduleId, 'schedule.override_deleted', {
        overrideId: override.id,
        userId,
        start: override.startsAt.toISOString(),
        end: override.endsAt.toISOString(),
      })
    }

    const memberships = await trx
      .deleteFrom('divinux.teamMembers')
      .where('organizationId', '=', organizationId)
      .where('userId', '=', userId)
      .returning(['teamId', 'role'])
      .execute()
    for (const membership of memberships) await audit('team', membership.teamId, 'team.member_removed', { userId, role: membership.role })

    await removeTargetEverywhere(trx, SYSTEM, organizationId, { type: 'user', id: userId })
  })
}
