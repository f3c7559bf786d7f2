import { clip, runAgent, type AgentStep, type OpenAiOptions, type SpendGuard, type TokenUsage } from '@svc/ai'
import { DEFAULT_INVESTIGATION_BOUNDS, type AiConfig } from '@svc/config'
import type { Executor } from '@svc/db'
import { describeDeploy, runPlanner } from './planner.js'
import { Findings } from './findings.js'
import type { Subject } from './subject.js'
import { investigationTools, type Gathered } from './tools.js'

export interface Investigation {
  subject: Subject
  findings: Findings
  gathered: Gathered
  usage: TokenUsage
}

const INSTRUCTIONS = [
  'You are the investigator agent of an on-call team. Find the probable cause of the incident you are given.',
  'Call the tools to gather evidence before answering; get_deploys scores each deploy (time before the onset, relation to the failing services, environment, whether a newer deploy replaced it), weigh those scores heavily.',
  'Name a deploy in suspectDeploys only when the evidence supports it; when nothing points at a deploy, leave suspectDeploys empty and say so: never name the latest deploy by default.',
  'A deploy after the onset cannot be the cause. A staging deploy does not break production.',
  'Cite what each claim rests on by the resource ids the tools returned. Answer as JSON matching the schema.',
].join(' ')

/** What the model is told of the subject, each field clipped to its bound (a webhook can send megabytes). */
function subjectFacts(subject: Subject) {
  return {
    kind: subject.kind,
    reference: clip(subject.reference, 300),
    title: clip(subject.title, 300),
    description: subject.description === null ? null : clip(subject.description, 2_000),
    priority: subject.priority,
    status: subject.status,
    onset: subject.onset.toISOString(),
    services: subject.services.slice(0, 20),
    alerts: subject.alerts.slice(0, 20).map((alert) => ({
      id: alert.id,
      title: clip(alert.title, 300),
      service: alert.service,
      priority: alert.priority,
      firstSeenAt: alert.firstSeenAt.toISOString(),
      onset: alert.onset.toISOString(),
      labels: Object.fromEntries(
        Object.entries(alert.labels)
          .slice(0, 30)
          .map(([key, value]) => [clip(key, 100), clip(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''), 200)]),
      ),
    })),
  }
}

/**
 * One investigation of `subject` (decision 0021): with a model, a bounded tool-calling loop;
 * without one, the offline planner over the same tools. Every step reaches `onStep` as it
 * happens. A deploy the model names must be one the tools returned, or it is dropped.
 */
export async function investigate(
  db: Executor,
  ai: AiConfig,
  subject: Subject,
  organizationId: string,
  run: { guard: SpendGuard; onStep(step: AgentStep): Promise<void>; openai?: OpenAiOptions },
): Promise<Investigation> {
  const { tools, gathered } = investigationTools(db, organizationId, subject)
  const openai = run.openai ?? ai.openai
  if (!openai) {
    const findings = await runPlanner(subject, tools, gathered, run.onStep)
    return {
      subject,
      findings,
      gathered,
      usage: { provider: 'offline', model: 'offline', promptTokens: 0, completionTokens: 0 },
    }
  }
  const bounds = ai.investigation ?? DEFAULT_INVESTIGATION_BOUNDS
  const { answer, usage } = await runAgent(openai, {
    name: 'incident_investigation',
    instructions: INSTRUCTIONS,
    subject: subjectFacts(subject),
    tools,
    schema: Findings,
    bounds: { maxSteps: bounds.maxSteps, maxTokens: bounds.maxTokens, deadline: Date.now() + bounds.timeoutMs },
    guard: run.guard,
    onStep: run.onStep,
  })
  const known = new Map([...(gathered.deploys ?? []), ...(gathered.configChanges ?? [])].map((deploy) => [deploy.id, deploy]))
  const suspectDeploys = answer.suspectDeploys
    .filter((suspect) => known.has(suspect.deployId))
    .map((suspect) => {
      const deploy = known.get(suspect.deployId)!
      return { ...suspect, service: deploy.service, version: deploy.version, score: Math.min(1, Math.max(0, suspect.score)) }
    })
  const probableCause = { ...answer.probableCause, confidence: Math.min(1, Math.max(0, answer.probableCause.confidence)) }
  return { subject, findings: { ...answer, suspectDeploys, probableCause }, gathered, usage }
}

/** The prose every analysis has had (summary, root cause, recommendations), from the findings. */
export function proseOf(investigation: Investigation) {
  const { findings, gathered } = investigation
  const suspect = findings.suspectDeploys[0]
  const deploy = [...(gathered.deploys ?? []), ...(gathered.configChanges ?? [])].find((row) => row.id === suspect?.deployId)
  return {
    summary: findings.summary,
    rootCause: findings.probableCause.statement,
    recommendations: findings.recommendations.map((item) => `- ${item}`).join('\n'),
    severity: findings.severity,
    suspectedDeployId: suspect?.deployId ?? null,
    suspectDescription: deploy ? describeDeploy(deploy) : null,
  }
}
