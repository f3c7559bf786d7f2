import type { Findings } from '../investigation/findings.js'
import type { Subject } from '../investigation/subject.js'
import type { Gathered } from '../investigation/tools.js'

// The comms agent (decision 0021, "Drafts and their publication"): drafts the status page update
// and a stakeholder summary from the incident's state and the investigation, in plain language:
// no service names, hosts, versions, commits or people, only what the public sees (the status
// page's component names). A draft is never published by the agent: a person publishes it.
// Where a status page has an incident template for the affected components (decision 0015,
// "Incident templates"), an opening draft takes its words: what the team wrote ahead beats ours.

export type PublicStatus = 'investigating' | 'identified' | 'monitoring' | 'resolved'

/** An incident template of a status page, in the words of the page's default language. */
export interface CommsTemplate {
  key: string
  title: string
  body: string
  /** The components it gives a status. */
  componentIds: string[]
}

export interface CommsDraft {
  /** `name` is the public incident's name where the update opens one; `template` the template whose words these are. */
  statusPageUpdate: { name: string; status: PublicStatus; body: string; template?: string }
  stakeholderSummary: string
}

const PUBLIC_STATUS: Record<string, PublicStatus> = {
  triage: 'investigating',
  investigating: 'investigating',
  identified: 'identified',
  monitoring: 'monitoring',
  resolved: 'resolved',
  triggered: 'investigating',
  acknowledged: 'investigating',
}

const CAUSE_IN_PLAIN_WORDS: Record<Findings['probableCause']['category'], string> = {
  deploy: 'a recent change to our systems',
  configuration: 'a recent configuration change',
  dependency: 'a problem in one of the systems these services rely on',
  capacity: 'our systems running short of capacity',
  external: 'a problem with an outside provider or the network',
  unknown: 'a cause we are still looking for',
}

const FIX_IN_PLAIN_WORDS: Record<Findings['probableCause']['category'], string> = {
  deploy: 'We are reverting the change.',
  configuration: 'We are reverting the change.',
  dependency: 'We are restoring the affected system.',
  capacity: 'We are adding capacity.',
  external: 'We are working with the provider and routing around the problem where we can.',
  unknown: 'We will share more as soon as we know it.',
}

const CONFIDENT = 0.6

/** The template naming most of the affected components (the first key on a tie), if any names one. */
export function templateFor(templates: readonly CommsTemplate[], componentIds: readonly string[]): CommsTemplate | undefined {
  let best: { template: CommsTemplate; covered: number } | undefined
  for (const template of [...templates].sort((a, b) => a.key.localeCompare(b.key))) {
    const covered = template.componentIds.filter((id) => componentIds.includes(id)).length
    if (covered > 0 && (!best || covered > best.covered)) best = { template, covered }
  }
  return best?.template
}

export function draftComms(subject: Subject, findings: Findings, gathered: Gathered, templates: readonly CommsTemplate[] = []): CommsDraft {
  const components = (gathered.components ?? []).map((component) => component.name)
  const affected = components.length > 0 ? new Intl.ListFormat('en', { type: 'conjunction' }).format(components) : 'some of our services'
  const { category, confidence } = findings.probableCause
  const known = category !== 'unknown' && confidence >= CONFIDENT
  let status = PUBLIC_STATUS[subject.status] ?? 'investigating'
  // The public hears "identified" once the cause is known with confidence, not before.
  if (status === 'investigating' && known) status = 'identified'
  const body =
    status === 'resolved'
      ? `This incident has been resolved. ${affected} ${components.length === 1 ? 'is' : 'are'} working normally again. We are sorry for the disruption.`
      : status === 'monitoring'
        ? `A fix has been applied and we are monitoring ${affected}.`
        : known
          ? `We have identified the cause of the problems affecting ${affected}: ${CAUSE_IN_PLAIN_WORDS[category]}. ${FIX_IN_PLAIN_WORDS[category]}`
          : `We are investigating problems affecting ${affected}. We will post an update as soon as we know more.`
  const since = subject.onset.toISOString().slice(11, 16)
  const stakeholderSummary = [
    `${subject.reference}: ${subject.priority} incident, started ${since} UTC, now ${subject.status}.`,
    `Customer impact: ${affected}.`,
    known
      ? `Likely cause: ${CAUSE_IN_PLAIN_WORDS[category]} (confidence ${Math.round(confidence * 100)} %). ${FIX_IN_PLAIN_WORDS[category]}`
      : 'Cause: not established yet; the team is investigating.',
  ].join('\n')
  // A template is written to open an incident: later updates (monitoring, resolved) keep our words.
  const template =
    status === 'investigating' || status === 'identified'
      ? templateFor(
          templates,
          (gathered.components ?? []).map((component) => component.id),
        )
      : undefined
  const statusPageUpdate = template
    ? { name: template.title, status, body: template.body, template: template.key }
    : { name: `Problems affecting ${affected}`, status, body }
  return { statusPageUpdate, stakeholderSummary }
}
