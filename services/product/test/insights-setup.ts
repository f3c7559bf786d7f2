import { createHmac } from 'node:crypto'
import type { TestService } from '@svc/testkit'

/** Helpers shared by the insights tests: configs, signed ingestion, deploys and waiting for a job. */
export function insightsHelpers(service: TestService, orgId: string, owner: { headers: { authorization: string } }) {
  const { app } = service
  const db = app.database.db

  async function createConfig(payload: Record<string, unknown>) {
    const response = await app.inject({
      method: 'POST',
      url: `/api/v1/organizations/${orgId}/webhooks`,
      headers: owner.headers,
      payload: { signed: true, ...payload },
    })
    if (response.statusCode !== 201) throw new Error(`config not created: ${response.body}`)
    return response.json() as { id: string; apiKey: string; ingestPath: string; signingSecret: string }
  }

  /** Posts a body signed with the config's secret; answers the first alert's id and outcome. */
  async function ingest(config: { ingestPath: string; signingSecret: string }, body: unknown) {
    const payload = JSON.stringify(body)
    const signature = `sha256=${createHmac('sha256', config.signingSecret).update(payload).digest('hex')}`
    const response = await app.inject({
      method: 'POST',
      url: config.ingestPath,
      headers: { 'content-type': 'application/json', 'x-webhook-signature': signature },
      payload,
    })
    if (response.statusCode !== 202) throw new Error(`ingestion refused: ${response.body}`)
    return response.json() as { alertId: string; status: string }
  }

  async function deploy(config: { apiKey: string; signingSecret: string }, body: Record<string, unknown>) {
    const payload = JSON.stringify(body)
    const signature = `sha256=${createHmac('sha256', config.signingSecret).update(payload).digest('hex')}`
    const response = await app.inject({
      method: 'POST',
      url: `/api/v1/organizations/${orgId}/deploy-events/ingest/${config.apiKey}`,
      headers: { 'content-type': 'application/json', 'x-webhook-signature': signature },
      payload,
    })
    if (response.statusCode !== 201) throw new Error(`deploy refused: ${response.body}`)
    return response.json() as { id: string }
  }

  /** The incident's analyses once none is pending or processing (the job worker runs in the service). */
  async function settledAnalyses(incidentId: string, expected = 1, timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const rows = await db.selectFrom('divinux.analyses').selectAll().where('incidentId', '=', incidentId).orderBy('createdAt').execute()
      if (rows.length >= expected && rows.every((row) => row.status === 'completed' || row.status === 'failed')) return rows
      if (Date.now() > deadline)
        throw new Error(`analyses of ${incidentId} did not settle: ${JSON.stringify(rows.map((row) => [row.status, row.error]))}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  /** The incident an alert opened or joined, once correlation (a job) has placed it. */
  async function incidentOf(alertId: string, timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const link = await db.selectFrom('divinux.incidentAlerts').select('incidentId').where('alertId', '=', alertId).executeTakeFirst()
      if (link) return link.incidentId
      if (Date.now() > deadline) throw new Error(`alert ${alertId} was placed in no incident`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  /** Lets the queue drain: the jobs of both insights queues are all finished. */
  async function queueDrained(timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const counts = await Promise.all(
        ['insights.alert-created', 'insights.analyze'].map((name) => app.jobs.getQueueSize(name, { before: 'completed' })),
      )
      if (counts.every((count) => count === 0)) {
        const active = await db.selectFrom('divinux.analyses').select('id').where('status', 'in', ['pending', 'processing']).execute()
        if (active.length === 0) return
      }
      if (Date.now() > deadline) throw new Error('the insights queues did not drain')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  return { createConfig, ingest, deploy, incidentOf, settledAnalyses, queueDrained }
}

export const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString()
