import { Type, type Static } from 'typebox'
import { priorities, type Priority } from '../../alerts/index.js'

const matcherFields = {
  priorities: Type.Optional(Type.Array(Type.Enum(priorities), { minItems: 1, uniqueItems: true })),
  services: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 50 })),
  labels: Type.Optional(
    Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Type.String({ maxLength: 500 }), {
      description: 'Every label given must have exactly this value',
    }),
  ),
}

/** Which alerts something applies to: every matcher given must hold; a list matches any of its values. */
export const Matchers = Type.Object(matcherFields, {
  additionalProperties: false,
  description: 'Every matcher given must hold (an empty match matches every alert)',
})
export type Matchers = Static<typeof Matchers>

/** Matchers that must narrow: at least one of them given. */
export const NarrowMatchers = Type.Object(matcherFields, {
  additionalProperties: false,
  minProperties: 1,
  description: 'At least one matcher; every matcher given must hold',
})

export const RoutingRule = Type.Object(
  { match: Matchers, escalationPolicyId: Type.String({ format: 'uuid' }) },
  { additionalProperties: false, title: 'RoutingRule' },
)
export type RoutingRule = Static<typeof RoutingRule>

export const RoutingRules = Type.Array(RoutingRule, {
  maxItems: 50,
  description: 'In order, the first that matches an alert chooses its policy; no match: the config’s escalationPolicyId',
})

export interface MatchedAlert {
  priority: string
  service: string | null
  labels: Record<string, string>
}

export function matchesAlert(match: Matchers, alert: MatchedAlert): boolean {
  if (match.priorities && !match.priorities.includes(alert.priority as Priority)) return false
  if (match.services && (alert.service === null || !match.services.includes(alert.service))) return false
  return Object.entries(match.labels ?? {}).every(([key, value]) => alert.labels[key] === value)
}

/** The policy an alert escalates with: the first matching rule's, else the fallback (null: it pages no one). */
export function routeAlert(
  rules: RoutingRule[],
  fallback: string | null,
  alert: MatchedAlert,
): { policyId: string | null; rule: number | null } {
  const index = rules.findIndex(({ match }) => matchesAlert(match, alert))
  const rule = rules[index]
  return rule ? { policyId: rule.escalationPolicyId, rule: index } : { policyId: fallback, rule: null }
}
