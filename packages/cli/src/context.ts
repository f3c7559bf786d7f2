import { answered, everyPage, PAGE, type Connection } from './api.js'

/** What files name things by, per kind of thing: people by e-mail, the rest by name (services by key, pages by slug). */
export type Named =
  'people' | 'teams' | 'schedules' | 'escalationPolicies' | 'services' | 'chat' | 'webhooks' | 'trackers' | 'statusPages' | 'components'

/**
 * The organization's names and ids, read once each and read again after the CLI changed that kind,
 * so an entry can name what an earlier one in the same apply created. Components are named
 * `page slug/component name`.
 */
export class Names {
  private readonly cache = new Map<Named, Promise<Map<string, string>>>()

  constructor(private readonly connection: Connection) {}

  /** name → id of one kind. */
  ids(kind: Named): Promise<Map<string, string>> {
    let ids = this.cache.get(kind)
    if (!ids) {
      ids = this.read(kind)
      this.cache.set(kind, ids)
    }
    return ids
  }

  /** id → name of one kind. */
  async names(kind: Named): Promise<Map<string, string>> {
    return new Map([...(await this.ids(kind))].map(([name, id]) => [id, name]))
  }

  /** The id of a name that must exist by now (checked before anything was written). */
  async id(kind: Named, name: string): Promise<string> {
    const id = (await this.ids(kind)).get(name)
    if (!id) throw new Error(`no ${kind} named ${name}`)
    return id
  }

  /** The name of an id, or the id itself when the organization has no such thing any more. */
  async name(kind: Named, id: string): Promise<string> {
    return (await this.names(kind)).get(id) ?? id
  }

  changed(kind: Named): void {
    this.cache.delete(kind)
  }

  private async read(kind: Named): Promise<Map<string, string>> {
    const { api, orgId } = this.connection
    const path = { orgId }
    const byName = <T>(rows: T[], name: (row: T) => string | null, id: (row: T) => string) =>
      new Map(rows.flatMap((row) => (name(row) === null ? [] : [[name(row)!, id(row)] as const])))
    switch (kind) {
      case 'people': {
        const users = await everyPage(
          (page) => api.GET('/api/v1/organizations/{orgId}/users', { params: { path, query: { page, limit: PAGE } } }),
          'reading the members',
        )
        return byName(
          users.filter((user) => user.userId !== null),
          (user) => user.email.toLowerCase(),
          (user) => user.userId!,
        )
      }
      case 'teams':
        return byName(
          await everyPage(
            (page) => api.GET('/api/v1/organizations/{orgId}/teams', { params: { path, query: { page, limit: PAGE } } }),
            'reading the teams',
          ),
          (row) => row.name,
          (row) => row.id,
        )
      case 'schedules':
        return byName(
          await everyPage(
            (page) => api.GET('/api/v1/organizations/{orgId}/schedules', { params: { path, query: { page, limit: PAGE } } }),
            'reading the schedules',
          ),
          (row) => row.name,
          (row) => row.id,
        )
      case 'escalationPolicies':
        return byName(
          await everyPage(
            (page) => api.GET('/api/v1/organizations/{orgId}/escalation-policies', { params: { path, query: { page, limit: PAGE } } }),
            'reading the escalation policies',
          ),
          (row) => row.name,
          (row) => row.id,
        )
      case 'services':
        return byName(
          await everyPage(
            (page) => api.GET('/api/v1/organizations/{orgId}/services', { params: { path, query: { page, limit: PAGE } } }),
            'reading the services',
          ),
          (row) => row.key,
          (row) => row.id,
        )
      case 'chat':
        return byName(
          await everyPage(
            (page) => api.GET('/api/v1/organizations/{orgId}/chat-integrations', { params: { path, query: { page, limit: PAGE } } }),
            'reading the chat integrations',
          ),
          (row) => row.name,
          (row) => row.id,
        )
      case 'webhooks':
        return byName(
          await everyPage(
            (page) => api.GET('/api/v1/organizations/{orgId}/outbound-webhooks', { params: { path, query: { page, limit: PAGE } } }),
            'reading the outbound webhooks',
          ),
          (row) => row.name,
          (row) => row.id,
        )
      case 'trackers':
        return byName(
          await everyPage(
            (page) => api.GET('/api/v1/organizations/{orgId}/trackers', { params: { path, query: { page, limit: PAGE } } }),
            'reading the trackers',
          ),
          (row) => row.name,
          (row) => row.id,
        )
      case 'statusPages':
        return byName(
          await everyPage(
            (page) => api.GET('/api/v1/statuspages/organizations/{orgId}/pages', { params: { path, query: { page, limit: PAGE } } }),
            'reading the status pages',
          ),
          (row) => row.slug,
          (row) => row.id,
        )
      case 'components': {
        const components = new Map<string, string>()
        for (const [slug, pageId] of await this.ids('statusPages')) {
          const { data } = await answered(
            api.GET('/api/v1/statuspages/organizations/{orgId}/pages/{pageId}/components', { params: { path: { orgId, pageId } } }),
            `reading the components of ${slug}`,
          )
          for (const component of data) components.set(`${slug}/${component.name}`, component.id)
        }
        return components
      }
    }
  }
}
