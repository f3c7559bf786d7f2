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

export const SubscriptionEntry = Type.Object({
  source: Type.Union([Type.Literal('organization'), Type.Literal('legacy')]),
  organizationId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  product: Type.String({ description: 'statuspages, alerting, synthetics or bundle' }),
  plan: Type.String(),
  status: Type.String({ description: 'The payment provider status: active, trialing, past_due, canceled, ...' }),
  currentPeriodEnd: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
})

export const UserSubscription = Type.Object(
  {
    status: Type.Union([Type.Literal('active'), Type.Literal('inactive'), Type.Literal('none')], {
      description: 'active when any subscription is active or trialing; none when there is none',
    }),
    subscriptions: Type.Array(SubscriptionEntry),
  },
  { title: 'UserSubscription' },
)
