import { createHash } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { NotFoundError } from '@svc/http'
import { checkByHeartbeatToken, recordPing } from '../queries/checks.js'
import { insertDoneRun } from '../queries/runs.js'
import { judgeCheck } from '../scheduling/state.js'
import type { JobQueue } from '@svc/jobs'

const tags = ['synthetics-heartbeats']

/**
 * The push URL of a heartbeat check (public; the token is the credential): a cron job calls it
 * when it ran. GET, HEAD and POST all count, as with Healthchecks.io and Checkly, so `curl` of
 * any kind works. A ping of a check that was failing records a passing result at once.
 */
export const heartbeatRoutes: FastifyPluginAsyncTypebox<{ jobs: JobQueue; serviceRegion: string }> = async (app, options) => {
  const db = app.database.db
  const handler = async (request: { params: { token: string } }) => {
    const check = await checkByHeartbeatToken(db, createHash('sha256').update(request.params.token).digest('hex'))
    if (!check) throw new NotFoundError('heartbeat')
    await db.transaction().execute(async (trx) => {
      await recordPing(trx, check.id)
      if (check.paused || check.state === 'passing') return
      await insertDoneRun(trx, {
        checkId: check.id,
        organizationId: check.organizationId,
        region: options.serviceRegion,
        dueAt: new Date(),
        status: 'passing',
        attempts: [{ status: 'passing', startedAt: new Date().toISOString(), timings: { total: 0 }, assertions: [] }],
      })
      await judgeCheck(trx, options.jobs, check.id, options.serviceRegion)
    })
    return { ok: true }
  }
  for (const method of ['GET', 'POST'] as const)
    app.route({
      method,
      url: '/api/v1/synthetics/heartbeats/:token',
      config: { public: true },
      schema: {
        tags,
        summary: 'Ping a heartbeat check (public: the token in the URL is the credential)',
        params: Type.Object({ token: Type.String({ minLength: 10, maxLength: 100 }) }),
        response: { 200: Type.Object({ ok: Type.Boolean() }) },
      },
      handler,
    })
}
