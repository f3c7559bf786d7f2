import { lockUntilCommit, type Executor } from '@svc/db'
import { insertLink, insertRca } from '../queries/rcas.js'
import { rcasAbout } from '../reads.js'

/**
 * How alerting's workflows open an RCA for one of its incidents (create_rca): a draft document
 * linked to the incident, in the caller's transaction, written by no one (the system), unless an
 * RCA is linked to the incident already, which is answered instead.
 */
export async function openRcaForIncident(
  trx: Executor,
  request: { organizationId: string; incidentId: string; title: string },
): Promise<{ created: boolean; id: string; title: string }> {
  const { organizationId, incidentId } = request
  // Two workflows of one incident may ask at once: one creates.
  await lockUntilCommit(trx, `rca-for-incident:${incidentId}`)
  const [linked] = await rcasAbout(trx, organizationId, [incidentId])
  if (linked) return { created: false, id: linked.id, title: linked.title }
  const rca = await insertRca(trx, organizationId, { title: request.title }, [], null)
  await insertLink(trx, organizationId, rca.id, { sourceProduct: 'alerting', incidentId }, null)
  return { created: true, id: rca.id, title: rca.title }
}
