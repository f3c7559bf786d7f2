import { Type } from 'typebox'
import { NullableString, Timestamp } from '@svc/http'
import { componentStatuses, incidentImpacts, incidentStatuses, maintenanceStatuses, type ComponentStatus } from './model.js'
import type { ComponentRow, GroupRow } from './queries/components.js'
import type { IncidentRow, UpdateRow } from './queries/incidents.js'
import { verificationOf } from './pages/custom-domains.js'
import type { HeaderLink, PageRow } from './queries/pages.js'
import { assetFileName, type AssetKind } from './branding/assets.js'
import { PageLocales, type Locale } from './i18n/locales.js'

/** Where the managed routes live (spec: the status page surface's prefix). */
export const MANAGED_BASE = '/api/v1/statuspages/organizations/:orgId'
export const tags = ['statuspages']

export const OrgParams = Type.Object({ orgId: Type.String() })
export const PageParams = Type.Object({ orgId: Type.String(), pageId: Type.String() })
export const ComponentParams = Type.Object({ orgId: Type.String(), pageId: Type.String(), componentId: Type.String() })
export const GroupParams = Type.Object({ orgId: Type.String(), pageId: Type.String(), groupId: Type.String() })
export const IncidentParams = Type.Object({ orgId: Type.String(), pageId: Type.String(), incidentId: Type.String() })
export const MaintenanceParams = Type.Object({ orgId: Type.String(), pageId: Type.String(), maintenanceId: Type.String() })

export const ComponentStatusSchema = Type.Enum(componentStatuses)
export const IncidentStatusSchema = Type.Enum(incidentStatuses)
export const ImpactSchema = Type.Enum(incidentImpacts)
export const MaintenanceStatusSchema = Type.Enum(maintenanceStatuses)
const Uuid = Type.String({ format: 'uuid' })
const NullableUuid = Type.Union([Uuid, Type.Null()])

export const StatusPage = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    slug: Type.String(),
    timeZone: Type.String(),
    locales: PageLocales,
    customDomain: Type.Union([Type.String(), Type.Null()], {
      description: 'The host name claimed for the page; served there only once verified (customDomainVerification)',
    }),
    customDomainVerification: Type.Union([
      Type.Object(
        {
          status: Type.Union([Type.Literal('pending'), Type.Literal('verified'), Type.Literal('failing')], {
            description:
              'pending: not yet proven; verified: served at the domain; failing: the record went missing, served until the grace ends',
          }),
          recordType: Type.Literal('TXT'),
          recordName: Type.String({ description: 'Where to publish the record' }),
          recordValue: Type.String({ description: 'What the record must hold' }),
          claimedAt: Type.Union([Timestamp, Type.Null()]),
          verifiedAt: Type.Union([Timestamp, Type.Null()]),
          checkedAt: Type.Union([Timestamp, Type.Null()]),
          expiresAt: Type.Union([Timestamp, Type.Null()], { description: 'When a pending claim ends unless verified' }),
        },
        { title: 'CustomDomainVerification' },
      ),
      Type.Null(),
    ]),
    published: Type.Boolean(),
    allowSubscribers: Type.Boolean(),
    bannerFollowsChecks: Type.Boolean({
      description: 'Whether components held by their synthetic checks alone colour the overall status (decision 0015, "The banner")',
    }),
    supportUrl: Type.Union([Type.String(), Type.Null()]),
    visibility: Type.Enum(['public', 'private'] as const, {
      description: 'private: members and readers of viewerEmailDomains only (decision 0015, "Private pages")',
    }),
    viewerEmailDomains: Type.Array(Type.String(), { description: 'The e-mail domains that may sign in to a private page by a link' }),
    theme: Type.Record(Type.String(), Type.String(), {
      description: 'Colours of the page’s declared CSS variables (decision 0015, "Branding"); unset ones keep their defaults',
    }),
    headerLinks: Type.Array(Type.Object({ label: Type.String(), url: Type.String() })),
    footerText: Type.Union([Type.String(), Type.Null()]),
    logoUrl: Type.Union([Type.String(), Type.Null()], {
      description: 'Where the uploaded logo is served (PUT …/branding/logo), named by its hash: cached for ever',
    }),
    faviconUrl: Type.Union([Type.String(), Type.Null()], { description: 'Where the uploaded favicon is served (PUT …/branding/favicon)' }),
    publicUrl: Type.String({ description: 'Where the public page is read (its custom domain once verified)' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'StatusPage' },
)

