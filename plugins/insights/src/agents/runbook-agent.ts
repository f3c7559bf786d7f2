import type { Findings } from '../investigation/findings.js'
import type { Subject } from '../investigation/subject.js'

// The runbook agent (decision 0021, "The other agents"): matches the organization's runbooks to
// an investigated incident, says why each fits, and proposes its steps in order. It never runs
// anything: the steps are text for a person.

export interface RunbookCandidate {
  id: string
  title: string
  body: string
  services: string[]
  labels: unknown
  version: number
}

export interface RunbookMatch {
  runbookId: string
  version: number
  title: string
  score: number
  why: string[]
  steps: string[]
}

const MAX_MATCHES = 3
const MAX_STEPS = 8
// The item's text starts at its first non-space character, so the spaces before it have one way to
// match: a line of a marker and many spaces is read in linear time (issue 51).
const LIST_ITEM = /^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(\S.*)$/s

/** The runbook's steps: its Markdown list items, in order. */
export function stepsOf(markdown: string): string[] {
  return markdown
    .split('\n')
    .map((line) => LIST_ITEM.exec(line)?.[1]?.trim())
    .filter((step): step is string => Boolean(step))
    .slice(0, MAX_STEPS)
}

const words = (text: string) =>
  new Set(
    text
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((word) => word.length > 3),
  )

/**
 * Scores each runbook: the service the cause lies in (1), a failing service (0.8), label
 * matchers an alert fully satisfies (0.6), words its title shares with the alerts' (0.1 each, at
 * most 0.3). Answers the best three that score at least 0.5, best first.
 */
export function matchRunbooks(subject: Subject, findings: Findings, runbooks: RunbookCandidate[]): RunbookMatch[] {
  const causeService = findings.probableCause.service
  const alertWords = words(subject.alerts.map((alert) => alert.title).join(' ') + ' ' + subject.title)
  const matches = runbooks.map((runbook): RunbookMatch => {
    const why: string[] = []
    let score = 0
    if (causeService && runbook.services.includes(causeService)) {
      score += 1
      why.push(`it is for ${causeService}, where the probable cause lies`)
    } else {
      const failing = runbook.services.filter((service) => subject.services.includes(service))
      if (failing.length > 0) {
        score += 0.8
        why.push(`it is for ${failing.join(', ')}, which ${failing.length === 1 ? 'is' : 'are'} failing`)
      }
    }
    const matchers = Object.entries((runbook.labels ?? {}) as Record<string, string>)
    if (matchers.length > 0) {
      const fitting = subject.alerts.find((alert) => matchers.every(([key, value]) => String(alert.labels[key] ?? '') === value))
      if (fitting) {
        score += 0.6
        why.push(`its labels ${matchers.map(([key, value]) => `${key}=${value}`).join(', ')} match the alert "${fitting.title}"`)
      }
    }
    const shared = [...words(runbook.title)].filter((word) => alertWords.has(word))
    if (shared.length > 0) {
      score += Math.min(0.3, 0.1 * shared.length)
      why.push(`its title shares ${shared.map((word) => `"${word}"`).join(', ')} with the alerts`)
    }
    return {
      runbookId: runbook.id,
      version: runbook.version,
      title: runbook.title,
      score: Math.round(score * 100) / 100,
      why,
      steps: stepsOf(runbook.body),
    }
  })
  return matches
    .filter((match) => match.score >= 0.5)
    .sort((a, b) => b.score - a.score)
    .slice(0, MAX_MATCHES)
}
