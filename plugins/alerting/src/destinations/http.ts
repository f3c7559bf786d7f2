import { checkTarget, guardedLookup, type OutboundPolicy } from '@svc/outbound'
import { Agent, request } from 'undici'

export { checkTarget, TargetRefused, type OutboundPolicy } from '@svc/outbound'

/**
 * Connections whose addresses are checked when they are made, not only when the target was
 * saved: a host that resolves to a public address at creation and to 127.0.0.1 later (DNS
 * rebinding) is refused at connect time.
 */
function guardedAgent(policy: OutboundPolicy): Agent {
  return new Agent({
    connect: { lookup: guardedLookup(policy) },
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
    connectTimeout: 5_000,
  })
}

export interface OutboundAnswer {
  status: number
  body: string
}

/** POSTs JSON to a user's target under the policy; answers the status and (the start of) the body. */
export function createOutboundClient(policy: OutboundPolicy) {
  const dispatcher = guardedAgent(policy)
  return {
    async postJson(url: string, body: string, headers: Record<string, string> = {}): Promise<OutboundAnswer> {
      const target = await checkTarget(url, policy)
      const answer = await request(target, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'user-agent': 'incident-platform', ...headers },
        dispatcher,
      })
      const text = await answer.body.text()
      return { status: answer.statusCode, body: text.slice(0, 500) }
    },
    close: () => dispatcher.close(),
  }
}

export type OutboundClient = ReturnType<typeof createOutboundClient>
