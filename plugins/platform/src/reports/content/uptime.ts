import type { Executor } from '@svc/db'
import { dailySeries, percentText, type ReportContent } from '../model.js'
import type { CheckAvailabilityReader, ComponentUptimeReader } from '../sources.js'

const LEFT_OUT = (section: string, product: string) =>
  `${section} are left out: whoever asked for this report has no ${product} role to read them with.`

const minutes = (seconds: number) => Math.round(seconds / 6) / 10

/**
 * Uptime of the period: each status page component (the public page's arithmetic: maintenance left
 * out, a partial outage weighted) and each synthetic check (runs not failing, the linked
 * components' maintenance left out, as its SLA). Only the `sections` its requester may read are
 * read at all; a section left out is empty and a note says why (reading-rule.ts).
 */
export async function uptimeReport(
  db: Executor,
  organizationId: string,
  from: Date,
  to: Date,
  readers: { componentUptime: ComponentUptimeReader; checkAvailability: CheckAvailabilityReader },
  sections: readonly string[],
): Promise<ReportContent> {
  const withPages = sections.includes('statuspages')
  const withChecks = sections.includes('synthetics')
  const [{ components, partialOutageWeight }, checks] = await Promise.all([
    withPages ? readers.componentUptime(db, organizationId, from, to) : { components: [], partialOutageWeight: 0 },
    withChecks ? readers.checkAvailability(db, organizationId, from, to) : [],
  ])
  const downtime = new Map<string, number>()
  for (const component of components)
    for (const day of component.days)
      downtime.set(
        day.date,
        (downtime.get(day.date) ?? 0) + minutes(day.majorOutageSeconds + partialOutageWeight * day.partialOutageSeconds),
      )
  const measured = components.filter((component) => component.uptimePercentage !== null)
  const lowest = measured.reduce<(typeof measured)[number] | undefined>(
    (worst, component) => (!worst || component.uptimePercentage! < worst.uptimePercentage! ? component : worst),
    undefined,
  )
  const runs = checks.reduce((sum, check) => sum + check.runs, 0)
  const failures = checks.reduce((sum, check) => sum + check.failures, 0)
  return {
    title: 'Uptime',
    from,
    to,
    summary: [
      { label: 'Status page components', value: String(components.length) },
      {
        label: 'Lowest component uptime',
        value: lowest ? `${percentText(lowest.uptimePercentage)} (${lowest.pageName} / ${lowest.name})` : 'n/a',
      },
      { label: 'Synthetic checks', value: String(checks.length) },
      {
        label: 'Check availability, all runs',
        value: percentText(runs === 0 ? null : Math.round(((runs - failures) / runs) * 100_000) / 1000),
      },
    ],
    chart: {
      title: 'Component downtime per day (minutes, partial outage weighted)',
      unit: 'minutes',
      points: dailySeries(from, to, downtime),
    },
    tables: [
      {
        title: 'Status page components',
        columns: ['Page', 'Component', 'Uptime', 'Major outage (min)', 'Partial outage (min)', 'Maintenance (min)'],
        rows: components.map((component) => [
          component.pageName,
          component.name,
          percentText(component.uptimePercentage),
          minutes(component.majorOutageSeconds),
          minutes(component.partialOutageSeconds),
          minutes(component.maintenanceSeconds),
        ]),
      },
      {
        title: 'Synthetic checks',
        columns: ['Check', 'Kind', 'Runs', 'Failures', 'Availability', 'State now'],
        rows: checks.map((check) => [check.name, check.kind, check.runs, check.failures, percentText(check.availability), check.state]),
      },
    ],
    detail: {
      title: 'Uptime',
      columns: [
        'kind',
        'page',
        'name',
        'uptime_percent',
        'major_outage_minutes',
        'partial_outage_minutes',
        'maintenance_minutes',
        'runs',
        'failures',
      ],
      rows: [
        ...components.map((component) => [
          'status_component',
          component.pageName,
          component.name,
          component.uptimePercentage,
          minutes(component.majorOutageSeconds),
          minutes(component.partialOutageSeconds),
          minutes(component.maintenanceSeconds),
          null,
          null,
        ]),
        ...checks.map((check) => [
          `check:${check.kind}`,
          null,
          check.name,
          check.availability,
          null,
          null,
          null,
          check.runs,
          check.failures,
        ]),
      ],
    },
    notes: [
      ...(withPages
        ? [
            `Component uptime leaves maintenance out and counts a partial outage as ${partialOutageWeight} of downtime, as the public status page does.`,
            ...(components.length === 0 ? ['No status page components existed in this period: the components section is empty.'] : []),
          ]
        : [LEFT_OUT('Status page components', 'statuspages')]),
      ...(withChecks
        ? checks.length === 0
          ? ['No synthetic checks existed in this period: the checks section is empty.']
          : []
        : [LEFT_OUT('Synthetic checks', 'synthetics')]),
    ],
  }
}
