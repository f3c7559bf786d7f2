import { isUuid } from '@svc/auth'
import type { Executor } from '@svc/db'
import { invalidField } from '@svc/http'
import { audiencesOfPage } from '../queries/audiences.js'

/**
 * The audiences a component or record of a request is tagged for, each checked to be one of the
 * page's: a 400 names the first that is not (`audienceIds/1`). Undefined when the request names none.
 */
export async function checkAudiences(
  db: Executor,
  page: { id: string; organizationId: string },
  ids: readonly string[] | undefined,
  field = 'audienceIds',
): Promise<string[] | undefined> {
  if (ids === undefined) return undefined
  const known = new Set(await audiencesOfPage(db, page.organizationId, page.id, ids.filter(isUuid)))
  const unknown = ids.findIndex((id) => !known.has(id))
  if (unknown >= 0) throw invalidField(`${field}/${unknown}`, 'is not an audience of this status page')
  return [...ids].sort()
}
