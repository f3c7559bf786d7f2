import { hash } from 'node:crypto'
import { BadRequestError } from '@svc/http'
import { type IngestedEvent, type Priority } from '../alerts/index.js'

export type { IngestedEvent }

export type JsonObject = Record<string, unknown>

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export function text(value: unknown): string | undefined {
  if (typeof value === 'string' && value.trim() !== '') return value.trim()
  if (typeof value === 'number') return String(value)
  return undefined
}

/** String-valued labels only; other values are not labels. */
export function labelsOf(value: unknown): Record<string, string> {
  const labels: Record<string, string> = {}
  if (!isObject(value)) return labels
  // A plain loop: every ingested event passes here, and entries/flatMap/fromEntries built three
  // arrays per label.
  for (const key of Object.keys(value)) {
    const item = value[key]
    const label = typeof item === 'string' ? item : typeof item === 'number' || typeof item === 'boolean' ? String(item) : undefined
    if (label === undefined) continue
    // Assigning `__proto__` would set the object's prototype: that one key is defined instead.
    if (key === '__proto__') Object.defineProperty(labels, key, { value: label, enumerable: true, writable: true, configurable: true })
    else labels[key] = label
  }
  return labels
}

/**
 * A time a sender gives (ISO 8601, or Unix seconds or milliseconds) as ISO 8601; undefined when
 * it is missing or not a time, so a bad one never fails a delivery: the alert then dates from its
 * arrival.
 */
export function instantOf(value: unknown): string | undefined {
  const given = text(value)
  if (given === undefined) return undefined
  const numeric = /^\d{9,13}$/.test(given) ? Number(given) : undefined
  const at = numeric === undefined ? new Date(given) : new Date(numeric < 1e12 ? numeric * 1000 : numeric)
  const time = at.getTime()
  // Year 2000 to 2100: anything else is a sender's placeholder (Alertmanager's zero time), not a time.
  return Number.isNaN(time) || time < 946_684_800_000 || time > 4_102_444_800_000 ? undefined : at.toISOString()
}

/** Most a link may be: a URL longer than this is not a link a person follows. */
const MAX_LINK = 2_000

/**
 * A link a sender gives (a runbook, the source's view), if it is an absolute http(s) URL: a page
 * carries it to a person, so nothing else (`javascript:`, `data:`, a relative path) is kept.
 */
export function linkOf(value: unknown): string | undefined {
  const given = text(value)
  if (given === undefined || given.length > MAX_LINK) return undefined
  if (!URL.canParse(given)) return undefined
  const { protocol } = new URL(given)
  return protocol === 'https:' || protocol === 'http:' ? given : undefined
}

export function fingerprintOf(...parts: Array<string | undefined>): string {
  return hash('sha256', parts.map((part) => part ?? '').join('\u0000'), 'hex').slice(0, 32)
}

// Maps, never plain objects, for tables keyed by request input: `severityPriorities['constructor']`
// on an object literal is Object's constructor, not "unknown" (docs/decisions/0012).
const severityPriorities = new Map<string, Priority>(
  Object.entries({
    critical: 'P1',
    crit: 'P1',
    fatal: 'P1',
    emergency: 'P1',
    p1: 'P1',
    sev1: 'P1',
    page: 'P1',
    high: 'P2',
    error: 'P2',
    major: 'P2',
    p2: 'P2',
    sev2: 'P2',
    warning: 'P3',
    warn: 'P3',
    medium: 'P3',
    moderate: 'P3',
    p3: 'P3',
    sev3: 'P3',
    low: 'P4',
    minor: 'P4',
    info: 'P4',
    p4: 'P4',
    sev4: 'P4',
    informational: 'P5',
    debug: 'P5',
    none: 'P5',
    p5: 'P5',
    sev5: 'P5',
  } as const),
)

/** P1..P5 from a priority or a severity word any tool uses; unknown words leave it to the config. */
export function priorityOf(value: unknown): Priority | undefined {
  const word = text(value)?.toLowerCase()
  return word === undefined ? undefined : severityPriorities.get(word)
}

export function refuse(message: string): never {
  throw new BadRequestError(message)
}
