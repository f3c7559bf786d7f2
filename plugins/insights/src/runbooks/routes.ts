import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { auditContextOf, recordAudit } from '@svc/audit'
import { isUuid, membershipOf } from '@svc/auth'
import { type Executor, pageOf } from '@svc/db'
import { ListResponse, NotFoundError } from '@svc/http'
import { OrgParams } from '../analyses/schemas.js'
import { deleteRunbook, findRunbook, insertRunbook, listRunbooks, runbookVersions, updateRunbook } from '../queries/runbooks.js'
import { Runbook, RunbookInput, RunbookParams, RunbookPatch, RunbookQuery, RunbookVersion, runbookBody, versionBody } from './schemas.js'

const tags = ['runbooks']

async function runbookOf(db: Executor, organizationId: string, runbookId: string, forUpdate = false) {
  const row = isUuid(runbookId) ? await findRunbook(db, organizationId, runbookId, forUpdate) : undefined
  if (!row) throw new NotFoundError('runbook')
  return row
}

/**
 * Runbooks (decision 0021, "Runbooks"): Markdown tagged by services and label matchers, which the
 * runbook agent matches to incidents. Reading needs the insights role viewer, writing responder;
 * every change is a new version and is audited.
 */
export const runbookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  const viewer = app.requireProductRole('insights', 'viewer')
  const writer = app.requireProductRole('insights', 'responder')
  const base = '/api/v1/organizations/:orgId/runbooks'
  const audit = (request: Parameters<typeof auditContextOf>[0], organizationId: string, runbookId: string) => ({
    context: auditContextOf(request),
    entry: { organizationId, product: 'insights' as const, entityType: 'runbook', entityId: runbookId },
  })

  app.get(
    base,
    {
      schema: {
        tags,
        summary: 'List runbooks, latest changed first (insights viewer)',
        params: OrgParams,
        querystring: RunbookQuery,
        response: { 200: ListResponse(Runbook) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { page, limit, service } = request.query
      const { rows, total } = await listRunbooks(db, membershipOf(request).organizationId, { service }, pageOf({ page, limit }))
      return { data: rows.map(runbookBody), meta: { page, limit, total } }
    },
  )

  app.post(
    base,
    {
      schema: { tags, summary: 'Create a runbook (insights responder)', params: OrgParams, body: RunbookInput, response: { 201: Runbook } },
      onRequest: writer,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      const content = { ...request.body, services: request.body.services ?? [], labels: request.body.labels ?? {} }
      const row = await db.transaction().execute(async (trx) => {
        const row = await insertRunbook(trx, organizationId, content, request.user.userId)
        const { context, entry } = audit(request, organizationId, row.id)
        await recordAudit(trx, context, {
          ...entry,
          action: 'runbook.created',
          after: { title: content.title, services: content.services, labels: content.labels, version: 1 },
        })
        return row
      })
      return reply.code(201).send(runbookBody(row))
    },
  )

  app.get(
    `${base}/:runbookId`,
    { schema: { tags, summary: 'Get a runbook (insights viewer)', params: RunbookParams, response: { 200: Runbook } }, onRequest: viewer },
    async (request) => runbookBody(await runbookOf(db, membershipOf(request).organizationId, request.params.runbookId)),
  )

  app.patch(
    `${base}/:runbookId`,
    {
      schema: {
        tags,
        summary: 'Change a runbook: its next version (insights responder)',
        params: RunbookParams,
        body: RunbookPatch,
        response: { 200: Runbook },
      },
      onRequest: writer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const row = await db.transaction().execute(async (trx) => {
        const current = await runbookOf(trx, organizationId, request.params.runbookId, true)
        const before = {
          title: current.title,
          body: current.body,
          services: current.services,
          labels: current.labels as Record<string, string>,
        }
        const after = { ...before, ...request.body }
        const row = await updateRunbook(trx, organizationId, current.id, after, request.user.userId)
        const { context, entry } = audit(request, organizationId, current.id)
        // The body is kept in the versions: the entry names the fields that changed and the versions.
        const { body: bodyBefore, ...shownBefore } = before
        const { body: bodyAfter, ...shownAfter } = after
        await recordAudit(trx, context, {
          ...entry,
          action: 'runbook.updated',
          before: { ...shownBefore, version: current.version, body: bodyBefore === bodyAfter ? 'unchanged' : 'replaced' },
          after: { ...shownAfter, version: row.version, body: bodyBefore === bodyAfter ? 'unchanged' : 'replaced' },
        })
        return row
      })
      return runbookBody(row)
    },
  )

  app.delete(
    `${base}/:runbookId`,
    {
      schema: {
        tags,
        summary: 'Delete a runbook and its versions (insights responder)',
        params: RunbookParams,
        response: { 204: Type.Null() },
      },
      onRequest: writer,
    },
    async (request, reply) => {
      const { organizationId } = membershipOf(request)
      await db.transaction().execute(async (trx) => {
        const current = await runbookOf(trx, organizationId, request.params.runbookId, true)
        await deleteRunbook(trx, organizationId, current.id)
        const { context, entry } = audit(request, organizationId, current.id)
        await recordAudit(trx, context, { ...entry, action: 'runbook.deleted', before: { title: current.title, version: current.version } })
      })
      return reply.code(204).send(null)
    },
  )

  app.get(
    `${base}/:runbookId/versions`,
    {
      schema: {
        tags,
        summary: 'Every version of a runbook, newest first (insights viewer)',
        params: RunbookParams,
        response: { 200: Type.Object({ data: Type.Array(RunbookVersion) }) },
      },
      onRequest: viewer,
    },
    async (request) => {
      const { organizationId } = membershipOf(request)
      const runbook = await runbookOf(db, organizationId, request.params.runbookId)
      return { data: (await runbookVersions(db, organizationId, runbook.id)).map(versionBody) }
    },
  )
}
