import { Type } from 'typebox'
import { AuthenticatedUserSchema, platformRoles } from '@svc/auth'

export const PlatformRoleOrNone = Type.Union([Type.Enum(platformRoles), Type.Null()], {
  description: 'GLOBAL_ADMIN and ADMIN pass every product-role check in organizations the user belongs to',
})

export const UserProfile = Type.Object(
  {
    ...AuthenticatedUserSchema.properties,
    isEmployee: Type.Boolean({ description: 'Read from the database' }),
    displayName: Type.Union([Type.String(), Type.Null()]),
    name: Type.Union([Type.String(), Type.Null()], { description: 'The identity provider’s `name` claim at the last sign-in' }),
    givenName: Type.Union([Type.String(), Type.Null()], { description: 'Its `given_name` claim' }),
    familyName: Type.Union([Type.String(), Type.Null()], { description: 'Its `family_name` claim' }),
    timeZone: Type.Union([Type.String(), Type.Null()], { description: 'IANA time zone, e.g. Europe/Berlin' }),
    platformRole: PlatformRoleOrNone,
  },
  { title: 'UserProfile' },
)

/** The fields a user may change on their own profile; anything else is refused. */
export const UserProfilePatch = Type.Object(
  {
    displayName: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()])),
    timeZone: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1 },
)
