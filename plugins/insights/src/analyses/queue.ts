import type { AiConfig } from '@svc/config'

/** The analysis jobs: one per analysis, `{ organizationId, analysisId }`. */
export const ANALYZE_QUEUE = 'insights.analyze'
/** The insights surface's copy of `alert.created` events. */
export const ALERT_CREATED_QUEUE = 'insights.alert-created'

export interface AnalyzeJob {
  organizationId: string
  analysisId: string
}

/** The AI jobs (analyses, RCA drafts): retries with doubling delays; a job running longer than this is presumed dead and retried. */
export function aiJobPolicy(ai: AiConfig) {
  return { retryLimit: ai.retryLimit, retryDelay: ai.retryDelaySeconds, retryBackoff: true, expireInSeconds: 15 * 60 }
}
