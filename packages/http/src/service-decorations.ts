import type { FastifyRequest } from 'fastify'
import type { Database } from '@svc/db'
import type { JobQueue } from '@svc/jobs'

// What the service runtime decorates every service with, declared here (the package every
// surface builds on) so that a surface compiled on its own knows them.
declare module 'fastify' {
  interface FastifyInstance {
    database: Database
    jobs: JobQueue
    /**
     * The service's public base URL, for links, SAML metadata and SCIM locations: the
     * configured one (PUBLIC_PLATFORM_URL, PUBLIC_PRODUCT_URL), else the address the request
     * came in on (behind a proxy, as TRUST_PROXY allows). Never the Host header alone when set.
     */
    publicBaseUrl(request: FastifyRequest): string
  }
}
