import type { FastifyReply } from 'fastify'

/**
 * The route's answer as its response schema serializes it, encoded once, to keep: a kept answer
 * is sent again as these bytes, so neither serializing nor encoding to UTF-8 (nor measuring its
 * length in bytes) is paid again for each request that reads it.
 */
export function serializedAnswer(reply: FastifyReply, payload: unknown): Buffer {
  return Buffer.from(String(reply.serialize(payload)))
}

/** Sends what `serializedAnswer` made, as it is, with the JSON content type the route's answers have. */
export function sendSerialized(reply: FastifyReply, json: Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json)
}
