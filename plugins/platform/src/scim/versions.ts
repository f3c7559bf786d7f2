import type { FastifyReply, FastifyRequest } from 'fastify'
import { ScimError } from './errors.js'
import { versionOf } from './resource-meta.js'

/** `If-Match` on a write (RFC 7644 §3.14): a stale version is a 412 and changes nothing. */
export function assertCurrentVersion(request: FastifyRequest, updatedAt: Date): void {
  const expected = request.headers['if-match']
  if (expected === undefined || expected.trim() === '*') return
  const current = versionOf(updatedAt)
  const strip = (tag: string) => tag.trim().replace(/^W\//, '')
  if (!expected.split(',').some((tag) => strip(tag) === strip(current))) {
    throw new ScimError(412, `the resource changed: its version is now ${current}`)
  }
}

/** The `ETag` header of a single resource, from its `meta.version`. */
export function sendVersion(reply: FastifyReply, updatedAt: Date): void {
  reply.header('etag', versionOf(updatedAt))
}
