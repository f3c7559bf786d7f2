import { Type, type Static } from 'typebox'

/** `request.user`: exactly the spec's "Authenticated user" table (isEmployee is read separately). */
export const AuthenticatedUserSchema = Type.Object(
  {
    userId: Type.String({ format: 'uuid', description: 'Platform user id (core.users.id)' }),
    email: Type.String(),
    groups: Type.Array(Type.String(), { description: 'Identity-provider groups' }),
    isPlatformAdmin: Type.Boolean({ description: 'In the PlatformAdmins group' }),
    originalUserId: Type.Optional(Type.String({ format: 'uuid', description: 'Only when impersonating: the admin' })),
    originalEmail: Type.Optional(Type.String({ description: 'Only when impersonating: the admin' })),
  },
  { title: 'AuthenticatedUser' },
)
export type AuthenticatedUser = Static<typeof AuthenticatedUserSchema>

/** Claims of an ID token as issued by a Cognito-style user pool. */
export interface IdTokenClaims {
  sub: string
  iss: string
  aud: string | string[]
  exp: number
  email?: string
  token_use?: string
  [claim: string]: unknown
}

/** What the platform knows about the acting user beyond the token. */
export interface Account {
  id: string
  email: string
  displayName: string | null
  timeZone: string | null
  isEmployee: boolean
  platformRole: PlatformRole | null
}

export const platformRoles = ['GLOBAL_ADMIN', 'ADMIN'] as const
export type PlatformRole = (typeof platformRoles)[number]

export const PLATFORM_ADMINS_GROUP = 'PlatformAdmins'

/** Groups claim: a JSON array of strings; anything else counts as no groups. */
export function groupsFrom(claim: unknown): string[] {
  return Array.isArray(claim) ? claim.filter((group): group is string => typeof group === 'string') : []
}
