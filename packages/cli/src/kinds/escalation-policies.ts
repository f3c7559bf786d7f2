import { Type, type Static } from 'typebox'
import { answered, everyPage, PAGE } from '../api.js'
import type { Named } from '../context.js'
import type { Context, Kind, Reference } from '../kind.js'
import { Email, Name, NullableText } from './fields.js'

/** A target names its kind and what it is: `{schedule: Primary}`, `{user: alice@example.com}`. */
const targetKinds = { user: 'people', schedule: 'schedules', team: 'teams', chat: 'chat', webhook: 'webhooks' } as const satisfies Record<
  string,
  Named
>
type TargetKind = keyof typeof targetKinds
const one = (kind: TargetKind, value: ReturnType<typeof Type.String>, description: string) =>
  Type.Object({ [kind]: value }, { additionalProperties: false, description })
const Target = Type.Union([
  one('user', Email, 'That person, by e-mail'),
  one('schedule', Name, 'Whoever is on call in the schedule then'),
  one('team', Name, 'The team’s responders'),
  one('chat', Name, 'A chat integration, by name'),
  one('webhook', Name, 'An outbound webhook, by name'),
])
type Target = Partial<Record<TargetKind, string>>

const Policy = Type.Object(
  {
    name: Name,
    description: NullableText(1000),
    repeat: Type.Integer({ minimum: 0, default: 0 }),
    ackTimeoutMinutes: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { default: null }),
    steps: Type.Array(
      Type.Object(
        { delayMinutes: Type.Integer({ minimum: 1 }), targets: Type.Array(Target, { minItems: 1 }) },
        { additionalProperties: false },
      ),
      { minItems: 1 },
    ),
  },
  { additionalProperties: false, title: 'EscalationPolicy' },
)
type Policy = Static<typeof Policy>

const kindOf = (target: Target) => Object.keys(target)[0] as TargetKind
const nameOf = (target: Target) => {
  const kind = kindOf(target)
  return kind === 'user' ? target.user!.toLowerCase() : target[kind]!
}

async function body(names: Context['names'], policy: Policy) {
  const steps = await Promise.all(
    policy.steps.map(async (step) => ({
      delayMinutes: step.delayMinutes,
      targets: await Promise.all(
        step.targets.map(async (target) => ({ type: kindOf(target), id: await names.id(targetKinds[kindOf(target)], nameOf(target)) })),
      ),
    })),
  )
  return { name: policy.name, description: policy.description, repeat: policy.repeat, ackTimeoutMinutes: policy.ackTimeoutMinutes, steps }
}

/** Escalation policies: steps of targets named by e-mail or name. */
export const escalationPolicies: Kind<Policy> = {
  noun: 'escalation policy',
  file: 'escalation-policies.yaml',
  key: 'escalationPolicies',
  entry: Policy,
  names: 'escalationPolicies',
  identity: (policy) => policy.name,
  normal: (policy) => ({
    ...policy,
    steps: policy.steps.map((step) => ({ ...step, targets: step.targets.map((target) => ({ [kindOf(target)]: nameOf(target) })) })),
  }),
  references: (policy) =>
    policy.steps.flatMap((step, index) =>
      step.targets.map((target, at): Reference => ({
        at: ['steps', index, 'targets', at, kindOf(target)],
        to: targetKinds[kindOf(target)],
        name: nameOf(target),
      })),
    ),

  async live({ connection: { api, orgId }, names }) {
    const rows = await everyPage(
      (page) => api.GET('/api/v1/organizations/{orgId}/escalation-policies', { params: { path: { orgId }, query: { page, limit: PAGE } } }),
      'reading the escalation policies',
    )
    return Promise.all(
      rows.map(async (row) => {
        const policy = await answered(
          api.GET('/api/v1/organizations/{orgId}/escalation-policies/{policyId}', { params: { path: { orgId, policyId: row.id } } }),
          `reading the escalation policy ${row.name}`,
        )
        const steps = await Promise.all(
          policy.steps.map(async (step) => ({
            delayMinutes: step.delayMinutes,
            targets: await Promise.all(
              step.targets.map(async (target) => ({ [target.type]: await names.name(targetKinds[target.type], target.id) })),
            ),
          })),
        )
        return {
          id: row.id,
          entry: {
            name: policy.name,
            description: policy.description,
            repeat: policy.repeat,
            ackTimeoutMinutes: policy.ackTimeoutMinutes,
            steps,
          },
        }
      }),
    )
  },

  async create({ connection: { api, orgId }, names }, policy) {
    await answered(
      api.POST('/api/v1/organizations/{orgId}/escalation-policies', { params: { path: { orgId } }, body: await body(names, policy) }),
      `creating the escalation policy ${policy.name}`,
    )
  },

  async update({ connection: { api, orgId }, names }, live, policy) {
    await answered(
      api.PATCH('/api/v1/organizations/{orgId}/escalation-policies/{policyId}', {
        params: { path: { orgId, policyId: live.id } },
        body: await body(names, policy),
      }),
      `changing the escalation policy ${policy.name}`,
    )
  },

  async remove({ connection: { api, orgId } }, live) {
    await answered(
      api.DELETE('/api/v1/organizations/{orgId}/escalation-policies/{policyId}', { params: { path: { orgId, policyId: live.id } } }),
      `deleting the escalation policy ${live.entry.name}`,
    )
  },
}
