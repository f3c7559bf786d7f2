import { Type } from 'typebox'
import { Timestamp } from '@svc/http'

export const contactTypes = ['email', 'sms', 'voice', 'push'] as const
export type ContactType = (typeof contactTypes)[number]

export const ContactParams = Type.Object({ contactId: Type.String() })
export const E164 = '^\\+[1-9][0-9]{6,14}$'

const PushSubscription = Type.Object(
  {
    endpoint: Type.String({ format: 'uri', maxLength: 1000, pattern: '^https://' }),
    keys: Type.Object({ p256dh: Type.String({ minLength: 1, maxLength: 200 }), auth: Type.String({ minLength: 1, maxLength: 100 }) }),
  },
  { description: 'A browser’s PushSubscription (its toJSON()): proven by the browser, so verified at once' },
)

export const CreateContactMethod = Type.Object(
  {
    type: Type.Enum(contactTypes),
    address: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: 320,
        description: 'An e-mail address, or an E.164 number (+4915112345678) for sms and voice',
      }),
    ),
    subscription: Type.Optional(PushSubscription),
    label: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { additionalProperties: false },
)

export const VerifyContactMethod = Type.Object(
  { code: Type.String({ pattern: '^[0-9]{6}$', description: 'The six digits sent to the address or number' }) },
  { additionalProperties: false },
)

export const ContactMethod = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    type: Type.Enum(contactTypes),
    address: Type.String({ description: 'For push: the subscription’s endpoint' }),
    label: Type.Union([Type.String(), Type.Null()]),
    verified: Type.Boolean(),
    verifiedAt: Type.Union([Timestamp, Type.Null()]),
    codeSentAt: Type.Union([Timestamp, Type.Null()], { description: 'When the last verification code was sent' }),
    codeExpiresAt: Type.Union([Timestamp, Type.Null()]),
    createdAt: Timestamp,
  },
  { title: 'ContactMethod' },
)
