import { parseAllDocuments } from 'yaml'
import { BadRequestError } from '@svc/http'

// Backstage's software catalog descriptors (catalog-info.yaml: backstage.io/docs/features/
// software-catalog/descriptor-format) read as catalog services. Components and Systems become
// services, keyed by their name; other kinds are skipped and said so. Read by hand over the
// `yaml` parser: the descriptor format is a few fields, and Backstage's own catalog-model
// package would bring its whole entity validation stack for them.

export const MAX_ENTITIES = 500

/** What a Backstage entity says of a service. */
export interface CatalogService {
  kind: 'Component' | 'System'
  key: string
  name: string
  description: string | null
  /** The owner's entity reference (`group:payments`), matched with a team by name. */
  owner: string | null
  tags: string[]
  links: Record<string, string>
  aliases: string[]
  tier: number | null
  /** The escalation policy's name (annotation `divinux.io/escalation-policy`). */
  escalationPolicy: string | null
  /** Keys of what it depends on; undefined when the entity says nothing of it. */
  dependsOn: string[] | undefined
}

const ENTITY_KINDS = new Set(['Component', 'System'])
const API_VERSIONS = new Set(['backstage.io/v1alpha1', 'backstage.io/v1beta1'])

type Json = Record<string, unknown>
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [])
const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() ? value.trim() : null)

/** `[kind:][namespace/]name` → the name, lower-cased: a reference's catalog key. */
export function refName(ref: string): string {
  const afterKind = ref.includes(':') ? ref.slice(ref.indexOf(':') + 1) : ref
  return (afterKind.includes('/') ? afterKind.slice(afterKind.lastIndexOf('/') + 1) : afterKind).toLowerCase()
}

const LINK_KINDS: Array<[keyof Links, RegExp]> = [
  ['runbook', /runbook|playbook/],
  ['dashboard', /dashboard|grafana|metrics/],
  ['repository', /repo|source|github|gitlab|git\b/],
  ['chat', /chat|slack|teams/],
]
type Links = { runbook?: string; dashboard?: string; repository?: string; chat?: string }
const HTTP_URL = /^https?:\/\/\S+$/

/** The entity's links by what they are for (their type, icon or title), and its repository from the usual annotations. */
function linksOf(metadata: Json): Links {
  const links: Links = {}
  for (const link of Array.isArray(metadata.links) ? metadata.links : []) {
    if (!isObject(link) || typeof link.url !== 'string' || !HTTP_URL.test(link.url)) continue
    const words = [link.type, link.icon, link.title]
      .filter((word) => typeof word === 'string')
      .join(' ')
      .toLowerCase()
    const found = LINK_KINDS.find(([, pattern]) => pattern.test(words))
    if (found && !links[found[0]]) links[found[0]] = link.url
  }
  const annotations = isObject(metadata.annotations) ? metadata.annotations : {}
  const source = text(annotations['backstage.io/source-location'])
  const slug = text(annotations['github.com/project-slug'])
  const gitlab = text(annotations['gitlab.com/project-slug'])
  links.repository ??=
    (source?.startsWith('url:') && HTTP_URL.test(source.slice(4)) ? source.slice(4) : undefined) ??
    (slug ? `https://github.com/${slug}` : gitlab ? `https://gitlab.com/${gitlab}` : undefined)
  return links
}

/**
 * The services a catalog-info.yaml describes (several documents allowed), or a 400 naming the
 * document and the field that is wrong. `skipped` says which entities were not of a kind imported.
 */
export function readCatalog(source: string): { services: CatalogService[]; skipped: string[] } {
  const services: CatalogService[] = []
  const skipped: string[] = []
  const documents = parseAllDocuments(source, { prettyErrors: false })
  if (!Array.isArray(documents)) return { services, skipped }
  if (documents.length > MAX_ENTITIES) throw new BadRequestError(`at most ${MAX_ENTITIES} entities per import`)
  for (const [index, document] of documents.entries()) {
    const where = `document ${index + 1}`
    const [error] = document.errors
    if (error) throw new BadRequestError(`${where}: not YAML: ${error.message.split('\n')[0]}`)
    const entity: unknown = document.toJS()
    if (entity === null || entity === undefined) continue
    if (!isObject(entity)) throw new BadRequestError(`${where}: an entity is a mapping`)
    if (typeof entity.apiVersion !== 'string' || !API_VERSIONS.has(entity.apiVersion))
      throw new BadRequestError(`${where}: apiVersion must be backstage.io/v1alpha1 or backstage.io/v1beta1`)
    const metadata = isObject(entity.metadata) ? entity.metadata : undefined
    const name = text(metadata?.name)
    if (!metadata || !name || !/^[a-z0-9A-Z]([a-z0-9A-Z._-]{0,61}[a-z0-9A-Z])?$/.test(name))
      throw new BadRequestError(`${where}: metadata.name must be a Backstage entity name (letters, digits, - _ ., at most 63)`)
    if (typeof entity.kind !== 'string' || !ENTITY_KINDS.has(entity.kind)) {
      skipped.push(`${String(entity.kind)}:${name}`)
      continue
    }
    const spec = isObject(entity.spec) ? entity.spec : {}
    const annotations = isObject(metadata.annotations) ? metadata.annotations : {}
    const tier = Number(annotations['divinux.io/tier'])
    const lifecycle = text(spec.lifecycle)
    const system = entity.kind === 'Component' ? text(spec.system) : null
    services.push({
      kind: entity.kind as CatalogService['kind'],
      key: name.toLowerCase(),
      name: text(metadata.title) ?? name,
      description: text(metadata.description),
      owner: text(spec.owner),
      tags: [...strings(metadata.tags), ...(lifecycle ? [`lifecycle:${lifecycle}`] : []), ...(system ? [`system:${refName(system)}`] : [])],
      links: linksOf(metadata),
      aliases: (text(annotations['divinux.io/aliases']) ?? '')
        .split(',')
        .map((alias) => alias.trim().toLowerCase())
        .filter(Boolean),
      tier: Number.isInteger(tier) && tier >= 1 && tier <= 4 ? tier : null,
      escalationPolicy: text(annotations['divinux.io/escalation-policy']),
      dependsOn: Array.isArray(spec.dependsOn) ? strings(spec.dependsOn).map(refName) : undefined,
    })
  }
  // A component's `system` and `dependencyOf` are edges of the other side: a system depends on its
  // components, and `dependencyOf: [x]` means x depends on this one.
  const byKey = new Map(services.map((service) => [service.key, service]))
  for (const document of documents) {
    const entity = document.toJS() as Json | null
    if (!isObject(entity) || entity.kind !== 'Component' || !isObject(entity.spec) || !isObject(entity.metadata)) continue
    const key = String(entity.metadata.name).toLowerCase()
    const dependents = [...strings(entity.spec.dependencyOf), ...(text(entity.spec.system) ? [text(entity.spec.system)!] : [])].map(refName)
    for (const dependent of dependents) {
      const service = byKey.get(dependent)
      if (!service) continue
      service.dependsOn = [...new Set([...(service.dependsOn ?? []), key])]
    }
  }
  return { services, skipped }
}
