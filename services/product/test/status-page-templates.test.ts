import t from 'tap'
import { incidentTemplatesFor } from '@svc/plugin-statuspages'
import { startTestService, until } from '@svc/testkit'
import { buildApp } from '../src/app.js'
import { alertingOrganization } from './organization-setup.js'

// Incident templates (issue 58; decision 0015, "Incident templates"): a page's named starts for an
// incident, their title and body in each of its languages, used to open an incident through the
// status pages API and by an alerting incident's status update, which each page with the template
// takes in the template's words and component statuses. The comms agent reads them too.
const service = await startTestService(t, buildApp, {})
const { app } = service
const db = app.database.db
const { orgId, person } = await alertingOrganization(service, 'templates', {
  ada: { alerting: 'responder', statuspages: 'manager' },
  viewer: { alerting: 'viewer', statuspages: 'viewer' },
})
const [owner, ada, viewer] = ['owner', 'ada', 'viewer'].map(person)
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })
const pages = `/api/v1/statuspages/organizations/${orgId}`

const page = (
  await call(ada!, 'POST', `${pages}/pages`, { name: 'Shop', slug: 'shop-templates', published: true, locales: ['en', 'de'] })
).json()
const pageBase = `${pages}/pages/${page.id}`
const checkout = (await call(ada!, 'POST', `${pageBase}/components`, { name: 'Checkout', alertServices: ['checkout'] })).json()
const search = (await call(ada!, 'POST', `${pageBase}/components`, { name: 'Search' })).json()
// A second page follows checkout too, without the template.
const other = (await call(ada!, 'POST', `${pages}/pages`, { name: 'Partners', slug: 'partners-templates', published: true })).json()
const otherCheckout = (
  await call(ada!, 'POST', `${pages}/pages/${other.id}/components`, { name: 'Partner checkout', alertServices: ['checkout'] })
).json()

const TEXTS = {
  en: { title: 'Payments are failing', body: 'Some payments fail at checkout. Your card was not charged.' },
  de: { title: 'Zahlungen schlagen fehl', body: 'Einige Zahlungen schlagen an der Kasse fehl. Ihre Karte wurde nicht belastet.' },
}
const created = await call(ada!, 'POST', `${pageBase}/incident-templates`, {
  key: 'payments-failing',
  status: 'identified',
  impact: 'major',
  components: [{ componentId: checkout.id, status: 'partial_outage' }],
  texts: TEXTS,
})
const template = created.json()

t.test('managers write a template in the page’s languages; bad ones are refused and change nothing', async (t) => {
  t.equal(created.statusCode, 201, created.body)
  t.match(template, { key: 'payments-failing', status: 'identified', impact: 'major', texts: TEXTS })
  t.same(template.components, [{ componentId: checkout.id, status: 'partial_outage' }])
  const refusals: Array<[object, RegExp, number]> = [
    [{ key: 'x', texts: { fr: { title: 'Paiements', body: 'Échec.' } } }, /texts\/fr.*en, de/, 400],
    [{ key: 'x', texts: { de: { title: 'Nur Deutsch', body: 'Text.' } } }, /default language \(en\)/, 400],
    [{ key: 'x', texts: TEXTS, components: [{ componentId: page.id, status: 'major_outage' }] }, /components\/0\/componentId/, 400],
    [{ key: 'Not A Key', texts: TEXTS }, /key/, 400],
    [{ key: 'payments-failing', texts: TEXTS }, /already exists/, 409],
  ]
  for (const [body, message, status] of refusals) {
    const refused = await call(ada!, 'POST', `${pageBase}/incident-templates`, body)
    t.equal(refused.statusCode, status, JSON.stringify(body))
    t.match(refused.json().message, message)
  }
  t.equal((await call(viewer!, 'POST', `${pageBase}/incident-templates`, { key: 'v', texts: TEXTS })).statusCode, 403)
  const listed = await call(viewer!, 'GET', `${pageBase}/incident-templates`)
  t.same(
    listed.json().data.map((row: { key: string }) => row.key),
    ['payments-failing'],
    'nothing refused was written',
  )
  const changed = await call(ada!, 'PATCH', `${pageBase}/incident-templates/${template.id}`, { impact: 'critical' })
  t.equal(changed.json().impact, 'critical')
  await call(ada!, 'PATCH', `${pageBase}/incident-templates/${template.id}`, { impact: 'major' })
  const audit = await db.selectFrom('core.auditLogs').select('action').where('entityId', '=', template.id).orderBy('createdAt').execute()
  t.same(
    audit.map((row) => row.action),
    ['status_incident_template.created', 'status_incident_template.updated', 'status_incident_template.updated'],
  )
})

