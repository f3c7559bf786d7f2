import { LRUCache } from 'lru-cache'

/**
 * The channel migration 0060's triggers announce changes on, as `<scope>:<organization id>:<transaction id>`
 * (`*` for every organization).
 */
export const CHANGES_CHANNEL = 'svc_changes'

/** Copies of a notice this far apart are heard as new ones: harmless, a kept answer is read again. */
const NOTICES_REMEMBERED = 4_096

/** What a notice is about: the access rules' tables, or alerts. */
export type ChangeScope = 'access' | 'alerts'

/**
 * What this process has heard of the database's changes, for the caches kept right by them
 * (decision 0029). Every statement that writes an announced table sends a notice when it
 * commits, to every listening connection, the writer's own included, before the writer's
 * statement returns; so a read taken after `stamp()` sees every change announced before it,
 * and a cached answer is good while no notice about its organization came after its stamp.
 *
 * While notices may be missed (the PostgreSQL listener is reconnecting), nothing counts as
 * unchanged, and everything kept before counts as changed once they arrive again.
 */
export class ChangeNotices {
  #version = 0
  /** Every stamp before this one is void: notices were missed, or a whole table was emptied. */
  #voidBefore = 0
  /** `<scope>:<organization id>` to the version of its latest notice. */
  readonly #changedAt = new Map<string, number>()
  /**
   * The latest notices heard, oldest first: each connection of the process that listens hears
   * its own copy of every notice, and a copy heard after a read began would needlessly void it.
   */
  readonly #heard = new Set<string>()
  #live: boolean

  constructor(live: boolean) {
    this.#live = live
  }

  /** Whether notices are arriving: while not, nothing may be kept on the strength of them. */
  get live(): boolean {
    return this.#live
  }

  /** Taken before reading what is to be kept. */
  stamp(): number {
    return this.#version
  }

  /** Whether nothing the scope covers in the organization changed since `stamp` was taken. */
  unchangedSince(scope: ChangeScope, organizationId: string, stamp: number): boolean {
    return this.#live && stamp >= this.#voidBefore && stamp >= (this.#changedAt.get(`${scope}:${organizationId}`) ?? 0)
  }

  /** A notification from any connection that listens: the change notices among them. */
  hear({ channel, payload }: { channel: string; payload?: string }): void {
    if (channel === CHANGES_CHANNEL && payload !== undefined) this.receive(payload)
  }

  /** A notice's payload, as the trigger wrote it. */
  receive(payload: string): void {
    if (this.#heard.has(payload)) return
    this.#heard.add(payload)
    if (this.#heard.size > NOTICES_REMEMBERED) this.#heard.delete(this.#heard.values().next().value as string)
    this.#version += 1
    const about = payload.slice(0, payload.lastIndexOf(':'))
    if (about.endsWith(':*')) this.#voidBefore = this.#version
    else this.#changedAt.set(about, this.#version)
  }

  /** Notices may have been missed (the listener's connection was lost): nothing kept holds any more. */
  suspend(): void {
    this.#live = false
    this.#version += 1
    this.#voidBefore = this.#version
  }

  /** Notices arrive again; what was kept before the gap stays void. */
  resume(): void {
    this.#version += 1
    this.#voidBefore = this.#version
    this.#live = true
  }
}

export interface KeptAnswersOptions<V> {
  /** Answers kept at most, least recently used dropped first. */
  max: number
  /** A bound on an answer's age even with no notice, for a change no trigger saw (a superuser disabling them). */
  ttlMs: number
  /** With `sizeOf`, a bound on the answers' total size too (in the unit `sizeOf` counts). */
  maxSize?: number
  sizeOf?: (value: V) => number
}

/**
 * Answers computed from one scope of one organization's rows, kept until a notice says that
 * scope of that organization changed. Each answer carries the stamp taken before it was read,
 * so a change that races the read voids it too.
 */
export function keptAnswers<V extends NonNullable<unknown>>(notices: ChangeNotices, scope: ChangeScope, options: KeptAnswersOptions<V>) {
  const { sizeOf, maxSize } = options
  const kept = new LRUCache<string, { value: V; stamp: number }>({
    max: options.max,
    ttl: options.ttlMs,
    ...(sizeOf && maxSize ? { maxSize, sizeCalculation: (entry) => Math.max(1, sizeOf(entry.value)) } : {}),
  })
  return {
    async get(organizationId: string, key: string, compute: () => Promise<V>): Promise<V> {
      const cacheKey = `${organizationId}\n${key}`
      const entry = kept.get(cacheKey)
      if (entry !== undefined && notices.unchangedSince(scope, organizationId, entry.stamp)) return entry.value
      const stamp = notices.stamp()
      const value = await compute()
      if (notices.live) kept.set(cacheKey, { value, stamp })
      return value
    },
  }
}

export type KeptAnswers<V extends NonNullable<unknown>> = ReturnType<typeof keptAnswers<V>>
