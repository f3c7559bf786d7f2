import { Type, type Static } from 'typebox'
import { NullableString, Timestamp } from '@svc/http'

export const teamRoles = ['manager', 'responder', 'observer'] as const
export type TeamRole = (typeof teamRoles)[number]

const Role = Type.Enum(teamRoles, { description: 'manager (runs the team), responder (is paged), observer (is informed)' })
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' })
const Description = NullableString({ maxLength: 1000 })

export const TeamParams = Type.Object({ orgId: Type.String(), teamId: Type.String() })
export const TeamMemberParams = Type.Object({ orgId: Type.String(), teamId: Type.String(), userId: Type.String() })

export const TeamMember = Type.Object(
  { userId: Type.String({ format: 'uuid' }), email: Type.String(), role: Role, addedAt: Timestamp },
  { title: 'TeamMember' },
)

const teamFields = {
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  createdBy: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}

export const TeamSummary = Type.Object({ ...teamFields, memberCount: Type.Integer() }, { title: 'TeamSummary' })
export const Team = Type.Object({ ...teamFields, members: Type.Array(TeamMember) }, { title: 'Team' })

export const NewMember = Type.Object({ userId: Type.String({ format: 'uuid' }), role: Role }, { additionalProperties: false })
export type NewMember = Static<typeof NewMember>

export const CreateTeam = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    members: Type.Optional(Type.Array(NewMember, { maxItems: 200, description: 'Active members of the organization' })),
  },
  { additionalProperties: false },
)

export const UpdateTeam = Type.Object(
  { name: Type.Optional(Name), description: Type.Optional(Description) },
  { additionalProperties: false, minProperties: 1 },
)

export const PutTeamMember = Type.Object({ role: Role }, { additionalProperties: false })

export const TeamQuery = Type.Object({
  page: Type.Integer({ minimum: 1, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Names containing this, any letter case' })),
})
