import type { TSchema } from 'typebox'
import type { Connection } from './api.js'
import type { Named, Names } from './context.js'
import type { FieldPath } from './files.js'

/** What one command works with: the organization, its names, and where to say what was done. */
export interface Context {
  connection: Connection
  names: Names
  say: (line: string) => void
  /** The environment: where credentials named by a file are read from. */
  env: Record<string, string | undefined>
}

/** An entry as the organization has it now, with its id there. */
export interface Live<E> {
  id: string
  entry: E
}

/** A name an entry gives of something else, and where in the entry it is. */
export interface Reference {
  at: FieldPath
  to: Named
  name: string
}

/**
 * One kind of configuration (docs/configuration-as-code.md): the file its entries live in, what
 * one entry is, how it is named, and how the organization's are read and written through the API.
 * Entries name each other by key, slug, name or e-mail, never by id.
 */
export interface Kind<E extends object = Record<string, unknown>> {
  /** What the CLI calls one entry in what it prints: `team`, `escalation policy`. */
  noun: string
  file: string
  /** The key of the file's list. */
  key: string
  entry: TSchema
  /** The entry's name in the organization (unique among the kind's). */
  identity(entry: E): string
  references(entry: E): Reference[]
  /** Fields that are the file's only (where credentials come from): never compared, never a difference. */
  unseen?: readonly string[]
  /** What keeps an entry from being created (a credential the environment lacks), checked before anything is written. */
  creatable?(context: Context, entry: E): Array<{ at: FieldPath; message: string }>
  /** Fields compared whole rather than key by key (see `differences`). */
  whole?: readonly string[]
  /** What is wrong within the entry beyond its schema (a component naming a group its page lacks). */
  problems?(entry: E): Array<{ at: FieldPath; message: string }>
  /** The entry as the organization would hold it (lists in its order, e-mails in lower case), for comparing. */
  normal?(entry: E): E
  /** The names this kind gives others to refer to (what `Names` caches), when others refer to it. */
  names?: Named
  /** One entry that always exists (the organization's correlation rules): created means changed, never deleted. */
  singleton?: boolean
  live(context: Context): Promise<Array<Live<E>>>
  /** Creates it; answers what the service shows only once (an API key), to print. */
  create(context: Context, entry: E): Promise<string[] | void>
  update(context: Context, live: Live<E>, entry: E): Promise<string[] | void>
  remove(context: Context, live: Live<E>): Promise<void>
  /** After all the kind's entries were written, what needs them all (services depending on services). */
  settle?(context: Context, entries: E[], live: Array<Live<E>>): Promise<void>
}

/**
 * Fields of an entry that differ, each as it is and as the files want it. What the file leaves out
 * (a field, or a key of an object such as a check's request) is the service's to choose, never a
 * difference; a field listed in `whole` is compared whole (a service's links: a link left out goes).
 */
export function differences(
  now: object,
  wanted: object,
  whole: readonly string[] = [],
): Array<{ field: string; now: unknown; wanted: unknown }> {
  const field = (entry: object, name: string) => (entry as Record<string, unknown>)[name]
  return Object.keys(wanted)
    .filter((name) => field(wanted, name) !== undefined)
    .filter((name) =>
      whole.includes(name)
        ? canonical(field(now, name)) !== canonical(field(wanted, name))
        : !covers(field(now, name), field(wanted, name)),
    )
    .map((name) => ({ field: name, now: field(now, name), wanted: field(wanted, name) }))
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** Whether `now` is what `wanted` says, keys `wanted` leaves out aside. */
function covers(now: unknown, wanted: unknown): boolean {
  if (isRecord(wanted))
    return isRecord(now) && Object.entries(wanted).every(([key, value]) => value === undefined || covers(now[key], value))
  if (Array.isArray(wanted))
    return Array.isArray(now) && now.length === wanted.length && wanted.every((value, index) => covers(now[index], value))
  return canonical(now) === canonical(wanted)
}

/** JSON with object keys in order, so two values compare by content; undefined reads as null. */
export function canonical(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, inner: unknown) =>
    isRecord(inner) ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => a.localeCompare(b))) : inner,
  )
}
