import { sql } from 'kysely'
import type { Executor, Json } from '@svc/db'

export const agentNames = ['investigator', 'runbook', 'comms', 'oncall'] as const
export type AgentName = (typeof agentNames)[number]
export type AgentSwitches = Record<AgentName, boolean>

const ALL_ON: AgentSwitches = { investigator: true, runbook: true, comms: true, oncall: true }

/** Which agents the organization runs (all of them until it says otherwise). */
export async function agentSwitches(db: Executor, organizationId: string): Promise<AgentSwitches> {
  const row = await db
    .selectFrom('divinux.agentSettings')
    .select(agentNames)
    .where('organizationId', '=', organizationId)
    .executeTakeFirst()
  return row ?? { ...ALL_ON }
}

export async function putAgentSwitches(trx: Executor, organizationId: string, switches: AgentSwitches, userId: string) {
  await trx
    .insertInto('divinux.agentSettings')
    .values({ organizationId, ...switches, updatedBy: userId })
    .onConflict((oc) => oc.column('organizationId').doUpdateSet({ ...switches, updatedBy: userId, updatedAt: sql<Date>`now()` }))
    .execute()
}

/** An agent's output for an investigation; a redelivered job finds it there and changes nothing. */
export async function recordAgentOutput(
  trx: Executor,
  organizationId: string,
  analysisId: string,
  agent: Exclude<AgentName, 'investigator'>,
  inputs: Json,
  output: Json,
) {
  await trx
    .insertInto('divinux.agentOutputs')
    .values({ organizationId, analysisId, agent, inputs, output })
    .onConflict((oc) => oc.columns(['analysisId', 'agent']).doNothing())
    .execute()
}

export async function agentOutputsOf(db: Executor, organizationId: string, analysisId: string) {
  return db
    .selectFrom('divinux.agentOutputs')
    .select(['id', 'agent', 'inputs', 'output', 'createdAt'])
    .where('organizationId', '=', organizationId)
    .where('analysisId', '=', analysisId)
    .orderBy('agent')
    .execute()
}
