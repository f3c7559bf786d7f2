import { Type, type Static } from 'typebox'
import { answered } from '../api.js'
import type { Kind } from '../kind.js'
import { NullableText } from './fields.js'

const Severity = Type.Object(
  {
    key: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,19}$', description: 'What incidents and Slack call it, e.g. SEV1' }),
    name: Type.String({ minLength: 1, maxLength: 60 }),
    description: NullableText(500),
    priority: Type.Enum(['P1', 'P2', 'P3', 'P4'], { description: 'The alert priority its incidents page at' }),
  },
  { additionalProperties: false },
)
const SeveritySet = Type.Object(
  { severities: Type.Array(Severity, { minItems: 2, maxItems: 10, description: 'The most severe first' }) },
  { additionalProperties: false, title: 'IncidentSeverities' },
)
type SeveritySet = Static<typeof SeveritySet>

/** The organization's incident severities: one ordered list, replaced whole (SEV1 to SEV4 until set). */
export const incidentSeverities: Kind<SeveritySet> = {
  noun: 'incident severities',
  file: 'incident-severities.yaml',
  key: 'incidentSeverities',
  entry: SeveritySet,
  singleton: true,
  whole: ['severities'],
  identity: () => 'the organization’s',
  references: () => [],

  async live({ connection: { api, orgId } }) {
    const set = await answered(
      api.GET('/api/v1/organizations/{orgId}/incident-severities', { params: { path: { orgId } } }),
      'reading the incident severities',
    )
    const severities = set.data.map(({ key, name, description, priority }) => ({ key, name, description, priority }))
    return [{ id: orgId, entry: { severities } }]
  },

  async create(context, set) {
    await this.update(context, { id: context.connection.orgId, entry: set }, set)
  },

  async update({ connection: { api, orgId } }, _live, set) {
    await answered(
      api.PUT('/api/v1/organizations/{orgId}/incident-severities', { params: { path: { orgId } }, body: { severities: set.severities } }),
      'replacing the incident severities',
    )
  },

  async remove() {
    // The organization always has severities: a file that says nothing of them leaves them as they are.
  },
}
