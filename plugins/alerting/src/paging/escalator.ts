import type { FastifyBaseLogger } from 'fastify'
import type { Database, Executor } from '@svc/db'
import { createPoller, ensureQueue, type JobQueue, workEach } from '@svc/jobs'
import {
  type AlertRow,
  alertsByIds,
  claimDueRepages,
  claimPendingEscalations,
  claimStep,
  type EscalationChange,
  type EscalationState,
  findAlert,
  findEscalation,
  heldBySilence,
  lockOrCreateEscalation,
  pendingEscalationExists,
  recordAlertEvent,
  REPAGE_DUE_EXISTS,
  reopenAlert,
  setEscalation,
  setEscalations,
} from '../alerts/index.js'
import {
  addTimeline,
  type AlertIncidents,
  lockPagingOfIncidents,
  openIncidentsOf,
  PAGING_STATES,
  repageContextOf,
  updateIncident,
} from '../incidents/index.js'
import {
  findPolicy,
  type MatchedAlert,
  type Matchers,
  matchesAlert,
  routeAlert,
  SILENCE_END_QUEUE,
  silenceEnd,
  servicePoliciesOf,
  type SilenceEndJob,
  silencesInForce,
  type Step,
  storedSteps,
} from '../oncall/index.js'
import { routingOfConfigs, storedRoutingRules } from '../intake/index.js'
import { NOTIFICATION_RULE_QUEUE, pagePeople, pageStep, pagingReads, type NotificationRuleJob, type PagingDeps } from './page.js'
import { createStepWrites } from './step-writes.js'

/** One job per step of an escalation, run at its time: `{ alertId, round, step }`. */
export const STEP_QUEUE = 'alerting.escalation-step'
export interface StepJob {
  alertId: string
  round: number
  step: number
}

export interface EscalatorDeps extends PagingDeps {
  database: Database
  jobs: JobQueue
  log: FastifyBaseLogger
  /** Lets the chat and webhook workers look at once, after a step that queued messages commits. */
  chatQueued: () => void
  /** Whether this replica's event dispatcher finished a round in the last `ms` (alerts/event-bus.ts). */
  dispatcherProgressedWithin: (ms: number) => boolean
}

export interface Escalator {
  /**
   * Starts escalating an open alert with a policy and pages its first step, in the caller's
   * transaction, unless it is escalating (or silenced) already; a silence in force holds it
   * instead.
   */
  escalateWith(trx: Executor, alert: AlertRow & { organizationId: string }, policyId: string): Promise<{ started: boolean; detail: string }>
  /**
   * Pages the alert's next step now rather than when its delay ends (a responder's "escalate"):
   * answers what happened, or why nothing did (not escalating, acknowledged, no step left).
   */
  escalateNow(organizationId: string, alertId: string): Promise<{ escalated: boolean; detail: string }>
  /**
   * Pages these targets about an open alert once, in the caller's transaction, with no policy
   * and no later step (a responder request); `label` says why in the page.
   */
  pageTargets(trx: Executor, alert: AlertRow & { organizationId: string }, targets: Step['targets'], label: string): Promise<string[]>
  /** Lets the messages an `escalateWith` queued go out now; call after its transaction commits. */
  afterCommit(): void
  /** Look for acknowledged alerts due to page again now (a snooze was set to end at once). */
  wakeRepages(): void
  /** Look for new escalations now rather than at the next poll; call once pending escalations are committed (ingestion does). */
  wake(): void
  /** Let go of a silence's alerts now rather than at the next poll; call after ending a silence commits. */
  wakeSilences(): void
  start(): Promise<void>
  stop(): Promise<void>
}

/** How often each replica looks for acknowledged alerts due to page again (timeouts are minutes long). */
const REPAGE_POLL_MS = 5_000
/** How often each replica looks for escalations written with new alerts (it is also woken at once by ingestion). */
const POLL_MS = 1_000
const BATCH = 50
/**
 * How long a new alert's first page waits for correlation once the event dispatcher has stopped
 * making progress (a subscriber failing every batch): while it makes progress, however far behind,
 * the page waits until correlation has placed the alert.
 */