export const Component = Type.Object(
  {
    id: Uuid,
    pageId: Uuid,
    groupId: NullableUuid,
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    position: Type.Integer(),
    status: ComponentStatusSchema,
    showUptime: Type.Boolean(),
    alertServices: Type.Array(Type.String(), { description: 'Alert services whose workflows may update this component' }),
    audienceIds: Type.Array(Uuid, { description: 'The audiences it is shown to; empty: everyone who reads the page' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'StatusComponent' },
)

export const ComponentGroup = Type.Object(
  {
    id: Uuid,
    pageId: Uuid,
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    position: Type.Integer(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'StatusComponentGroup' },
)

export const AffectedComponent = Type.Object({
  code: Uuid,
  name: Type.String(),
  oldStatus: ComponentStatusSchema,
  newStatus: ComponentStatusSchema,
})

export const IncidentUpdate = Type.Object(
  {
    id: Uuid,
    status: Type.String(),
    body: Type.String(),
    displayAt: Timestamp,
    affectedComponents: Type.Array(AffectedComponent),
    createdAt: Timestamp,
  },
  { title: 'StatusIncidentUpdate' },
)

const IncidentComponent = Type.Object({ componentId: Uuid, status: ComponentStatusSchema })

const recordProperties = {
  id: Uuid,
  pageId: Uuid,
  name: Type.String(),
  published: Type.Boolean({ description: 'A draft (false) is not on the public page and notifies nobody' }),
  audienceIds: Type.Array(Uuid, { description: 'The audiences it is published to; empty: everyone who reads the page' }),
  startedAt: Timestamp,
  resolvedAt: Type.Union([Timestamp, Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  components: Type.Array(IncidentComponent),
  updates: Type.Array(IncidentUpdate, { description: 'Newest first' }),
}

export const Incident = Type.Object(
  {
    ...recordProperties,
    status: IncidentStatusSchema,
    impact: ImpactSchema,
    alertId: NullableUuid,
    monitoringAt: Type.Union([Timestamp, Type.Null()]),
  },
  { title: 'StatusIncident' },
)

export const Maintenance = Type.Object(
  {
    ...recordProperties,
    status: MaintenanceStatusSchema,
    scheduledFor: Timestamp,
    scheduledUntil: Timestamp,
    autoStart: Type.Boolean(),
    autoComplete: Type.Boolean(),
  },
  { title: 'StatusMaintenance' },
)

/** An e-mail domain (example.com): exact, no subdomains. */
export const EmailDomain = Type.String({ maxLength: 253, pattern: '^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\\.)+[a-zA-Z]{2,63}$' })

/** Domains as the service keeps them: lower case, each once. */
export const lowerCasedDomains = (domains: string[]) => [...new Set(domains.map((domain) => domain.toLowerCase()))]

/** The audiences a component or a record is for (decision 0015, "Audiences"): ids of the page's audiences. */
export const AudienceIdsInput = Type.Array(Type.String(), {
  maxItems: 20,
  uniqueItems: true,
  description: 'Audiences of the page it is shown to (besides the organization’s members); empty: everyone who reads the page',
})

/** A component id with the status an incident gives it. */
export const ComponentStatusInput = Type.Array(
  Type.Object({ componentId: Type.String(), status: ComponentStatusSchema }, { additionalProperties: false }),
  {
    maxItems: 100,
  },
)

/** A page's list answered whole, sliced to the asked page: components, audiences and templates are few. */
export const sliced = <T>(rows: T[], query: { page: number; limit: number }) => ({
  data: rows.slice((query.page - 1) * query.limit, query.page * query.limit),
  meta: { page: query.page, limit: query.limit, total: rows.length },
})

export const OptionalText = (maxLength: number) => Type.Optional(NullableString({ maxLength }))

const iso = (date: Date) => date.toISOString()
const isoOrNull = (date: Date | null) => (date ? date.toISOString() : null)

type PageAssets = Partial<Record<AssetKind, { sha256: string; contentType: string }>>

export function pageBody(row: PageRow, publicUrl: string, assets: PageAssets = {}) {
  const assetUrl = (kind: AssetKind) => {
    const asset = assets[kind]
    return asset ? `${publicUrl}assets/${assetFileName(asset)}` : null
  }
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    timeZone: row.timeZone,
    locales: row.locales as Locale[],
    customDomain: row.customDomain,
    customDomainVerification: verificationOf(row),
    published: row.published,
    allowSubscribers: row.allowSubscribers,
    bannerFollowsChecks: row.bannerFollowsChecks,
    supportUrl: row.supportUrl,
    visibility: row.visibility as 'public' | 'private',
    viewerEmailDomains: row.viewerEmailDomains,
    // Both written only from the validated request body.
    theme: row.theme as Record<string, string>,
    headerLinks: row.headerLinks as unknown as HeaderLink[],
    footerText: row.footerText,
    logoUrl: assetUrl('logo'),
    faviconUrl: assetUrl('favicon'),
    publicUrl,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  }
}

export function componentBody(row: ComponentRow) {
  return {
    id: row.id,
    pageId: row.pageId,
    groupId: row.groupId,
    name: row.name,
    description: row.description,
    position: row.position,
    status: row.status as ComponentStatus,
    showUptime: row.showUptime,
    alertServices: row.alertServices,
    audienceIds: row.audienceIds,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  }
}

export function groupBody(row: GroupRow) {
  return {
    id: row.id,
    pageId: row.pageId,
    name: row.name,
    description: row.description,
    position: row.position,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  }
}

export interface AffectedComponentRecord {
  code: string
  name: string
  oldStatus: ComponentStatus
  newStatus: ComponentStatus
}

export function updateBody(row: UpdateRow) {
  return {
    id: row.id,
    status: row.status,
    body: row.body,
    displayAt: iso(row.displayAt),
    affectedComponents: row.affectedComponents as unknown as AffectedComponentRecord[],
    createdAt: iso(row.createdAt),
  }
}

function recordBody(row: IncidentRow, components: Array<{ componentId: string; status: string }>, updates: UpdateRow[]) {
  return {
    id: row.id,
    pageId: row.pageId,
    name: row.name,
    published: row.published,
    audienceIds: row.audienceIds,
    startedAt: iso(row.startedAt),
    resolvedAt: isoOrNull(row.resolvedAt),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    components: components.map((component) => ({ componentId: component.componentId, status: component.status as ComponentStatus })),
    updates: updates.map(updateBody),
  }
}

export function incidentBody(row: IncidentRow, components: Array<{ componentId: string; status: string }>, updates: UpdateRow[]) {
  return {
    ...recordBody(row, components, updates),
    status: row.status as (typeof incidentStatuses)[number],
    impact: row.impact as (typeof incidentImpacts)[number],
    alertId: row.alertId,
    monitoringAt: isoOrNull(row.monitoringAt),
  }
}

export function maintenanceBody(row: IncidentRow, components: Array<{ componentId: string; status: string }>, updates: UpdateRow[]) {
  return {
    ...recordBody(row, components, updates),
    status: row.status as (typeof maintenanceStatuses)[number],
    scheduledFor: iso(row.scheduledFor ?? row.startedAt),
    scheduledUntil: iso(row.scheduledUntil ?? row.startedAt),
    autoStart: row.autoStart,
    autoComplete: row.autoComplete,
  }
}
