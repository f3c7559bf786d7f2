import type { FastifyRequest } from 'fastify'
import { mayReadProduct, type Product } from '@svc/auth'
import { ForbiddenError } from '@svc/http'
import type { ReportType } from './model.js'

// A report holds another surface's records, so it follows that surface's reading rule (decision
// 0018, "Reading rule"): whoever asks for one, and whoever asks for its file later, must be able to
// read each section it holds through the surface's own API. The audit log, AI usage and product
// usage are read by any member, so their reports hold no gated section.
const SECTIONS: Record<ReportType, readonly Product[]> = {
  'audit-log': [],
  'ai-usage': [],
  usage: [],
  incidents: ['alerting'],
  uptime: ['statuspages', 'synthetics'],
}

const rolesNeeded = (sections: readonly Product[]) => sections.map((product) => `the ${product} role viewer`).join(' or ')

/**
 * The sections a new report of `type` holds: those of its type the caller may read. 403 when it
 * would hold none of them (an incidents report for a member without an alerting role); an uptime
 * report holds the half the caller may read and says what it leaves out.
 */
export async function sectionsFor(request: FastifyRequest, type: ReportType): Promise<Product[]> {
  const possible = SECTIONS[type]
  const readable: Product[] = []
  for (const product of possible) if (await mayReadProduct(request, product)) readable.push(product)
  if (possible.length > 0 && readable.length === 0)
    throw new ForbiddenError(`a ${type} report needs ${rolesNeeded(possible)} or higher: it would show nothing you may read`)
  return readable
}

/** 403 unless the caller may read every section the report holds. */
export async function checkMayReadSections(request: FastifyRequest, sections: readonly string[]): Promise<void> {
  const unreadable: Product[] = []
  for (const product of sections as Product[]) if (!(await mayReadProduct(request, product))) unreadable.push(product)
  if (unreadable.length > 0)
    throw new ForbiddenError(`this report holds records that need ${unreadable.map((p) => `the ${p} role viewer`).join(' and ')} or higher`)
}
