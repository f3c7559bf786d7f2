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
  /** The ID token's profile claims at the last sign-in. */
  name: string | null
  givenName: string | null
  familyName: string | null
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

/** `email_verified` as Cognito sends it: a boolean, or the string "true" in older pools. */
export function emailVerifiedIn(claims: IdTokenClaims): boolean {
  return claims.email_verified === true || claims.email_verified === 'true'
}

const PROFILE_CLAIMS = [
  ['name', 'name'],
  ['given_name', 'givenName'],
  ['family_name', 'familyName'],
] as const

export type ProfileClaims = Partial<Record<(typeof PROFILE_CLAIMS)[number][1], string>>

/** The token's profile claims that are non-empty strings, at most 200 characters each. */
export function profileClaimsIn(claims: IdTokenClaims): ProfileClaims {
  const profile: ProfileClaims = {}
  for (const [claim, field] of PROFILE_CLAIMS) {
    const value = claims[claim]
    if (typeof value === 'string' && value.trim() !== '') profile[field] = value.trim().slice(0, 200)
  }
  return profile
}