const CORRELATION_WAIT_SECONDS = 10
const POLLING_INTERVAL_SECONDS = 0.5

/**
 * Runs escalations (docs/decisions/0014-on-call.md). A new alert of a config that escalates is
 * written with a `pending` escalation in its own statement; this worker claims pending ones in
 * batches, routes each to a policy and pages its first step at once, in the claiming
 * transaction. Each later step is a job that takes its turn by compare-and-set on the
 * escalation's position, pages the step's targets, and sends the next step's job, all in one
 * transaction: a step runs once whatever retries and replicas do, and an acknowledgement or
 * resolution committed first leaves it nothing to take.
 */
export function createEscalator(deps: EscalatorDeps): Escalator {
  const { database, jobs, log } = deps
  const { db } = database
  let silenceWorker: string | undefined

  /**
   * What one transaction reads once however many escalations it handles: each organization's
   * silences in force, each policy, and the people a step pages (page.ts, `pagingReads`). With
   * `batchEscalations`, the escalations' changes are kept and written together by `flush` (the
   * starter's batch: one statement, not one an alert); nothing in that transaction reads them back.
   */
  function transactionView(trx: Executor, now: Date, { batchEscalations = false } = {}) {
    const silences = new Map<string, ReturnType<typeof silencesInForce>>()
    const policies = new Map<string, ReturnType<typeof findPolicy>>()
    const alerts = new Map<string, AlertRow & { organizationId: string }>()
    const changes = new Map<string, EscalationChange>()
    const writes = createStepWrites({ notifier: deps.notifier, jobs })
    const reads = pagingReads(trx, deps)
    return {
      now,
      reads,
      writes,
      async setEscalation(alertId: string, change: EscalationChange) {
        if (!batchEscalations) return setEscalation(trx, alertId, change)
        changes.set(alertId, { ...changes.get(alertId), ...change })
      },
      /** The state this transaction gave the alert's escalation so far, if it was batched. */
      escalationState(alertId: string): EscalationState | undefined {
        return changes.get(alertId)?.state
      },
      /** Writes what the transaction collected: the escalations' changes, then the steps' writes. */
      async flush() {
        await setEscalations(
          trx,
          [...changes].map(([alertId, change]) => ({ alertId, change })),
        )
        changes.clear()
        await writes.flush(trx)
      },
      /** Reads these alerts in one statement for the steps about to run, and what their pages say of their incidents and services. */
      async prefetchAlerts(alertIds: string[]) {
        const found = await alertsByIds(trx, alertIds)
        for (const alert of found) alerts.set(alert.id, alert)
        await reads.prefetch(found, deps.productUrl)
      },
      async alert(organizationId: string, alertId: string) {
        const known = alerts.get(alertId)
        return known && known.organizationId === organizationId ? known : findAlert(trx, organizationId, alertId)
      },
      /** The silence in force that matches an alert (the one ending last), if any. */
      async silenceOf(organizationId: string, alert: MatchedAlert) {
        let inForce = silences.get(organizationId)
        if (!inForce) silences.set(organizationId, (inForce = silencesInForce(trx, organizationId, now)))
        return (await inForce).find((silence) => matchesAlert(silence.matchers as Matchers, alert))
      },
      policy(organizationId: string, policyId: string) {
        let policy = policies.get(policyId)
        if (!policy) policies.set(policyId, (policy = findPolicy(trx, organizationId, policyId)))
        return policy
      },
    }
  }
  type View = ReturnType<typeof transactionView>

  /** Holds the escalation under the silence: stored and shown, paging no one until it ends. */
  async function silence(
    trx: Executor,
    view: View,
    organizationId: string,
    alertId: string,
    held: { id: string; comment: string; endsAt: Date },
    policyId?: string,
  ) {
    const note = `silenced until ${held.endsAt.toISOString()}: ${held.comment}`
    await view.setEscalation(alertId, { state: 'silenced', ...(policyId ? { policyId } : {}), silenceId: held.id, nextAt: null, note })
    await recordAlertEvent(trx, organizationId, alertId, 'silenced', { silenceId: held.id, endsAt: held.endsAt.toISOString() })
  }

  /**
   * The escalation's next position after `job`, or undefined when every step and repeat has run.
   * After the last step of the last round comes the end of its delay (`step` one past the last):
   * nobody has had the whole delay to acknowledge until then, so the escalation is exhausted there.
   */
  function nextPosition(job: StepJob, steps: Step[], repeat: number): Omit<StepJob, 'alertId'> | undefined {
    if (job.step + 1 < steps.length) return { round: job.round, step: job.step + 1 }
    if (job.round < repeat) return { round: job.round + 1, step: 0 }
    return job.step < steps.length && steps[job.step]!.delayMinutes > 0 ? { round: job.round, step: steps.length } : undefined
  }

  /**
   * Runs the step at `job`'s position, whose turn the caller holds (the escalation row locked),
   * in the caller's transaction: pages its targets and sends the next step's job. Answers
   * whether it queued messages.
   */
  async function runStepIn(
    trx: Executor,
    view: View,
    job: StepJob,
    organizationId: string,
    policyId: string | null,
    starting = false,
  ): Promise<boolean> {
    // A first step run as its escalation starts writes the start with its outcome, in one update.
    const start = starting ? { policyId, silenceId: null, note: null, round: job.round, step: job.step } : {}
    const end = async (reason: string) => {
      await view.setEscalation(job.alertId, { ...start, state: 'exhausted', nextAt: null, note: reason })
      view.writes.event(organizationId, job.alertId, 'escalation_ended', { reason })
    }
    // No lock on the alert: an acknowledgement takes the alert's row and then the escalation's,
    // which this transaction holds; waiting on the alert here could deadlock with it.
    const alert = await view.alert(organizationId, job.alertId)
    if (!alert || alert.status !== 'open') {
      await view.setEscalation(job.alertId, { ...start, state: alert?.status === 'resolved' ? 'resolved' : 'acknowledged', nextAt: null })
      return false
    }
    const policy = policyId ? await view.policy(organizationId, policyId) : undefined
    if (!policy) {
      await end('its escalation policy was deleted')
      return false
    }
    const steps = storedSteps(policy.steps)
    const step = steps[job.step]
    if (!step) {
      // The last step's delay has passed: the escalation ran its course.
      const waitedOut = job.step === steps.length && job.round >= policy.repeatCount
      await end(waitedOut ? 'every step ran and nobody acknowledged' : 'the escalation policy has no more steps')
      return false
    }
    const held = await view.silenceOf(organizationId, { ...alert, labels: alert.labels as Record<string, string> })
    if (held) {
      await silence(trx, view, organizationId, job.alertId, held, policy.id)
      return false
    }
    const position = { round: job.round, step: job.step, policyName: policy.name }
    const users = await pageStep(trx, deps, view.reads, view.writes, alert, organizationId, position, step.targets, view.now)
    view.writes.event(organizationId, job.alertId, 'escalated', {
      policyId: policy.id,
      round: job.round,
      step: job.step,
      targets: step.targets,
      paged: users,
    })
    const next = nextPosition(job, steps, policy.repeatCount)
    if (!next) {
      await end('every step ran and nobody acknowledged')
      return true
    }
    const nextAt = new Date(view.now.getTime() + step.delayMinutes * 60_000)
    await view.setEscalation(job.alertId, { ...start, state: 'active', ...next, nextAt })
    const nextJob = { alertId: job.alertId, ...next }
    view.writes.job({ name: STEP_QUEUE, data: nextJob, startAfter: nextAt, singletonKey: `${job.alertId}:${next.round}:${next.step}` })
    return true
  }

  /**
   * Starts an escalation and runs its first step at once, in the caller's transaction (the
   * escalation row locked by it): no job round trip between an alert and its first page.
   */
  async function begin(trx: Executor, view: View, organizationId: string, alertId: string, policyId: string | null): Promise<boolean> {
    return runStepIn(trx, view, { alertId, round: 0, step: 0 }, organizationId, policyId, true)
  }

  /** Lets the deliveries a committed step queued go out now rather than at their next poll. */
  function queued() {
    deps.notifier.wake()
    deps.chatQueued()
  }

  /**
   * Up to BATCH pending escalations, claimed, each with what routing needs: its config's rules and
   * policy, or (an alert of no config, a synthetic check's) the policy on its pending row; where
   * neither names a policy, the policy of the service its alert names (the catalog, by key or alias).
   */
  async function claimPending(trx: Executor) {
    const stalled = !deps.dispatcherProgressedWithin(CORRELATION_WAIT_SECONDS * 1_000)
    const claimed = await claimPendingEscalations(trx, BATCH, stalled ? CORRELATION_WAIT_SECONDS : undefined)
    const routing = await routingOfConfigs(
      trx,
      claimed.flatMap((row) => (row.configId ? [row.configId] : [])),
    )
    const routed = claimed.map((row) => {
      const config = row.configId ? routing.get(row.configId) : undefined
      return { ...row, routingRules: config?.routingRules ?? null, escalationPolicyId: config?.escalationPolicyId ?? row.policyId }
    })
    const servicesByOrganization = new Map<string, string[]>()
    for (const row of routed)
      if (!row.escalationPolicyId && row.service)
        servicesByOrganization.set(row.organizationId, [...(servicesByOrganization.get(row.organizationId) ?? []), row.service])
    if (servicesByOrganization.size === 0) return routed
    const servicePolicies = new Map<string, Map<string, string>>()
    for (const [organizationId, names] of servicesByOrganization)
      servicePolicies.set(organizationId, await servicePoliciesOf(trx, organizationId, names))
    return routed.map((row) =>
      row.escalationPolicyId || !row.service
        ? row
        : { ...row, escalationPolicyId: servicePolicies.get(row.organizationId)?.get(row.service.toLowerCase()) ?? null },
    )
  }

  /** Starts up to BATCH pending escalations; answers how many it took. */
  async function startPending(): Promise<number> {
    const { taken, paged } = await db.transaction().execute(async (trx) => {
      const pending = await claimPending(trx)
      const view = transactionView(trx, new Date(), { batchEscalations: true })
      await view.prefetchAlerts(pending.filter((row) => row.status === 'open').map((row) => row.alertId))
      // Whether another alert of its incident pages, for the whole batch in one statement, read
      // once the incidents' paging locks are held (a starter of another replica deciding for the
      // same incident commits first); what this batch starts is kept track of as it goes.
      await lockPagingOfIncidents(trx, pending)
      const incidents = await openIncidentsOf(trx, pending)
      const pagingInBatch = new Map<string, NonNullable<AlertIncidents['paging']>>()
      let paged = false
      for (const row of pending) {
        const ofAlert = incidents.get(row.alertId) ?? { incidents: [] }
        const paging = ofAlert.paging ?? ofAlert.incidents.map(({ incidentId }) => pagingInBatch.get(incidentId)).find(Boolean)
        if (await startOne(trx, view, row, paging)) paged = true
        // This alert now pages for its incidents, as `openIncidentsOf` would read it once written.
        if (!PAGING.has(view.escalationState(row.alertId) ?? 'pending')) continue
        for (const { incidentId, number, rule } of ofAlert.incidents)
          if (rule !== 'responder_request' && !pagingInBatch.has(incidentId))
            pagingInBatch.set(incidentId, { incidentId, number, alertId: row.alertId })
      }
      await view.flush()
      return { taken: pending.length, paged }
    })
    if (paged) queued()
    return taken
  }

  /**
   * Starts one claimed escalation in the starter's transaction: ends it at once when its alert
   * is no longer open, unrouted, silenced, or grouped (another alert of its incident pages,
   * `paging`); otherwise pages the first step. Answers whether it queued messages.
   */
  async function startOne(
    trx: Executor,
    view: View,
    row: Awaited<ReturnType<typeof claimPending>>[number],
    paging: AlertIncidents['paging'],
  ): Promise<boolean> {
    if (row.status !== 'open') {
      await view.setEscalation(row.alertId, { state: row.status === 'resolved' ? 'resolved' : 'acknowledged', nextAt: null })
      return false
    }
    const route = routeAlert(storedRoutingRules(row.routingRules ?? []), row.escalationPolicyId, {
      priority: row.priority,
      service: row.service,
      labels: row.labels as Record<string, string>,
    })
    if (!route.policyId) {
      const note = 'no routing rule matched, and neither the config nor the alert’s service has an escalation policy'
      await view.setEscalation(row.alertId, { state: 'unrouted', nextAt: null, note })
      view.writes.event(row.organizationId, row.alertId, 'escalation_ended', { reason: note })
      return false
    }
    const alert = { priority: row.priority, service: row.service, labels: row.labels as Record<string, string> }
    const held = await view.silenceOf(row.organizationId, alert)
    if (held) {
      await silence(trx, view, row.organizationId, row.alertId, held, route.policyId)
      return false
    }
    // An alert storm pages once per incident (decision 0019): an alert that joined an
    // incident whose other alert is paging, or was paged, pages no one itself.
    if (paging) {
      const note = `grouped into INC-${paging.number}, paged through alert ${paging.alertId}`
      await view.setEscalation(row.alertId, { state: 'grouped', policyId: route.policyId, nextAt: null, note })
      view.writes.event(row.organizationId, row.alertId, 'escalation_ended', { reason: note, incidentId: paging.incidentId })
      return false
    }
    return begin(trx, view, row.organizationId, row.alertId, route.policyId)
  }

  /**
   * Pages again the acknowledged alerts whose time came (decision 0019, "Paging again"): the
   * policy's acknowledgement timeout, or the snooze of their incident. The alert is open again
   * (event `reopened`), its open incident back in triage (timeline `repaged`), and its escalation
   * starts over from the first step, unless another alert of the incident escalates already.
   */
  async function repageDue(): Promise<number> {
    const { taken, paged } = await db.transaction().execute(async (trx) => {
      const due = await claimDueRepages(trx, BATCH)
      // Whether another alert of the incident escalates is read below under the paging locks, as the starter does.
      await lockPagingOfIncidents(trx, due)
      const view = transactionView(trx, new Date())
      let paged = false
      for (const row of due) {
        if (row.status !== 'acknowledged' || !row.policyId) {
          await view.setEscalation(row.alertId, { state: row.status === 'resolved' ? 'resolved' : 'acknowledged', nextAt: null })
          continue
        }
        const incident = await repageContextOf(trx, row.organizationId, row.alertId)
        // A snooze moved the re-page time to its end, so a snoozed incident's alert re-pages when it ends.
        const snoozed = incident?.snoozedUntil != null
        const reason = snoozed ? 'the incident’s snooze ended' : 'its acknowledgement timed out'
        await reopenAlert(trx, row, reason)
        if (incident) {
          await updateIncident(trx, row.organizationId, incident.id, { status: 'triage', ...(snoozed ? { snoozedUntil: null } : {}) })
          await addTimeline(trx, [
            {
              organizationId: row.organizationId,
              incidentId: incident.id,
              kind: 'repaged',
              body: null,
              data: { alertId: row.alertId, reason },
              authorId: null,
            },
          ])
        }
        if (incident?.escalatingAlertId) {
          const note = `grouped into INC-${incident.number}, paged through alert ${incident.escalatingAlertId}`
          await view.setEscalation(row.alertId, { state: 'grouped', nextAt: null, note })
          continue
        }
        if (await begin(trx, view, row.organizationId, row.alertId, row.policyId)) paged = true
      }
      await view.flush()
      return { taken: due.length, paged }
    })
    if (paged) queued()
    return taken
  }

  /**
   * A channel of a person's notification rule whose delay passed: it pages only while the alert
   * is open (nobody acknowledged or resolved it) and the person is still an active member.
   */
  async function runNotificationRule(job: NotificationRuleJob): Promise<void> {
    const paged = await db.transaction().execute(async (trx) => {
      const alert = await findAlert(trx, job.organizationId, job.alertId)
      if (!alert || alert.status !== 'open') return false
      const view = transactionView(trx, new Date())
      if (!(await view.reads.active(job.organizationId, [job.userId])).has(job.userId)) return false
      const person = { userId: job.userId, target: job.target, channels: [job.channel] }
      await pagePeople(deps, view.reads, view.writes, alert, job.organizationId, job.position, [person], view.now)
      await view.flush()
      return true
    })
    if (paged) queued()
  }

  async function runStep(job: StepJob): Promise<void> {
    const paged = await db.transaction().execute(async (trx) => {
      const claimed = await claimStep(trx, job)
      if (!claimed) return false
      const view = transactionView(trx, new Date())
      const paged = await runStepIn(trx, view, job, claimed.organizationId, claimed.policyId)
      await view.flush()
      return paged
    })
    if (paged) queued()
  }

  /**
   * A silence ended (or was deleted or shortened): each alert it held that is still open and
   * unacknowledged starts its escalation once, unless another silence in force matches it. A
   * silence that was extended instead still holds them; its later job lets go.
   */
  async function releaseSilence({ silenceId }: SilenceEndJob): Promise<void> {
    const paged = await db.transaction().execute(async (trx) => {
      const silenceRow = await silenceEnd(trx, silenceId)
      const view = transactionView(trx, new Date())
      if (silenceRow && silenceRow.endsAt > view.now) return false
      let paged = false
      for (const row of await heldBySilence(trx, silenceId)) {
        if (row.status !== 'open') {
          await view.setEscalation(row.alertId, { state: row.status === 'resolved' ? 'resolved' : 'acknowledged', nextAt: null })
          continue
        }
        const alert = { priority: row.priority, service: row.service, labels: row.labels as Record<string, string> }
        const next = await view.silenceOf(row.organizationId, alert)
        if (next) await silence(trx, view, row.organizationId, row.alertId, next)
        else if (await begin(trx, view, row.organizationId, row.alertId, row.policyId)) paged = true
      }
      await view.flush()
      return paged
    })
    if (paged) queued()
  }

  /**
   * A second starter takes a batch while the first's is under way, woken when the first found a
   * full one (a backlog): a batch's transaction waits on the database for most of its time, which
   * the other's fills. The two decide as two replicas' starters do (decision 0019, "A storm pages
   * once per incident"). The embedded database runs one transaction at a time: one starter there.
   */
  const helper =
    database.kind === 'postgres'
      ? createPoller({
          intervalMs: null,
          log,
          what: 'starting escalations (the second starter)',
          async round() {
            return { more: (await startPending()) === BATCH }
          },
        })
      : undefined
  const starter = createPoller({
    intervalMs: POLL_MS,
    log,
    what: 'starting escalations',
    watched: { jobs, condition: pendingEscalationExists(CORRELATION_WAIT_SECONDS) },
    async round() {
      const taken = await startPending()
      if (taken === BATCH) helper?.wake()
      return { more: taken === BATCH }
    },
  })

  const repager = createPoller({
    intervalMs: REPAGE_POLL_MS,
    log,
    what: 'paging acknowledged alerts again',
    watched: { jobs, condition: REPAGE_DUE_EXISTS },
    async round() {
      const taken = await repageDue()
      return { more: taken === BATCH }
    },
  })

  const ESCALATING = new Set(['pending', 'active', 'silenced'])
  const PAGING = new Set<string>(PAGING_STATES)

  return {
    async escalateWith(trx, alert, policyId) {
      if (alert.status !== 'open') return { started: false, detail: `the alert is ${alert.status}` }
      const current = await lockOrCreateEscalation(trx, alert)
      if (ESCALATING.has(current.state)) return { started: false, detail: `the alert's escalation is ${current.state} already` }
      const view = transactionView(trx, new Date())
      const held = await view.silenceOf(alert.organizationId, { ...alert, labels: alert.labels as Record<string, string> })
      if (held) {
        await silence(trx, view, alert.organizationId, alert.id, held, policyId)
        return { started: false, detail: `a silence holds the alert until ${held.endsAt.toISOString()}` }
      }
      await begin(trx, view, alert.organizationId, alert.id, policyId)
      await view.flush()
      return { started: true, detail: 'escalation started: its first step paged' }
    },
    async pageTargets(trx, alert, targets, label) {
      await lockOrCreateEscalation(trx, alert)
      const view = transactionView(trx, new Date())
      const position = { round: 0, step: 0, policyName: label }
      const users = await pageStep(trx, deps, view.reads, view.writes, alert, alert.organizationId, position, targets, view.now)
      view.writes.event(alert.organizationId, alert.id, 'escalated', { round: 0, step: 0, targets, paged: users })
      const note = 'paged its targets once, with no policy'
      await view.setEscalation(alert.id, { state: 'exhausted', policyId: null, round: 0, step: 0, nextAt: null, note })
      await view.flush()
      return users
    },
    async escalateNow(organizationId, alertId) {
      const current = await findEscalation(db, organizationId, alertId)
      if (!current) return { escalated: false, detail: 'the alert does not escalate' }
      if (current.state !== 'active') return { escalated: false, detail: `the alert's escalation is ${current.state}` }
      // The step at the escalation's position is the one its delay holds back; taking its turn
      // now (compare-and-set) leaves the job waiting for it nothing to do.
      const position = { alertId, round: current.round, step: current.step }
      await runStep(position)
      const after = await findEscalation(db, organizationId, alertId)
      const moved = after !== undefined && (after.round !== current.round || after.step !== current.step || after.state !== 'active')
      return moved
        ? { escalated: true, detail: `step ${current.step + 1}${current.round > 0 ? ` of round ${current.round + 1}` : ''} paged now` }
        : { escalated: false, detail: 'the escalation moved on meanwhile' }
    },
    afterCommit: queued,
    wakeSilences() {
      if (silenceWorker) jobs.notifyWorker(silenceWorker)
    },
    wake: () => starter.wake(),
    wakeRepages: () => repager.wake(),
    async start() {
      await ensureQueue(jobs, STEP_QUEUE, { retryLimit: 5, retryDelay: 5, retryBackoff: true, expireInSeconds: 5 * 60 })
      await workEach<StepJob>(jobs, STEP_QUEUE, { batchSize: 10, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS }, (job) =>
        runStep(job.data),
      )
      await ensureQueue(jobs, NOTIFICATION_RULE_QUEUE, { retryLimit: 5, retryDelay: 5, retryBackoff: true, expireInSeconds: 5 * 60 })
      await workEach<NotificationRuleJob>(
        jobs,
        NOTIFICATION_RULE_QUEUE,
        { batchSize: 10, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS },
        (job) => runNotificationRule(job.data),
      )
      await ensureQueue(jobs, SILENCE_END_QUEUE, { retryLimit: 5, retryDelay: 5, retryBackoff: true, expireInSeconds: 5 * 60 })
      silenceWorker = await jobs.work<SilenceEndJob>(
        SILENCE_END_QUEUE,
        { pollingIntervalSeconds: POLLING_INTERVAL_SECONDS },
        async ([job]) => {
          if (job) await releaseSilence(job.data)
        },
      )
      starter.start()
      helper?.start()
      repager.start()
    },
    async stop() {
      await starter.stop()
      await helper?.stop()
      await repager.stop()
      await jobs.offWork(STEP_QUEUE)
      await jobs.offWork(NOTIFICATION_RULE_QUEUE)
      await jobs.offWork(SILENCE_END_QUEUE)
      silenceWorker = undefined
    },
  }
}
