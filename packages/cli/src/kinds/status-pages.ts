import { Type, type Static } from 'typebox'
import { answered, everyPage, PAGE } from '../api.js'
import type { Context, Kind } from '../kind.js'
import { Name, NullableName, NullableText } from './fields.js'

const Group = Type.Object({ name: Name, description: NullableText(1000) }, { additionalProperties: false })
const Component = Type.Object(
  {
    name: Name,
    description: NullableText(1000),
    group: NullableName('A group of the page, by name'),
    showUptime: Type.Optional(Type.Boolean()),
    alertServices: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'Alert services whose incidents may update it' }),
  },
  { additionalProperties: false, description: 'In display order; its status is the page’s state, not configuration' },
)
// Written as the service keeps them (domains and colours in lower case), so a file read back
// compares equal to what it set.
const Domain = Type.String({ pattern: '^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z]{2,63}$' })
const Colour = Type.String({ pattern: '^#(?:[0-9a-f]{3}|[0-9a-f]{6})$', description: '#rgb or #rrggbb, lower case' })
const Page = Type.Object(
  {
    slug: Type.String({
      pattern: '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$',
      description: 'Unique across the service: the page’s public address',
    }),
    name: Name,
    timeZone: Type.Optional(Type.String({ minLength: 1 })),
    locales: Type.Optional(Type.Array(Type.String(), { minItems: 1 })),
    customDomain: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Null()])),
    published: Type.Optional(Type.Boolean()),
    allowSubscribers: Type.Optional(Type.Boolean()),
    bannerFollowsChecks: Type.Optional(Type.Boolean()),
    supportUrl: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Null()])),
    visibility: Type.Optional(
      Type.Enum(['public', 'private'] as const, { description: 'private: members, and people of viewerEmailDomains by an e-mailed link' }),
    ),
    viewerEmailDomains: Type.Optional(Type.Array(Domain, { uniqueItems: true })),
    theme: Type.Optional(
      Type.Record(Type.String({ pattern: '^--[a-z-]+$' }), Colour, {
        description: 'The page’s declared CSS variables (--header-background, --link, …); the service checks their contrast',
      }),
    ),
    headerLinks: Type.Optional(
      Type.Array(
        Type.Object({ label: Type.String({ minLength: 1 }), url: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
      ),
    ),
    footerText: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Null()])),
    groups: Type.Array(Group, { default: [], description: 'In display order' }),
    components: Type.Array(Component, { default: [] }),
  },
  { additionalProperties: false, title: 'StatusPage' },
)
type Page = Static<typeof Page>
type Component = Static<typeof Component>

const pagePath = (orgId: string, pageId: string) => ({ params: { path: { orgId, pageId } } })

async function groupsOf({ api, orgId }: Context['connection'], pageId: string) {
  const rows = await everyPage(
    (page) =>
      api.GET('/api/v1/statuspages/organizations/{orgId}/pages/{pageId}/component-groups', {
        params: { path: { orgId, pageId }, query: { page, limit: PAGE } },
      }),
    'reading the component groups',
  )
  return rows.sort((a, b) => a.position - b.position)
}

async function componentsOf({ api, orgId }: Context['connection'], pageId: string) {
  const rows = await everyPage(
    (page) =>
      api.GET('/api/v1/statuspages/organizations/{orgId}/pages/{pageId}/components', {
        params: { path: { orgId, pageId }, query: { page, limit: PAGE } },
      }),
    'reading the components',
  )
  return rows.sort((a, b) => a.position - b.position)
}

/**
 * Makes a page's groups and components what the entry says, matched by name, in its order:
 * missing ones created, others changed, those the entry no longer names deleted.
 */
