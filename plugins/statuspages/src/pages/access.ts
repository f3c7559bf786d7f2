import type { FastifyRequest } from 'fastify'
import { isUuid, membershipOf } from '@svc/auth'
import type { Executor } from '@svc/db'
import { NotFoundError } from '@svc/http'
import { findPage } from '../queries/pages.js'

/** The page of `:pageId` in the caller's organization; another organization's page is not found. */
export async function pageOfRequest(executor: Executor, request: FastifyRequest, forUpdate = false) {
  const { organizationId } = membershipOf(request)
  const { pageId } = request.params as { pageId: string }
  const page = isUuid(pageId) ? await findPage(executor, organizationId, pageId, forUpdate) : undefined
  if (!page) throw new NotFoundError('status page')
  return page
}

/** The audit entry's subject for a status page record. */
export const auditEntry = (organizationId: string, entityType: string, entityId: string) => ({
  organizationId,
  product: 'statuspages' as const,
  entityType,
  entityId,
})
