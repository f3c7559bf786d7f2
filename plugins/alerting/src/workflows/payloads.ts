import { deployBody, type DeployEventRow } from '../intake/index.js'

/** The body of a deploy a `deploy.recorded` workflow sends to a webhook. */
export function deployPayload(organizationId: string, deploy: DeployEventRow, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    type: 'deploy.recorded',
    timestamp: new Date().toISOString(),
    data: { organizationId, deploy: deployBody(deploy), ...extra },
  })
}

/** The body of an incident change a workflow sends to a webhook: the incident as the API answers it. */
export function incidentPayload(trigger: string, organizationId: string, incident: object, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ type: trigger, timestamp: new Date().toISOString(), data: { organizationId, incident, ...extra } })
}