async function matchContents(context: Context, pageId: string, page: Page) {
  const { api, orgId } = context.connection
  const path = { orgId, pageId }
  const groups = new Map((await groupsOf(context.connection, pageId)).map((group) => [group.name, group]))
  const groupIds = new Map<string, string>()
  for (const [position, group] of page.groups.entries()) {
    const had = groups.get(group.name)
    const body = { name: group.name, description: group.description, position }
    const row = had
      ? had.description === group.description && had.position === position
        ? had
        : await answered(
            api.PATCH('/api/v1/statuspages/organizations/{orgId}/pages/{pageId}/component-groups/{groupId}', {
              params: { path: { ...path, groupId: had.id } },
              body,
            }),
            `changing the group ${group.name} of ${page.slug}`,
          )
      : await answered(
          api.POST('/api/v1/statuspages/organizations/{orgId}/pages/{pageId}/component-groups', { params: { path }, body }),
          `adding the group ${group.name} to ${page.slug}`,
        )
    groupIds.set(group.name, row.id)
  }

  const components = new Map((await componentsOf(context.connection, pageId)).map((component) => [component.name, component]))
  for (const [position, component] of page.components.entries()) {
    const had = components.get(component.name)
    const body = {
      name: component.name,
      description: component.description,
      groupId: component.group === null ? null : groupIds.get(component.group)!,
      position,
      alertServices: component.alertServices,
      ...(component.showUptime === undefined ? {} : { showUptime: component.showUptime }),
    }
    if (!had)
      await answered(
        api.POST('/api/v1/statuspages/organizations/{orgId}/pages/{pageId}/components', { params: { path }, body }),
        `adding the component ${component.name} to ${page.slug}`,
      )
    else if (
      had.description !== body.description ||
      had.groupId !== body.groupId ||
      had.position !== position ||
      had.alertServices.join('\n') !== body.alertServices.join('\n') ||
      (body.showUptime !== undefined && had.showUptime !== body.showUptime)
    )
      await answered(
        api.PATCH('/api/v1/statuspages/organizations/{orgId}/pages/{pageId}/components/{componentId}', {
          params: { path: { ...path, componentId: had.id } },
          body,
        }),
        `changing the component ${component.name} of ${page.slug}`,
      )
  }
  const named = new Set(page.components.map((component) => component.name))
  for (const [name, component] of components)
    if (!named.has(name))
      await answered(
        api.DELETE('/api/v1/statuspages/organizations/{orgId}/pages/{pageId}/components/{componentId}', {
          params: { path: { ...path, componentId: component.id } },
        }),
        `deleting the component ${name} of ${page.slug}`,
      )
  const groupNames = new Set(page.groups.map((group) => group.name))
  for (const [name, group] of groups)
    if (!groupNames.has(name))
      await answered(
        api.DELETE('/api/v1/statuspages/organizations/{orgId}/pages/{pageId}/component-groups/{groupId}', {
          params: { path: { ...path, groupId: group.id } },
        }),
        `deleting the group ${name} of ${page.slug}`,
      )
  context.names.changed('components')
}

const settings = ({ groups: _groups, components: _components, ...page }: Page) => page

/** Status pages with their groups and components (by name, in display order). */
export const statusPages: Kind<Page> = {
  noun: 'status page',
  file: 'status-pages.yaml',
  key: 'statusPages',
  entry: Page,
  names: 'statusPages',
  identity: (page) => page.slug,
  references: () => [],
  // A colour left out of the file goes back to its default.
  whole: ['theme'],
  problems: (page) => {
    const groups = new Set(page.groups.map((group) => group.name))
    return page.components.flatMap((component: Component, index) =>
      component.group === null || groups.has(component.group)
        ? []
        : [{ at: ['components', index, 'group'], message: `the page has no group named ${component.group}` }],
    )
  },

  async live({ connection }) {
    const { api, orgId } = connection
    const { data } = await answered(
      api.GET('/api/v1/statuspages/organizations/{orgId}/pages', { params: { path: { orgId } } }),
      'reading the status pages',
    )
    return Promise.all(
      data.map(async (page) => {
        const groups = await groupsOf(connection, page.id)
        const groupNames = new Map(groups.map((group) => [group.id, group.name]))
        const components = await componentsOf(connection, page.id)
        return {
          id: page.id,
          entry: {
            slug: page.slug,
            name: page.name,
            timeZone: page.timeZone,
            locales: page.locales,
            customDomain: page.customDomain,
            published: page.published,
            allowSubscribers: page.allowSubscribers,
            bannerFollowsChecks: page.bannerFollowsChecks,
            supportUrl: page.supportUrl,
            visibility: page.visibility,
            viewerEmailDomains: page.viewerEmailDomains,
            theme: page.theme,
            headerLinks: page.headerLinks,
            footerText: page.footerText,
            groups: groups.map((group) => ({ name: group.name, description: group.description })),
            components: components.map((component) => ({
              name: component.name,
              description: component.description,
              group: component.groupId === null ? null : (groupNames.get(component.groupId) ?? null),
              showUptime: component.showUptime,
              alertServices: component.alertServices,
            })),
          },
        }
      }),
    )
  },

  async create(context, page) {
    const { api, orgId } = context.connection
    const created = await answered(
      api.POST('/api/v1/statuspages/organizations/{orgId}/pages', { params: { path: { orgId } }, body: settings(page) as never }),
      `creating the status page ${page.slug}`,
    )
    context.names.changed('statusPages')
    await matchContents(context, created.id, page)
  },

  async update(context, live, page) {
    const { api, orgId } = context.connection
    await answered(
      api.PATCH('/api/v1/statuspages/organizations/{orgId}/pages/{pageId}', { ...pagePath(orgId, live.id), body: settings(page) as never }),
      `changing the status page ${page.slug}`,
    )
    await matchContents(context, live.id, page)
  },

  async remove({ connection: { api, orgId } }, live) {
    await answered(
      api.DELETE('/api/v1/statuspages/organizations/{orgId}/pages/{pageId}', pagePath(orgId, live.id)),
      `deleting the status page ${live.entry.slug}`,
    )
  },
}
