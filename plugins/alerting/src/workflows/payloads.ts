import { deployBody, type DeployEventRow } from '../intake/index.js'

/** The body of a deploy a `deploy.recorded` workflow sends to a webhook. */
export function deployPayload(organizationId: string, deploy: DeployEventRow, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    type: 'deploy.recorded',
    timestamp: new Date().toISOString(),
    data: { organizationId, deploy: deployBody(deploy), ...extra },
  })
}
