import { Type, type Static } from 'typebox'
import { answered, everyPage, PAGE } from '../api.js'
import type { Kind } from '../kind.js'
import { Email, Name, NullableText } from './fields.js'

const Member = Type.Object(
  { email: Email, role: Type.Enum(['manager', 'responder', 'observer'], { default: 'responder' }) },
  { additionalProperties: false },
)
const Team = Type.Object(
  {
    name: Name,
    description: NullableText(1000),
    members: Type.Array(Member, { default: [], description: 'Active members of the organization, by e-mail' }),
  },
  { additionalProperties: false, title: 'Team' },
)
type Team = Static<typeof Team>

const byEmail = (a: { email: string }, b: { email: string }) => a.email.localeCompare(b.email)

/** Teams with their members (by e-mail) and each one's team role. */
export const teams: Kind<Team> = {
  noun: 'team',
  file: 'teams.yaml',
  key: 'teams',
  entry: Team,
  names: 'teams',
  identity: (team) => team.name,
  normal: (team) => ({
    ...team,
    members: team.members.map((member) => ({ ...member, email: member.email.toLowerCase() })).sort(byEmail),
  }),
  references: (team) =>
    team.members.map((member, index) => ({ at: ['members', index, 'email'], to: 'people', name: member.email.toLowerCase() })),

  async live({ connection: { api, orgId } }) {
    const rows = await everyPage(
      (page) => api.GET('/api/v1/organizations/{orgId}/teams', { params: { path: { orgId }, query: { page, limit: PAGE } } }),
      'reading the teams',
    )
    return Promise.all(
      rows.map(async (row) => {
        const team = await answered(
          api.GET('/api/v1/organizations/{orgId}/teams/{teamId}', { params: { path: { orgId, teamId: row.id } } }),
          `reading the team ${row.name}`,
        )
        const members = team.members.map((member) => ({ email: member.email.toLowerCase(), role: member.role })).sort(byEmail)
        return { id: row.id, entry: { name: team.name, description: team.description, members } }
      }),
    )
  },

  async create({ connection: { api, orgId }, names }, team) {
    const members = await Promise.all(
      team.members.map(async (member) => ({ userId: await names.id('people', member.email.toLowerCase()), role: member.role })),
    )
    await answered(
      api.POST('/api/v1/organizations/{orgId}/teams', {
        params: { path: { orgId } },
        body: { name: team.name, description: team.description, members },
      }),
      `creating the team ${team.name}`,
    )
  },

  async update({ connection: { api, orgId }, names }, live, team) {
    const path = { orgId, teamId: live.id }
    if (live.entry.name !== team.name || live.entry.description !== team.description)
      await answered(
        api.PATCH('/api/v1/organizations/{orgId}/teams/{teamId}', {
          params: { path },
          body: { name: team.name, description: team.description },
        }),
        `changing the team ${team.name}`,
      )
    const wanted = new Map(team.members.map((member) => [member.email.toLowerCase(), member.role]))
    for (const member of live.entry.members) {
      if (wanted.has(member.email)) continue
      const userId = await names.id('people', member.email)
      await answered(
        api.DELETE('/api/v1/organizations/{orgId}/teams/{teamId}/members/{userId}', { params: { path: { ...path, userId } } }),
        `removing ${member.email} from the team ${team.name}`,
      )
    }
    const had = new Map(live.entry.members.map((member) => [member.email, member.role]))
    for (const [email, role] of wanted) {
      if (had.get(email) === role) continue
      const userId = await names.id('people', email)
      await answered(
        api.PUT('/api/v1/organizations/{orgId}/teams/{teamId}/members/{userId}', { params: { path: { ...path, userId } }, body: { role } }),
        `making ${email} a ${role} of the team ${team.name}`,
      )
    }
  },

  async remove({ connection: { api, orgId } }, live) {
    await answered(
      api.DELETE('/api/v1/organizations/{orgId}/teams/{teamId}', { params: { path: { orgId, teamId: live.id } } }),
      `deleting the team ${live.entry.name}`,
    )
  },
}
