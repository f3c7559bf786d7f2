import type { FastifyReply } from 'fastify'

/**
 * The route's answer as its response schema serializes it, to keep (a kept answer is sent again
 * without serializing it again). The route's schema serializers produce strings.
 */
export function serializedAnswer(reply: FastifyReply, payload: unknown): string {
  return String(reply.serialize(payload))
}

/** Sends what `serializedAnswer` made, as it is: Fastify does not serialize a JSON string again. */
export function sendSerialized(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json)
}
