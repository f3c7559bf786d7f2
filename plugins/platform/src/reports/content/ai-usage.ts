import type { Executor } from '@svc/db'
import { dailySeries, type ReportContent } from '../model.js'
import type { AiUsageReader } from '../sources.js'

const usd = (value: number) => `$${value.toFixed(4)}`

/** AI consumption of the period: requests, tokens and cost, by feature and model and by day. */
export async function aiUsageReport(
  db: Executor,
  organizationId: string,
  from: Date,
  to: Date,
  aiUsage: AiUsageReader,
): Promise<ReportContent> {
  const usage = await aiUsage(db, organizationId, from, to)
  const { totals } = usage
  return {
    title: 'AI usage',
    from,
    to,
    summary: [
      { label: 'Model requests', value: String(totals.requests) },
      { label: 'Prompt tokens', value: String(totals.promptTokens) },
      { label: 'Completion tokens', value: String(totals.completionTokens) },
      { label: 'Cost', value: usd(totals.costUsd) },
    ],
    chart: {
      title: 'Cost per day (USD)',
      unit: 'USD',
      points: dailySeries(from, to, new Map(usage.perDay.map((row) => [row.day, row.costUsd]))),
    },
    tables: [
      {
        title: 'By feature and model',
        columns: ['Feature', 'Provider', 'Model', 'Requests', 'Prompt tokens', 'Completion tokens', 'Cost'],
        rows: usage.byModel.map((row) => [
          row.feature,
          row.provider,
          row.model,
          row.requests,
          row.promptTokens,
          row.completionTokens,
          usd(row.costUsd),
        ]),
      },
    ],
    detail: {
      title: 'AI usage by day',
      columns: ['day', 'requests', 'prompt_tokens', 'completion_tokens', 'cost_usd'],
      rows: usage.perDay.map((row) => [row.day, row.requests, row.promptTokens, row.completionTokens, row.costUsd]),
    },
    notes: totals.requests === 0 ? ['No AI requests were made in this period.'] : [],
  }
}
