import { sql } from 'kysely'
import t from 'tap'
import { startTestService, until } from '@svc/testkit'
import { buildApp } from '../../../src/app.js'
import { alertingOrganization } from '../../organization-setup.js'

// One rule ends an alert's escalation, whoever acknowledges or resolves the alert: a person, the
// source that sent it, or the incident it is in (decision 0014, "Escalations"). Each way is
// driven from every escalation state an open alert can be in, and must leave the same state.

const service = await startTestService(t, buildApp)
const { app } = service
const db = app.database.db
const { orgId, person } = await alertingOrganization(service, 'lifecycle', { ada: 'responder' })
const [owner, ada] = ['owner', 'ada'].map(person)
const base = `/api/v1/organizations/${orgId}`
type Who = { headers: { authorization: string } }
const call = (who: Who, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) })

const policy = await call(owner!, 'POST', `${base}/escalation-policies`, {
  name: 'Ada, timeout after 10',
  ackTimeoutMinutes: 10,
  steps: [{ delayMinutes: 30, targets: [{ type: 'user', id: ada!.userId }] }],
})
const config = await call(owner!, 'POST', `${base}/webhooks`, { name: 'Lifecycle', escalationPolicyId: policy.json().id })
const ingestPath = config.json().ingestPath as string
const send = async (event: object) =>
  app.inject({ method: 'POST', url: ingestPath, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(event) })

const escalationOf = (alertId: string) =>
  db.selectFrom('divinux.alertEscalations').select(['state', 'nextAt']).where('alertId', '=', alertId).executeTakeFirstOrThrow()

/** An open alert whose escalation has started and is then put in `state`, as paging would leave it. */
async function openAlertIn(state: string, fingerprint: string): Promise<string> {
  const alertId = (await send({ title: `Disk filling (${fingerprint})`, fingerprint, priority: 'P3' })).json().alertId as string
  await until(`the escalation of ${fingerprint} to start`, async () =>
    (await escalationOf(alertId)).state !== 'pending' ? true : undefined,
  )
  await sql`update divinux.alert_escalations set state = ${state}, next_at = null where alert_id = ${alertId}`.execute(db)
  return alertId
}

/** How an alert gets acknowledged or resolved. */
const ways: Record<string, (alertId: string, fingerprint: string, to: 'acknowledged' | 'resolved') => Promise<void>> = {
  'a person, through the API': async (alertId, _fingerprint, to) => {
    const answer = await call(ada!, 'POST', `${base}/alerts/${alertId}/${to === 'acknowledged' ? 'acknowledge' : 'resolve'}`)
    if (answer.statusCode !== 200) throw new Error(answer.body)
  },
  'the source, by fingerprint': async (_alertId, fingerprint, to) => {
    const answer = await send({ title: 'Disk filling', fingerprint, status: to })
    if (answer.statusCode !== 202) throw new Error(answer.body)
  },
  'its incident': async (alertId, fingerprint, to) => {
    const declared = await call(owner!, 'POST', `${base}/incidents`, {
      title: `Disk (${fingerprint})`,
      severity: 'SEV3',
      alertIds: [alertId],
    })
    if (declared.statusCode !== 201) throw new Error(declared.body)
    const status = to === 'acknowledged' ? 'investigating' : 'resolved'
    const answer = await call(owner!, 'PATCH', `${base}/incidents/${declared.json().id}`, { status })
    if (answer.statusCode !== 200) throw new Error(answer.body)
  },
}

// What each move leaves, from each state an open alert's escalation can be in.
const expected: Record<'acknowledged' | 'resolved', Record<string, string>> = {
  acknowledged: {
    pending: 'acknowledged',
    active: 'acknowledged',
    silenced: 'acknowledged',
    exhausted: 'acknowledged',
    grouped: 'grouped',
    unrouted: 'unrouted',
  },
  resolved: {
    pending: 'resolved',
    active: 'resolved',
    silenced: 'resolved',
    exhausted: 'resolved',
    grouped: 'resolved',
    unrouted: 'unrouted',
  },
}

let n = 0
for (const [way, move] of Object.entries(ways)) {
  t.test(`acknowledged or resolved by ${way}: the escalation ends as everywhere else`, async (t) => {
    for (const to of ['acknowledged', 'resolved'] as const) {
      for (const [from, state] of Object.entries(expected[to])) {
        const fingerprint = `lifecycle-${++n}`
        const alertId = await openAlertIn(from, fingerprint)
        await move(alertId, fingerprint, to)
        const after = await escalationOf(alertId)
        t.equal(after.state, state, `${to} from ${from}: ${state}`)
        if (state === 'acknowledged') {
          const minutes = ((after.nextAt?.getTime() ?? 0) - Date.now()) / 60_000
          t.ok(minutes > 9.5 && minutes <= 10, `the policy's acknowledgement timeout pages again in 10 minutes (${minutes.toFixed(2)})`)
        } else {
          t.equal(after.nextAt, null, 'and nothing is due')
        }
      }
    }
    // An acknowledged alert resolved the same way: its acknowledgement timeout is cleared.
    const fingerprint = `lifecycle-${++n}`
    const alertId = await openAlertIn('active', fingerprint)
    await call(ada!, 'POST', `${base}/alerts/${alertId}/acknowledge`)
    t.equal((await escalationOf(alertId)).state, 'acknowledged')
    await move(alertId, fingerprint, 'resolved')
    t.match(await escalationOf(alertId), { state: 'resolved', nextAt: null }, 'acknowledged, then resolved: nothing pages again')
  })
}
