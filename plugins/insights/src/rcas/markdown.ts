import type { ActionItemRow, LinkRow, RcaRow } from '../queries/rcas.js'

const STATUS_LABELS = new Map([
  ['open', 'Open'],
  ['in_progress', 'In progress'],
  ['done', 'Done'],
  ['wont_do', "Won't do"],
])

/** A table cell: no line breaks, pipes escaped. */
function cell(value: string | null | undefined): string {
  return (value ?? '').replace(/\r?\n/g, ' ').replace(/\|/g, '\\|').trim() || '—'
}

function section(title: string, body: string | null): string[] {
  return [`## ${title}`, '', body?.trim() || '_Not written yet._', '']
}

/**
 * The RCA as Markdown, ready to paste into a wiki: its narrative sections, then the incidents it
 * explains and its action items as tables. Names of assignees are their e-mails.
 */
export function rcaMarkdown(
  rca: RcaRow,
  links: LinkRow[],
  items: ActionItemRow[],
  assignees: Map<string, string>,
  readable: ReadonlySet<string>,
): string {
  const lines = [
    `# ${rca.title}`,
    '',
    `- **Status:** ${rca.status.replace('_', ' ')}`,
    ...(rca.publishedAt ? [`- **Published:** ${rca.publishedAt.toISOString()}`] : []),
    `- **Created:** ${rca.createdAt.toISOString()}`,
    ...(rca.aiDraftedAt ? [`- **AI-drafted:** ${rca.aiDraftedAt.toISOString()}`] : []),
    '',
    ...section('Summary', rca.summary),
    ...section('Impact', rca.impact),
    ...section('Root cause', rca.rootCause),
    ...section('Timeline', rca.timeline),
    '## Incidents',
    '',
  ]
  if (links.length === 0) lines.push('_None linked._', '')
  else {
    lines.push('| Surface | Incident | Priority | Began | Resolved |', '|---|---|---|---|---|')
    for (const link of links) {
      if (!readable.has(link.sourceProduct)) {
        lines.push(`| ${link.sourceProduct} | _not shown: reading it needs the ${link.sourceProduct} role viewer_ | | | |`)
        continue
      }
      lines.push(
        `| ${link.sourceProduct} | ${cell(link.title ?? link.incidentId)} | ${cell(link.priority)} | ${cell(link.firstSeenAt?.toISOString())} | ${cell(link.resolvedAt?.toISOString())} |`,
      )
    }
    lines.push('')
  }
  lines.push('## Action items', '')
  if (items.length === 0) lines.push('_None yet._', '')
  else {
    lines.push('| Action | Assignee | Priority | Due | Status |', '|---|---|---|---|---|')
    for (const item of items) {
      const assignee = item.assigneeUserId ? (assignees.get(item.assigneeUserId) ?? item.assigneeUserId) : null
      lines.push(
        `| ${cell(item.title)} | ${cell(assignee)} | ${item.priority} | ${cell(item.dueDate)} | ${STATUS_LABELS.get(item.status) ?? item.status} |`,
      )
    }
    lines.push('')
  }
  return lines.join('\n')
}
