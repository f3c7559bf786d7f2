import { execFile } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { access, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { auditContextOf, recordAudit } from '@svc/audit'
import { buildApp } from '@svc/platform'
import { startTestService, until, type SignedIn } from '@svc/testkit'

// Reports end to end: asked for over HTTP, written by the pg-boss job from the product surfaces'
// read modules, downloaded through a signed link over real HTTP, the PDF read back with
// poppler's pdftotext. Without pdftotext here the PDF text checks say so and skip (CI fails).

const signingKey = 'reports-test-signing-key-0123456789abcdef'
const service = await startTestService(t, buildApp, { config: { reportsSigningKey: signingKey } })
const { app } = service
const db = app.database.db
const address = await app.listen({ port: 0, host: '127.0.0.1' })
const PDFTOTEXT = '/usr/bin/pdftotext'
const hasPdftotext = await access(PDFTOTEXT).then(
  () => true,
  () => false,
)

const owner = await service.signIn('owner@reports.example')
const member = await service.signIn('member@reports.example')
const stranger = await service.signIn('stranger@elsewhere.example')
const create = async (who: SignedIn, name: string, slug: string) =>
  (await app.inject({ method: 'POST', url: '/api/v1/organizations', headers: who.headers, payload: { name, slug } })).json<{ id: string }>()
    .id
const orgId = await create(owner, 'Reports Co', 'reports-co')
const otherOrgId = await create(stranger, 'Elsewhere', 'elsewhere')
/** A member of the organization with these product roles (none: a member who reads no product). */
async function memberWith(who: SignedIn, products: string[]) {
  const { id } = await db
    .insertInto('core.organizationMembers')
    .values({ organizationId: orgId, userId: who.userId, role: 'member' })
    .returning('id')
    .executeTakeFirstOrThrow()
  for (const product of products)
    await db.insertInto('core.orgProductRoles').values({ organizationId: orgId, memberId: id, product, role: 'viewer' }).execute()
}
await memberWith(member, ['alerting', 'statuspages', 'synthetics'])

// The period: seven whole UTC days ending three days ago (inside synthetics' raw retention).
const DAY = 86_400_000
const HOUR = 3_600_000
const from = new Date(Math.floor(Date.now() / DAY) * DAY - 10 * DAY)
const to = new Date(from.getTime() + 7 * DAY)
const at = (ms: number) => new Date(from.getTime() + ms)

// Alerting: three incidents in the period (two acknowledged and resolved), each opened by its
// alert; one before it; one of another organization. Each incident's times count from its
// detection, as the incident itself shows them; its alert is acknowledged a little later.
const opened = (
  organizationId: string,
  number: number,
  title: string,
  severity: string,
  service: string,
  detectedAt: Date,
  ackSeconds?: number,
  resolveSeconds?: number,
) => ({ organizationId, number, title, severity, service, detectedAt, ackSeconds, resolveSeconds })
const seeded = [
  opened(orgId, 1, 'Checkout latency', 'SEV1', 'api', at(HOUR), 60, 600),
  opened(orgId, 2, 'Database failover', 'SEV1', 'api', at(2 * DAY), 180, 1800),
  opened(orgId, 3, 'Stale cache', 'SEV2', 'web', at(3 * DAY)),
  opened(orgId, 4, 'Before the period', 'SEV1', 'api', at(-HOUR), 10, 20),
  opened(otherOrgId, 1, 'Someone else’s outage', 'SEV1', 'secret-service', at(HOUR), 5, 5),
]
const later = (start: Date, seconds: number | undefined, plus = 0) => (seconds ? new Date(start.getTime() + (seconds + plus) * 1000) : null)
for (const incident of seeded) {
  const { organizationId, number, title, severity, service, detectedAt, ackSeconds, resolveSeconds } = incident
  const status = resolveSeconds ? 'resolved' : 'open'
  const alertRow = await db
    .insertInto('divinux.alerts')
    .values({
      organizationId,
      title,
      priority: severity === 'SEV1' ? 'P1' : 'P2',
      service,
      source: 'webhook',
      fingerprint: title,
      status,
      createdAt: detectedAt,
      acknowledgedAt: later(detectedAt, ackSeconds, 30),
      resolvedAt: later(detectedAt, resolveSeconds, 30),
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  const incidentRow = await db
    .insertInto('divinux.incidents')
    .values({
      organizationId,
      number,
      title,
      severity,
      status: resolveSeconds ? 'resolved' : 'triage',
      openedBy: 'alert',
      startedAt: detectedAt,
      detectedAt,
      acknowledgedAt: later(detectedAt, ackSeconds),
      resolvedAt: later(detectedAt, resolveSeconds),
      ...(title === 'Checkout latency' ? { fields: JSON.stringify({ regions: ['eu', 'us'], impact: 'some' }) } : {}),
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  await db
    .insertInto('divinux.incidentAlerts')
    .values({ organizationId, incidentId: incidentRow.id, alertId: alertRow.id, fingerprint: title, rule: 'opened' })
    .execute()
}

// Insights: two model requests in the period, one after it.
await db
  .insertInto('divinux.aiUsage')
  .values([
    {
      organizationId: orgId,
      feature: 'analysis',
      provider: 'openai',
      model: 'gpt-test',
      promptTokens: 100,
      completionTokens: 50,
      costUsd: '0.0125',
      referenceId: '00000000-0000-4000-8000-0000000000a1',
      createdAt: at(DAY),
    },
    {
      organizationId: orgId,
      feature: 'rca_draft',
      provider: 'openai',
      model: 'gpt-test',
      promptTokens: 200,
      completionTokens: 100,
      costUsd: '0.025',
      referenceId: '00000000-0000-4000-8000-0000000000b1',
      createdAt: at(4 * DAY),
    },
    {
      organizationId: orgId,
      feature: 'analysis',
      provider: 'openai',
      model: 'gpt-test',
      promptTokens: 9000,
      completionTokens: 9000,
      costUsd: '9',
      referenceId: '00000000-0000-4000-8000-0000000000a2',
      createdAt: at(8 * DAY),
    },
  ])
  .execute()

// Status pages: one component, one hour of major outage, two of partial outage, three of maintenance.
const page = await db
  .insertInto('divinux.statusPages')
  .values({ organizationId: orgId, name: 'Public', slug: 'reports-public' })
  .returning('id')
  .executeTakeFirstOrThrow()
const component = await db
  .insertInto('divinux.statusComponents')
  .values({ organizationId: orgId, pageId: page.id, name: 'API', createdAt: at(-5 * DAY) })
  .returning('id')
  .executeTakeFirstOrThrow()
const changes: Array<[number, string]> = [
  [-5 * DAY, 'operational'],
  [DAY, 'major_outage'],
  [DAY + HOUR, 'operational'],
  [2 * DAY, 'partial_outage'],
  [2 * DAY + 2 * HOUR, 'operational'],
  [3 * DAY, 'under_maintenance'],
  [3 * DAY + 3 * HOUR, 'operational'],
]
await db
  .insertInto('divinux.statusComponentChanges')
  .values(changes.map(([offset, status]) => ({ componentId: component.id, status, changedAt: at(offset) })))
  .execute()

// Synthetics: a check with ten runs in the period, two failing.
const check = await db
  .insertInto('divinux.syntheticChecks')
  .values({
    organizationId: orgId,
    name: 'Homepage',
    kind: 'http',
    frequencySeconds: 60,
    regions: ['local'],
    timeoutMs: 5000,
    createdAt: at(-DAY),
  })
  .returning('id')
  .executeTakeFirstOrThrow()
await db
  .insertInto('divinux.syntheticRuns')
  .values(
    Array.from({ length: 10 }, (_, index) => ({
      organizationId: orgId,
      checkId: check.id,
      region: 'local',
      dueAt: at(index * HOUR),
      state: 'done',
      status: index < 2 ? 'failing' : 'passing',
    })),
  )
  .execute()

// An audit entry whose text a spreadsheet would run as a formula.
await recordAudit(db, auditContextOf({ headers: {}, id: 'seed', ip: '127.0.0.1', user: { userId: owner.userId } }), {
  organizationId: orgId,
  product: 'platform',
  entityType: 'organization',
  entityId: orgId,
  action: '=HYPERLINK("http://evil.example","click")',
})

const base = `/api/v1/organizations/${orgId}/reports`
const generate = (who: SignedIn, payload: object, organizationId = orgId) =>
  app.inject({ method: 'POST', url: `/api/v1/organizations/${organizationId}/reports/generate`, headers: who.headers, payload })
const period = { from: from.toISOString(), to: to.toISOString() }

interface ReportBody {
  sections: string[]
  id: string
  type: string
  format: string
  status: string
  fileName: string | null
  contentType: string | null
  sizeBytes: number | null
  error: string | null
}
const readyReport = (id: string) =>
  until(`report ${id} ready`, async () => {
    const list = (await app.inject({ method: 'GET', url: `${base}?limit=100`, headers: member.headers })).json<{ data: ReportBody[] }>()
    const report = list.data.find((row) => row.id === id)
    return report && report.status !== 'queued' && report.status !== 'running' && report
  })

async function download(id: string, who: SignedIn = member) {
  const answer = await fetch(`${address}${base}/${id}/download`, { headers: who.headers })
  t.equal(answer.status, 200, 'the signed link is handed out')
  const { url, expiresAt } = (await answer.json()) as { url: string; expiresAt: string }
  const file = await fetch(url)
  return { url, expiresAt, file }
}

async function pdfText(content: ArrayBuffer): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), 'report-'))
  const file = path.join(directory, 'report.pdf')
  await writeFile(file, Buffer.from(content))
  const { stdout } = await promisify(execFile)(PDFTOTEXT, ['-layout', file, '-'])
  return stdout
}

t.test('bad input is refused with the field named and stores nothing', async (t) => {
  const cases: Array<[object, string]> = [
    [{ type: 'incidents', format: 'csv', from: period.to, to: period.from }, 'from'],
    [{ type: 'incidents', format: 'csv', from: period.from, to: new Date(from.getTime() + 367 * DAY).toISOString() }, 'to'],
    [{ type: 'payroll', format: 'csv', ...period }, 'type'],
    [{ type: 'incidents', format: 'xlsx', ...period }, 'format'],
    [{ type: 'incidents', format: 'csv', from: 'last tuesday', to: period.to }, 'from'],
    [{ type: 'incidents', format: 'csv', ...period, extra: true }, 'extra'],
  ]
  for (const [payload, field] of cases) {
    const answer = await generate(member, payload)
    t.equal(answer.statusCode, 400, JSON.stringify(payload))
    t.match(answer.body, field)
  }
  const list = (await app.inject({ method: 'GET', url: base, headers: member.headers })).json<{ meta: { total: number } }>()
  t.equal(list.meta.total, 0, 'no report was recorded')
})

t.test('an incidents report in CSV: the incidents of the period with their response times, as each incident shows them', async (t) => {
  const answer = await generate(member, { type: 'incidents', format: 'csv', ...period })
  t.equal(answer.statusCode, 202)
  const queued = answer.json<ReportBody>()
  t.match(queued, { type: 'incidents', format: 'csv', status: 'queued', fileName: null })
  const report = await readyReport(queued.id)
  t.match(report, { status: 'ready', contentType: 'text/csv; charset=utf-8', error: null })
  t.match(report.fileName, /^incidents-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv$/)

  const { url, expiresAt, file } = await download(report.id)
  t.ok(url.startsWith(`${address}/api/v1/reports/${report.id}/file?`), 'the link is served by the platform')
  const lifetime = new Date(expiresAt).getTime() - Date.now()
  t.ok(lifetime > 14 * 60_000 && lifetime <= 15 * 60_000, 'the link works for 15 minutes')
  t.equal(file.status, 200)
  t.equal(file.headers.get('content-type'), 'text/csv; charset=utf-8')
  t.equal(file.headers.get('content-disposition'), `attachment; filename="${report.fileName}"`)
  t.equal(file.headers.get('cache-control'), 'private, no-store')
  const text = (await file.text()).replace(/^\uFEFF/, '')
  const lines = text.trimEnd().split('\r\n')
  t.equal(
    lines[0],
    'reference,id,detected_at,title,severity,status,services,alerts,acknowledged_at,resolved_at,seconds_to_acknowledge,seconds_to_resolve,type,custom_fields',
  )
  t.equal(lines.length, 4, 'three incidents of the period, nothing before it or of another organization')
  t.match(
    lines[1],
    /^INC-1,[0-9a-f-]{36},[^,]+,Checkout latency,SEV1,resolved,api,1,[^,]+,[^,]+,60,600,,"\{""impact"":""some"",""regions"":\[""eu"",""us""\]\}"$/,
    'the incident’s own times, not its alert’s',
  )
  t.match(lines[3], /^INC-3,[0-9a-f-]{36},[^,]+,Stale cache,SEV2,triage,web,1,,,,,,$/)
  t.notMatch(text, /secret-service|Before the period/)
  t.equal(file.headers.get('content-length'), String(report.sizeBytes))
})

t.test('an incidents report in PDF: summary, MTTA and MTTR, by severity and service, a chart', async (t) => {
  const queued = (await generate(owner, { type: 'incidents', format: 'pdf', ...period })).json<ReportBody>()
  const report = await readyReport(queued.id)
  t.match(report, { status: 'ready', contentType: 'application/pdf' })
  const { file } = await download(report.id)
  t.equal(file.headers.get('content-type'), 'application/pdf')
  const content = await file.arrayBuffer()
  t.equal(Buffer.from(content).subarray(0, 5).toString(), '%PDF-', 'a PDF file')
  if (!hasPdftotext) {
    if (process.env.CI === 'true') t.fail('pdftotext is not installed: .ci/run installs poppler-utils, and CI does not skip the PDF checks')
    else t.comment('pdftotext is not installed (apt-get install -y poppler-utils): the PDF text checks are skipped')
    return
  }
  const text = await pdfText(content)
  t.match(text, 'Incidents report')
  t.match(text, 'Reports Co')
  t.match(text, /Incidents:\s+3/)
  t.match(text, /Mean time to acknowledge \(MTTA\):\s+2\.0 min/)
  t.match(text, /Mean time to resolve \(MTTR\):\s+20\.0 min/)
  t.match(text, /Alerts received:\s+3/)
  t.match(text, 'Incidents per day')
  t.match(text, /Peak: 1 incidents/)
  t.match(text, /SEV1\s+2\s+2\s+2\s+2\.0 min\s+20\.0 min/, 'by severity')
  t.match(text, /web\s+1\s+0\s+0\s+n\/a\s+n\/a/, 'by service')
  t.notMatch(text, 'secret-service')
})

t.test('an uptime report: components by the status page arithmetic, checks by their runs', async (t) => {
  const csv = await readyReport((await generate(member, { type: 'uptime', format: 'csv', ...period })).json<ReportBody>().id)
  const text = await (await download(csv.id)).file.text()
  const lines = text
    .replace(/^\uFEFF/, '')
    .trimEnd()
    .split('\r\n')
  t.equal(lines[0], 'kind,page,name,uptime_percent,major_outage_minutes,partial_outage_minutes,maintenance_minutes,runs,failures')
  // Measured: 7 days less 3 h of maintenance; down: 1 h + 0.3 × 2 h. 1 − 5,760 / 594,000 = 99.030 %.
  t.equal(lines[1], 'status_component,Public,API,99.03,60,120,180,,')
  t.equal(lines[2], 'check:http,,Homepage,80,,,,10,2')

  const pdf = await readyReport((await generate(member, { type: 'uptime', format: 'pdf', ...period })).json<ReportBody>().id)
  const content = await (await download(pdf.id)).file.arrayBuffer()
  if (!hasPdftotext) return
  const pdfReport = await pdfText(content)
  t.match(pdfReport, 'Uptime report')
  t.match(pdfReport, /Lowest component uptime:\s+99\.030 % \(Public \/ API\)/)
  t.match(pdfReport, /Check availability, all runs:\s+80\.000 %/)
  t.match(pdfReport, 'Component downtime per day')
  t.match(pdfReport, /counts a partial outage as 0\.3 of downtime/)
})

t.test('a usage report: product events and active users of the period, from the analytics summaries', async (t) => {
  const send = (who: SignedIn, batch: object[]) =>
    app.inject({ method: 'POST', url: `/api/v1/organizations/${orgId}/analytics/batch`, headers: who.headers, payload: { batch } })
  t.equal(
    (
      await send(owner, [
        { event: 'Check Viewed', timestamp: at(DAY).toISOString() },
        { event: 'Check Viewed', timestamp: at(2 * DAY).toISOString() },
      ])
    ).statusCode,
    200,
  )
  t.equal(
    (
      await send(member, [
        { event: 'Search Run', timestamp: at(2 * DAY).toISOString() },
        { event: 'Search Run', timestamp: at(9 * DAY).toISOString() },
      ])
    ).statusCode,
    200,
  )
  const csv = await readyReport((await generate(member, { type: 'usage', format: 'csv', ...period })).json<ReportBody>().id)
  const lines = (await (await download(csv.id)).file.text())
    .replace(/^\uFEFF/, '')
    .trimEnd()
    .split('\r\n')
  const day = (ms: number) => at(ms).toISOString().slice(0, 10)
  t.same(lines, ['day,event,events', `${day(DAY)},Check Viewed,1`, `${day(2 * DAY)},Check Viewed,1`, `${day(2 * DAY)},Search Run,1`])
  const pdf = await readyReport((await generate(member, { type: 'usage', format: 'pdf', ...period })).json<ReportBody>().id)
  const content = await (await download(pdf.id)).file.arrayBuffer()
  if (!hasPdftotext) return
  const text = await pdfText(content)
  t.match(text, /Events:\s+3/)
  t.match(text, /Active users:\s+2/)
  t.match(text, /Check Viewed\s+2\s+1/)

  // A period that ends now holds today, as the usage API counts it (issue 51: it was dropped).
  const now = new Date()
  t.equal((await send(owner, [{ event: 'Today Viewed', timestamp: now.toISOString() }])).statusCode, 200)
  const lastDay = { from: new Date(now.getTime() - 86_400_000).toISOString(), to: new Date(now.getTime() + 1_000).toISOString() }
  const recent = await readyReport((await generate(member, { type: 'usage', format: 'csv', ...lastDay })).json<ReportBody>().id)
  const recentLines = (await (await download(recent.id)).file.text())
    .replace(/^\uFEFF/, '')
    .trimEnd()
    .split('\r\n')
  t.ok(
    recentLines.includes(`${now.toISOString().slice(0, 10)},Today Viewed,1`),
    `today's event is in the report: ${recentLines.join(' | ')}`,
  )
})

t.test('an AI usage report: requests, tokens and cost of the period', async (t) => {
  const csv = await readyReport((await generate(member, { type: 'ai-usage', format: 'csv', ...period })).json<ReportBody>().id)
  const lines = (await (await download(csv.id)).file.text())
    .replace(/^\uFEFF/, '')
    .trimEnd()
    .split('\r\n')
  t.same(lines, [
    'day,requests,prompt_tokens,completion_tokens,cost_usd',
    `${at(DAY).toISOString().slice(0, 10)},1,100,50,0.0125`,
    `${at(4 * DAY)
      .toISOString()
      .slice(0, 10)},1,200,100,0.025`,
  ])
  const pdf = await readyReport((await generate(member, { type: 'ai-usage', format: 'pdf', ...period })).json<ReportBody>().id)
  const content = await (await download(pdf.id)).file.arrayBuffer()
  if (!hasPdftotext) return
  const text = await pdfText(content)
  t.match(text, /Model requests:\s+2/)
  t.match(text, /Cost:\s+\$0\.0375/)
  t.match(text, /analysis\s+openai\s+gpt-test\s+1\s+100\s+50\s+\$0\.0125/)
})

t.test('an audit log export: entries of the period, formulas neutralised, the reports themselves audited', async (t) => {
  const now = { from: new Date(Date.now() - DAY).toISOString(), to: new Date(Date.now() + HOUR).toISOString() }
  const csv = await readyReport((await generate(owner, { type: 'audit-log', format: 'csv', ...now })).json<ReportBody>().id)
  const text = (await (await download(csv.id, owner)).file.text()).replace(/^\uFEFF/, '')
  t.match(
    text.split('\r\n')[0],
    /^time,actor_type,actor_user_id,actor_email,impersonated_by,scim_token_id,product,entity_type,entity_id,action,changes,ip,request_id$/,
  )
  t.match(text, `"'=HYPERLINK(""http://evil.example"",""click"")"`, 'a formula starts with an apostrophe')
  t.match(text, 'owner@reports.example')
  t.match(text, ',report,', 'earlier reports were audited')

  const pdf = await readyReport((await generate(owner, { type: 'audit-log', format: 'pdf', ...now })).json<ReportBody>().id)
  const content = await (await download(pdf.id, owner)).file.arrayBuffer()
  if (hasPdftotext) {
    const pdfReport = await pdfText(content)
    t.match(pdfReport, 'Audit log report')
    t.match(pdfReport, 'Entries by product and action')
    t.match(pdfReport, /platform: generated/)
  }

  const audit = (
    await app.inject({
      method: 'GET',
      url: `/api/v1/organizations/${orgId}/audit-logs?entityType=report&limit=100`,
      headers: owner.headers,
    })
  ).json<{ data: Array<{ action: string; entityId: string; actor: { userId: string } }> }>()
  const about = (id: string) => audit.data.filter((entry) => entry.entityId === id)
  t.match(
    about(csv.id)
      .map((entry) => [entry.action, entry.actor.userId])
      .sort(),
    [
      ['downloaded', owner.userId],
      ['generated', owner.userId],
    ],
  )
  t.ok(
    audit.data.some((entry) => entry.action === 'downloaded' && entry.actor.userId === member.userId),
    'who downloaded is recorded',
  )
})

t.test('a link that was altered, has expired or names another report is 403', async (t) => {
  const report = await readyReport((await generate(member, { type: 'incidents', format: 'csv', ...period })).json<ReportBody>().id)
  const other = await readyReport((await generate(member, { type: 'uptime', format: 'csv', ...period })).json<ReportBody>().id)
  const { url } = await download(report.id)
  const link = new URL(url)
  const signature = link.searchParams.get('signature')!
  const expires = Number(link.searchParams.get('expires'))
  const fileUrl = (id: string, query: Record<string, string>) => `${address}/api/v1/reports/${id}/file?${new URLSearchParams(query)}`
  const flipped = (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1)
  const past = Math.floor(Date.now() / 1000) - 1
  const signedPast = createHmac('sha256', signingKey).update(`${report.id}.${past}`).digest('base64url')
  const cases: Array<[string, string]> = [
    [fileUrl(report.id, { expires: String(expires), signature: flipped }), 'a changed signature'],
    [fileUrl(report.id, { expires: String(expires + 3600), signature }), 'a later expiry'],
    [fileUrl(report.id, { expires: String(expires), signature: signature.slice(0, -2) }), 'a shortened signature'],
    [fileUrl(other.id, { expires: String(expires), signature }), 'another report'],
    [fileUrl(report.id, { expires: String(past), signature: signedPast }), 'an expired link, correctly signed'],
  ]
  for (const [tampered, what] of cases) {
    const answer = await fetch(tampered)
    t.equal(answer.status, 403, what)
    t.match(await answer.json(), { statusCode: 403, code: 'FORBIDDEN', message: 'The download link is invalid or has expired' })
  }
  t.equal((await fetch(fileUrl(report.id, { expires: String(expires) }))).status, 400, 'no signature')
  t.equal((await fetch(url)).status, 200, 'the link itself still works')
})

t.test('another organization’s reports are 404; a report not ready is 409', async (t) => {
  const report = (await generate(member, { type: 'incidents', format: 'csv', ...period })).json<ReportBody>()
  t.equal((await generate(stranger, { type: 'incidents', format: 'csv', ...period })).statusCode, 404, 'an outsider cannot generate')
  t.equal((await app.inject({ method: 'GET', url: base, headers: stranger.headers })).statusCode, 404, 'nor list')
  const foreign = await app.inject({
    method: 'GET',
    url: `/api/v1/organizations/${otherOrgId}/reports/${report.id}/download`,
    headers: stranger.headers,
  })
  t.equal(foreign.statusCode, 404, 'nor reach it through their own organization')
  const strangers = (
    await app.inject({ method: 'GET', url: `/api/v1/organizations/${otherOrgId}/reports`, headers: stranger.headers })
  ).json()
  t.equal(strangers.meta.total, 0, 'their own organization lists none of ours')

  const pending = await db
    .insertInto('core.reports')
    .values({ organizationId: orgId, type: 'uptime', format: 'pdf', periodFrom: from, periodTo: to, requestedBy: member.userId })
    .returning('id')
    .executeTakeFirstOrThrow()
  const early = await app.inject({ method: 'GET', url: `${base}/${pending.id}/download`, headers: member.headers })
  t.equal(early.statusCode, 409)
  t.match(early.json(), { code: 'CONFLICT', message: 'The report is queued, not ready' })
  t.equal(
    (await app.inject({ method: 'GET', url: `${base}/00000000-0000-4000-8000-000000000000/download`, headers: member.headers })).statusCode,
    404,
  )
  const expires = Math.floor(Date.now() / 1000) + 60
  const signature = createHmac('sha256', signingKey).update(`${pending.id}.${expires}`).digest('base64url')
  const noFile = await fetch(`${address}/api/v1/reports/${pending.id}/file?expires=${expires}&signature=${signature}`)
  t.equal(noFile.status, 404, 'a correctly signed link to a report with no file yet')

  const queued = (await app.inject({ method: 'GET', url: `${base}?status=queued&type=uptime`, headers: member.headers })).json<{
    data: ReportBody[]
  }>()
  t.ok(
    queued.data.some((row) => row.id === pending.id),
    'listed by status and type',
  )
  t.ok(queued.data.every((row) => row.status === 'queued' && row.type === 'uptime'))
  await readyReport(report.id)
})

t.test('an admin or the owner deletes a report: its file and links go with it, and the deletion is audited', async (t) => {
  const report = (await generate(member, { type: 'incidents', format: 'csv', ...period })).json<ReportBody>()
  await readyReport(report.id)
  const { url } = await download(report.id)
  const remove = (who: SignedIn, organizationId = orgId) =>
    app.inject({ method: 'DELETE', url: `/api/v1/organizations/${organizationId}/reports/${report.id}`, headers: who.headers })
  t.equal((await remove(member)).statusCode, 403, 'a member cannot, even the one who asked for it')
  t.equal((await remove(stranger)).statusCode, 404, 'an outsider cannot')
  t.equal((await remove(stranger, otherOrgId)).statusCode, 404, 'nor through their own organization')
  t.equal((await fetch(url)).status, 200, 'refused deletions changed nothing')

  t.equal((await remove(owner)).statusCode, 204)
  t.equal((await remove(owner)).statusCode, 404, 'it is gone')
  const listed = (await app.inject({ method: 'GET', url: `${base}?limit=100`, headers: member.headers })).json<{ data: ReportBody[] }>()
  t.notOk(
    listed.data.some((row) => row.id === report.id),
    'no longer listed',
  )
  t.equal((await app.inject({ method: 'GET', url: `${base}/${report.id}/download`, headers: member.headers })).statusCode, 404)
  t.equal((await fetch(url)).status, 404, 'a link handed out before stops working')
  t.equal(await db.selectFrom('core.reportFiles').select('reportId').where('reportId', '=', report.id).executeTakeFirst(), undefined)
  const audit = await db
    .selectFrom('core.auditLogs')
    .select(['action', 'actorUserId', 'changes'])
    .where('entityId', '=', report.id)
    .where('action', '=', 'deleted')
    .executeTakeFirstOrThrow()
  t.match(audit, { actorUserId: owner.userId, changes: { before: { type: 'incidents', format: 'csv', status: 'ready' } } })
  t.equal(
    (await app.inject({ method: 'DELETE', url: `${base}/not-a-report`, headers: owner.headers })).statusCode,
    400,
    'a malformed id is a bad request',
  )
})

t.test('a report follows the reading rule of the surface its records come from', async (t) => {
  const plain = await service.signIn('plain@reports.example')
  const pagesOnly = await service.signIn('pages@reports.example')
  await memberWith(plain, [])
  await memberWith(pagesOnly, ['statuspages'])

  for (const type of ['incidents', 'uptime']) {
    const refused = await generate(plain, { type, format: 'csv', ...period })
    t.equal(refused.statusCode, 403, `${type} needs a role of its surface`)
    t.match(refused.json().message, type === 'incidents' ? /the alerting role viewer/ : /statuspages role viewer or the synthetics/)
  }
  for (const type of ['audit-log', 'ai-usage']) t.equal((await generate(plain, { type, format: 'csv', ...period })).statusCode, 202, type)

  const half = await readyReport((await generate(pagesOnly, { type: 'uptime', format: 'csv', ...period })).json<ReportBody>().id)
  t.match(half, { status: 'ready', sections: ['statuspages'] })
  const { file } = await download(half.id, pagesOnly)
  t.notMatch(await file.text(), /check:/, 'no synthetic check is in it')
  const pdf = await readyReport((await generate(pagesOnly, { type: 'uptime', format: 'pdf', ...period })).json<ReportBody>().id)
  t.match(await pdfText(await (await download(pdf.id, pagesOnly)).file.arrayBuffer()), /Synthetic checks are left out/, 'and it says so')

  const full = await readyReport((await generate(member, { type: 'uptime', format: 'csv', ...period })).json<ReportBody>().id)
  t.same(full.sections, ['statuspages', 'synthetics'])
  const incidents = await readyReport((await generate(member, { type: 'incidents', format: 'csv', ...period })).json<ReportBody>().id)
  for (const [who, id, what] of [
    [pagesOnly, full.id, 'a whole uptime report'],
    [plain, incidents.id, 'an incidents report'],
  ] as const) {
    const link = await app.inject({ method: 'GET', url: `${base}/${id}/download`, headers: who.headers })
    t.equal(link.statusCode, 403, `someone who may not read all of ${what} gets no link to it`)
  }
})

t.test('reports are fair: five of an organization wait at once, more are 429, another organization is not held up', async (t) => {
  const waiting = await db
    .insertInto('core.reports')
    .values(
      Array.from({ length: 5 }, () => ({
        organizationId: orgId,
        type: 'audit-log',
        format: 'csv',
        periodFrom: from,
        periodTo: to,
        requestedBy: member.userId,
      })),
    )
    .returning('id')
    .execute()
  t.teardown(() =>
    db
      .deleteFrom('core.reports')
      .where(
        'id',
        'in',
        waiting.map((row) => row.id),
      )
      .execute(),
  )
  const sixth = await generate(member, { type: 'audit-log', format: 'csv', ...period })
  t.equal(sixth.statusCode, 429)
  t.match(sixth.json(), { code: 'RATE_LIMITED', message: /5 of the organization's reports are waiting/ })
  t.ok(Number(sixth.headers['retry-after']) > 0)
  const elsewhere = await generate(stranger, { type: 'audit-log', format: 'csv', ...period }, otherOrgId)
  t.equal(elsewhere.statusCode, 202, 'another organization’s report is taken')
})

t.test('a report whose writer died (no heartbeat for a minute) is written again by the next sweep', async (t) => {
  const abandoned = await db
    .insertInto('core.reports')
    .values({
      organizationId: orgId,
      type: 'audit-log',
      format: 'csv',
      periodFrom: from,
      periodTo: to,
      requestedBy: member.userId,
      status: 'running',
      startedAt: new Date(Date.now() - 120_000),
      heartbeatAt: new Date(Date.now() - 120_000),
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  const alive = await db
    .insertInto('core.reports')
    .values({
      organizationId: orgId,
      type: 'audit-log',
      format: 'csv',
      periodFrom: from,
      periodTo: to,
      requestedBy: member.userId,
      status: 'running',
      startedAt: new Date(),
      heartbeatAt: new Date(),
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  t.teardown(() => db.deleteFrom('core.reports').where('id', '=', alive.id).execute())
  await app.jobs.send('reports.sweep', {})
  t.match(await readyReport(abandoned.id), { status: 'ready' }, 'written by this replica after the sweep')
  const untouched = await db.selectFrom('core.reports').select('status').where('id', '=', alive.id).executeTakeFirstOrThrow()
  t.equal(untouched.status, 'running', 'a report whose writer beats is left to it')
})
