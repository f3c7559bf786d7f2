import { Type, type Static } from 'typebox'
import { answered } from '../api.js'
import type { Kind } from '../kind.js'

const Window = Type.Integer({ minimum: 1, maximum: 1440, description: 'Minutes' })
const windowed = <K extends string>(kind: K, description: string) =>
  Type.Object({ kind: Type.Literal(kind), windowMinutes: Window }, { additionalProperties: false, description })
const Rule = Type.Union([
  Type.Object({ kind: Type.Literal('fingerprint') }, { additionalProperties: false, description: 'The same fingerprint' }),
  Type.Object(
    { kind: Type.Literal('labels'), labels: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }), windowMinutes: Window },
    { additionalProperties: false, description: 'The same values of all these labels' },
  ),
  windowed('service', 'An alert of the same service'),
  windowed('deploy', 'After a deploy of its service or of one it depends on'),
  windowed('dependency', 'An alert of a service it depends on, or that depends on it'),
])
const RuleSet = Type.Object(
  { rules: Type.Array(Rule, { description: 'In any order; an empty list turns correlation off' }) },
  { additionalProperties: false, title: 'IncidentRules' },
)
type RuleSet = Static<typeof RuleSet>

/** The organization's correlation rules: one list, replaced whole (the defaults until set). */
export const incidentRules: Kind<RuleSet> = {
  noun: 'incident rules',
  file: 'incident-rules.yaml',
  key: 'incidentRules',
  entry: RuleSet,
  singleton: true,
  identity: () => 'the organization’s',
  references: () => [],

  async live({ connection: { api, orgId } }) {
    const set = await answered(
      api.GET('/api/v1/organizations/{orgId}/incident-rules', { params: { path: { orgId } } }),
      'reading the incident rules',
    )
    return [{ id: orgId, entry: { rules: set.rules as RuleSet['rules'] } }]
  },

  async create(context, set) {
    await this.update(context, { id: context.connection.orgId, entry: set }, set)
  },

  async update({ connection: { api, orgId } }, _live, set) {
    await answered(
      api.PUT('/api/v1/organizations/{orgId}/incident-rules', { params: { path: { orgId } }, body: { rules: set.rules } }),
      'replacing the incident rules',
    )
  },

  async remove() {
    // The organization always has rules: a file that says nothing of them leaves them as they are.
  },
}
