/** What both analyzers know of an incident, whatever surface it came from. */
export interface IncidentContext {
  sourceProduct: string
  incidentId: string
  /** How people name it when it is not its title: `INC-12` for an incident of alerting. */
  reference?: string
  title: string
  description: string | null
  service: string | null
  priority: string
  status: string
  /** When the incident began (an alert's first occurrence). */
  startedAt: Date
  occurrences: number
  labels: Record<string, unknown>
}

export interface DeployEvidence {
  id: string
  service: string
  environment: string | null
  version: string | null
  commitSha: string | null
  status: string
  /** When the deploy finished, or started when it has not finished. */
  at: string
  minutesBeforeIncident: number
}

export interface SimilarIncident {
  sourceProduct: string
  incidentId: string
  title: string
  /** 0 to 1: how alike the titles are (trigram similarity). */
  similarity: number
  resolvedAt: string | null
  /** The root cause its analysis found, when it had one. */
  rootCause: string | null
}

export interface TimelineEntry {
  type: string
  at: string
  detail: string | null
}

export const severities = ['critical', 'high', 'medium', 'low'] as const
export type Severity = (typeof severities)[number]

export interface TokenUsage {
  provider: 'offline' | 'openai'
  model: string
  promptTokens: number
  completionTokens: number
}

/** One incident an RCA explains, with what is known of it. */
export interface DraftIncident {
  incident: IncidentContext
  timeline: TimelineEntry[]
  /** Its latest completed analysis, if any. */
  analysis: { summary: string | null; rootCause: string | null; severity: string | null } | null
  /** Who was paged (each once, the first time, by which channels) and who acknowledged, when known. */
  people?: {
    paged: Array<{ email: string; channels: string[]; at: string }>
    acknowledged: Array<{ email: string; at: string }>
  }
}

/** Everything an RCA draft is written from; gathered by the caller. */
export interface RcaDraftContext {
  title: string
  incidents: DraftIncident[]
  /** Deploys in the window before the incidents began, newest first. */
  deploys: DeployEvidence[]
  /** Resolved incidents that look like the linked ones. */
  similarIncidents: SimilarIncident[]
}

/** The narrative of a post-mortem, as Markdown text per section. */
export interface RcaDraft {
  summary: string
  rootCause: string
  impact: string
  timeline: string
  suspectedDeployId: string | null
  usage: TokenUsage
}

/**
 * Room in a budget for model calls. Before each call the provider reserves the most the call
 * can cost (its prompt, estimated, and `max_tokens`); after it, it settles the reservation to
 * what the call really cost. A budget without room refuses the reservation by throwing an
 * AnalyzerError that is not retryable: the call is never made.
 */
export interface SpendGuard {
  reserve(estimate: { promptTokens: number; completionTokens: number }): Promise<SpendReservation>
}

export interface SpendReservation {
  settle(actual: { promptTokens: number; completionTokens: number }): Promise<void>
}

/** No budget: every call may be made. */
export const unguarded: SpendGuard = {
  async reserve() {
    return { async settle() {} }
  },
}

export interface IncidentAnalyzer {
  readonly provider: TokenUsage['provider']
  draftRca(context: RcaDraftContext, guard?: SpendGuard): Promise<RcaDraft>
}

/**
 * An analysis that could not be made. `retryable` says whether the same request may succeed
 * later (a timeout, a rate limit, a server error, a malformed reply) or never will (a refused
 * key, an unknown model).
 */
export class AnalyzerError extends Error {
  override name = 'AnalyzerError'
  /** Tokens the failed attempt had already spent (a malformed reply still costs its tokens). */
  usage?: TokenUsage
  constructor(
    message: string,
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}
