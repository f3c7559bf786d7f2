import type { FastifyRequest } from 'fastify'
import { SCIM_BASE_PATH } from '@svc/auth'
import type { JsonObject } from './schema/canonical.js'

/** Builds absolute resource URLs from the address the request came in on. */
export interface ResourceLocation {
  of(endpoint: 'Users' | 'Groups', id: string): string
}

/** The SCIM base URL: under PUBLIC_PLATFORM_URL when set, else as the client reached it. */
export function scimBaseUrl(request: FastifyRequest): string {
  return `${request.server.publicBaseUrl(request)}${SCIM_BASE_PATH}`
}

export function locationFor(request: FastifyRequest): ResourceLocation {
  const base = scimBaseUrl(request)
  return { of: (endpoint, id) => `${base}/${endpoint}/${id}` }
}

/** A weak entity tag that changes with every write: the time of the last modification. */
export function versionOf(updatedAt: Date): string {
  return `W/"${updatedAt.getTime().toString(36)}"`
}

export function resourceMeta(
  resourceType: 'User' | 'Group',
  row: { id: string; createdAt: Date; updatedAt: Date },
  location: ResourceLocation,
): JsonObject {
  return {
    resourceType,
    created: row.createdAt.toISOString(),
    lastModified: row.updatedAt.toISOString(),
    location: location.of(resourceType === 'User' ? 'Users' : 'Groups', row.id),
    version: versionOf(row.updatedAt),
  }
}