t.test('an incident opened from a template takes its words in the language asked for, and what the request gives wins', async (t) => {
  const german = await call(ada!, 'POST', `${pageBase}/incidents`, { template: 'payments-failing', locale: 'de-AT' })
  t.equal(german.statusCode, 201, german.body)
  t.match(german.json(), {
    name: 'Zahlungen schlagen fehl',
    status: 'identified',
    impact: 'major',
    components: [{ componentId: checkout.id, status: 'partial_outage' }],
    updates: [{ body: TEXTS.de.body }],
  })
  const own = await call(ada!, 'POST', `${pageBase}/incidents`, {
    template: 'payments-failing',
    name: 'Card payments failing',
    impact: 'minor',
    components: [{ componentId: search.id, status: 'degraded_performance' }],
  })
  t.match(own.json(), {
    name: 'Card payments failing',
    impact: 'minor',
    updates: [{ body: TEXTS.en.body }],
    components: [{ componentId: search.id }],
  })
  const unknown = await call(ada!, 'POST', `${pageBase}/incidents`, { template: 'no-such-template' })
  t.equal(unknown.statusCode, 400)
  t.match(unknown.json().message, /template/)
  const bare = await call(ada!, 'POST', `${pageBase}/incidents`, { body: 'No name' })
  t.equal(bare.statusCode, 400)
  t.match(bare.json().message, /name is required unless a template is named/)
  const elsewhere = await call(ada!, 'POST', `${pages}/pages/${other.id}/incidents`, { template: 'payments-failing' })
  t.equal(elsewhere.statusCode, 400, 'a template is its page’s')
  // Resolved, so that correlation links neither to the alerting incident of the next test.
  for (const opened of [german.json(), own.json()])
    await call(ada!, 'POST', `${pageBase}/incidents/${opened.id}/updates`, { status: 'resolved', body: 'Payments work again.' })
})

t.test(
  'an alerting incident’s status update names a template: pages with it take its words and statuses, others the default words',
  async (t) => {
    const base = `/api/v1/organizations/${orgId}`
    const policy = (await call(owner!, 'POST', `${base}/escalation-policies`, { name: 'Shop', steps: [] })).json()
    const config = (await call(owner!, 'POST', `${base}/webhooks`, { name: 'Monitoring', escalationPolicyId: policy.id })).json()
    const fired = await app.inject({
      method: 'POST',
      url: config.ingestPath,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ title: 'Checkout 500s', service: 'checkout', priority: 'P1' }),
    })
    const alertId = fired.json().alertId as string
    const incident = await until(
      'the incident the P1 opens',
      async () => (await call(ada!, 'GET', `${base}/alerts/${alertId}`)).json().incident,
    )
    const empty = await call(ada!, 'POST', `${base}/incidents/${incident.id}/status-updates`, { status: 'identified' })
    t.equal(empty.statusCode, 400)
    t.match(empty.json().message, /body is required unless a template is named/)
    const posted = await call(ada!, 'POST', `${base}/incidents/${incident.id}/status-updates`, {
      status: 'identified',
      template: 'payments-failing',
      publish: true,
    })
    t.equal(posted.statusCode, 201, posted.body)
    t.match(posted.json(), { kind: 'status_update', data: { statusPages: { template: 'payments-failing' } } })

    const opened = (pageId: string) =>
      db
        .selectFrom('divinux.statusIncidents')
        .select(['id', 'name', 'impact'])
        .where('pageId', '=', pageId)
        .where('alertingIncidentId', '=', incident.id)
        .executeTakeFirst()
    const shop = await until('the shop page’s incident', () => opened(page.id))
    t.match(shop, { name: TEXTS.en.title, impact: 'major' }, 'the page with the template takes its title and impact')
    const shopIncident = (await call(ada!, 'GET', `${pageBase}/incidents/${shop.id}`)).json()
    t.equal(shopIncident.updates[0].body, TEXTS.en.body)
    t.same(
      shopIncident.components,
      [{ componentId: checkout.id, status: 'partial_outage' }],
      'the template’s status, not the P1’s major outage',
    )
    const partners = await until('the partners page’s incident', () => opened(other.id))
    t.match(partners, { impact: 'critical' }, 'a page without the template follows the priority')
    const partnersIncident = (await call(ada!, 'GET', `${pages}/pages/${other.id}/incidents/${partners.id}`)).json()
    t.equal(partnersIncident.updates[0].body, 'The issue has been identified and a fix is being implemented.')
    t.same(partnersIncident.components, [{ componentId: otherCheckout.id, status: 'major_outage' }])
  },
)

t.test('the comms agent reads the templates of the components an incident touches, in each page’s default language', async (t) => {
  t.same(await incidentTemplatesFor(db, orgId, [checkout.id]), [
    { key: 'payments-failing', title: TEXTS.en.title, body: TEXTS.en.body, componentIds: [checkout.id] },
  ])
  t.same(await incidentTemplatesFor(db, orgId, [search.id]), [], 'a template naming other components is not one for these')
  const { orgId: otherOrg } = await alertingOrganization(service, 'templates-elsewhere', {})
  t.same(await incidentTemplatesFor(db, otherOrg, [checkout.id]), [], 'nor is another organization’s')
  const removed = await call(ada!, 'DELETE', `${pageBase}/incident-templates/${template.id}`)
  t.equal(removed.statusCode, 204)
  t.same(await incidentTemplatesFor(db, orgId, [checkout.id]), [])
})
