import t from 'tap'
import { startTestService } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { insightsHelpers, minutesAgo } from './insights-setup.js'
import { alertingOrganization } from './organization-setup.js'

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db
const { orgId, otherOrgId, person } = await alertingOrganization(service, 'drafts', {
  responder: { insights: 'responder', alerting: 'viewer' },
  viewer: { insights: 'viewer' },
})
const [owner, responder, viewer, stranger] = ['owner', 'responder', 'viewer', 'stranger'].map(person)
const { createConfig, ingest, deploy, incidentOf } = insightsHelpers(service, orgId, owner!)
const rcasUrl = `/api/v1/organizations/${orgId}/rcas`
type Who = { headers: { authorization: string } }
const call = (method: 'GET' | 'POST' | 'PATCH', url: string, who: Who, payload?: unknown) =>
  app.inject({ method, url, headers: who.headers, ...(payload === undefined ? {} : { payload: payload as object }) })

const config = await createConfig({ name: 'Generic', defaultPriority: 'P2' })
const culprit = await deploy(config, {
  service: 'checkout',
  environment: 'production',
  version: '2.4.0',
  commit: '9f8e7d6c5b4a',
  status: 'success',
  finishedAt: minutesAgo(15),
})
const alert = await ingest(config, { title: 'Checkout errors above 5%', service: 'checkout' })
// Correlation places the alert in its incident a moment after the 202; the drafts read it from there.
await incidentOf(alert.alertId)

async function rcaWithIncident(payload: Record<string, unknown> = {}) {
  const rca = (await call('POST', rcasUrl, responder!, { title: 'Checkout outage', ...payload })).json() as { id: string }
  await call('POST', `${rcasUrl}/${rca.id}/incidents`, responder!, { sourceProduct: 'alerting', incidentId: alert.alertId })
  return rca
}

/** The document once its draft is no longer queued or running. */
async function drafted(rcaId: string) {
  const deadline = Date.now() + 30_000
  for (;;) {
    const rca = (await call('GET', `${rcasUrl}/${rcaId}`, viewer!)).json()
    if (rca.draftStatus === 'completed' || rca.draftStatus === 'failed') return rca
    if (Date.now() > deadline) throw new Error(`the draft of ${rcaId} did not finish: ${rca.draftStatus}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

t.test('the offline draft of an RCA linked to an alert is written from its incident and names the deploy before it', async (t) => {
  const rca = await rcaWithIncident()
  const queued = await call('POST', `${rcasUrl}/${rca.id}/generate`, responder!)
  t.equal(queued.statusCode, 202)
  t.match(queued.json(), { id: rca.id, draftStatus: 'queued', draftError: null, aiDrafted: false })
  const done = await drafted(rca.id)
  t.match(done, { draftStatus: 'completed', aiDrafted: true, suspectedDeployId: culprit.id, editedFields: [] })
  // The P2 opened INC-1: the alert stands for its incident.
  t.match(done.summary, /^One incident on checkout: INC-1 "Checkout errors above 5%" \(SEV2\)/)
  t.match(
    done.rootCause,
    /^The deploy 2\.4\.0 of checkout \(commit 9f8e7d6c5b4a\) to production finished 15 minutes before the first incident began\./,
  )
  t.match(done.impact, /^- INC-1 Checkout errors above 5% \(SEV2, checkout\): still in triage\.$/)
  t.match(done.timeline, /^- \S+ deploy 2\.4\.0 of checkout .* \(success\)\n- \S+ INC-1: opened$/)
  const usage = await db
    .selectFrom('divinux.aiUsage')
    .select(['feature', 'provider', 'promptTokens'])
    .where('referenceId', '=', rca.id)
    .execute()
  t.same(usage, [{ feature: 'rca_draft', provider: 'offline', promptTokens: 0 }], 'the draft is on the ledger')
})

t.test('a section a person wrote is kept unless the request says overwrite', async (t) => {
  const rca = await rcaWithIncident({ summary: 'Written by a person.' })
  await call('POST', `${rcasUrl}/${rca.id}/generate`, responder!, {})
  const kept = await drafted(rca.id)
  t.match(kept, { summary: 'Written by a person.', editedFields: ['summary'], aiDrafted: true })
  t.match(kept.rootCause, /deploy 2\.4\.0/)

  await call('PATCH', `${rcasUrl}/${rca.id}`, responder!, { impact: 'Also written by a person.' })
  await call('POST', `${rcasUrl}/${rca.id}/generate`, responder!, { overwrite: true })
  const replaced = await drafted(rca.id)
  t.match(replaced.summary, /^One incident on checkout/)
  t.match(replaced.impact, /still in triage/)
  t.same(replaced.editedFields, [], 'the AI wrote every section now')
})

t.test('drafts that cannot be made change nothing', async (t) => {
  const rca = await rcaWithIncident()
  const url = `${rcasUrl}/${rca.id}/generate`
  t.equal((await call('POST', url, viewer!)).statusCode, 403, 'an insights viewer')
  t.equal(
    (await call('POST', `/api/v1/organizations/${otherOrgId}/rcas/${rca.id}/generate`, stranger!)).statusCode,
    404,
    'another organization',
  )
  t.equal((await call('POST', url, responder!, { overwrite: 'yes' })).statusCode, 400)
  t.equal((await call('POST', url, responder!, { model: 'gpt-5' })).statusCode, 400)

  await db.updateTable('divinux.rcas').set({ draftStatus: 'running' }).where('id', '=', rca.id).execute()
  const busy = await call('POST', url, responder!)
  t.equal(busy.statusCode, 409)
  t.match(busy.json(), { message: 'a draft of this RCA is already being generated' })
  await db.updateTable('divinux.rcas').set({ draftStatus: null }).where('id', '=', rca.id).execute()

  await call('PATCH', `${rcasUrl}/${rca.id}`, responder!, { status: 'in_review' })
  await call('PATCH', `${rcasUrl}/${rca.id}`, responder!, { status: 'published' })
  t.equal((await call('POST', url, responder!)).statusCode, 409, 'published')

  const open = await rcaWithIncident()
  await call('PATCH', `/api/v1/organizations/${orgId}/usage`, owner!, { limits: { monthlyTokens: 0 } })
  const spent = await call('POST', `${rcasUrl}/${open.id}/generate`, responder!)
  t.equal(spent.statusCode, 402)
  t.match(spent.json(), { code: 'BUDGET_EXCEEDED', message: "the organization's monthly AI tokens limit is reached" })
  t.equal((await call('GET', `${rcasUrl}/${open.id}`, viewer!)).json().draftStatus, null, 'nothing queued')
})
