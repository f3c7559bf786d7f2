import { Type, type Static } from 'typebox'
import { Compile } from 'typebox/compile'

// The `track` call of Segment's spec (https://segment.com/docs/connections/spec/track/), which
// product teams' libraries already send: an event name, properties, a timestamp, a message id
// that makes a retry harmless, and a user or anonymous id. The organization is the path's.

/** Events in one batch, at most (Segment's batch limit is by bytes; ours is both). */
export const MAX_BATCH_EVENTS = 500
/** Bytes of one batch request body, at most. */
export const MAX_BATCH_BYTES = 512_000
/** Bytes of one event's `properties` once serialized, at most: larger events are refused, not cut. */
export const MAX_PROPERTIES_BYTES = 8_192
/** How far ahead of the server's clock a timestamp may be (clients' clocks drift). */
export const MAX_CLOCK_AHEAD_MS = 86_400_000

export const TrackMessage = Type.Object(
  {
    type: Type.Optional(Type.Literal('track', { description: 'Only `track` calls are stored' })),
    event: Type.String({ minLength: 1, maxLength: 200, description: 'What happened, as `Object Action` ("Check Created")' }),
    properties: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: `At most ${MAX_PROPERTIES_BYTES} bytes as JSON` })),
    timestamp: Type.Optional(Type.String({ format: 'date-time', description: 'When it happened; unset: when received' })),
    messageId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'Unique per event: a retry with the same id and timestamp is stored once' }),
    ),
    userId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The signed-in user’s id, when given' })),
    anonymousId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    context: Type.Optional(
      Type.Object(
        {
          library: Type.Optional(Type.Object({ name: Type.String({ maxLength: 100 }), version: Type.String({ maxLength: 50 }) })),
          declaredPii: Type.Optional(
            Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
              maxItems: 50,
              description: 'Property names whose values are kept even when they look like e-mail addresses or tokens',
            }),
          ),
        },
        { additionalProperties: true, description: 'Only `library` and `declaredPii` are kept' },
      ),
    ),
  },
  { title: 'TrackMessage', additionalProperties: true },
)
export type TrackMessage = Static<typeof TrackMessage>

const validator = Compile(TrackMessage)

/** The first problem with a message, as `path: message`, or undefined when it is a valid `track`. */
export function problemOf(message: unknown): string | undefined {
  if (validator.Check(message)) return undefined
  const [first] = validator.Errors(message)
  if (!first) return 'not a track message'
  const path = first.instancePath ? first.instancePath.slice(1) : ''
  const required = (first.params as { requiredProperties?: string[] }).requiredProperties
  if (first.keyword === 'required' && required?.length) return `${[path, required[0]].filter(Boolean).join('/')}: is required`
  return `${path || '(event)'}: ${first.message}`
}
