import type { TwilioConfig } from '@svc/config'
import twilio from 'twilio'
import type RequestClient from 'twilio/lib/base/RequestClient.js'
import { DeliveryError, type MessageProvider, type OutboundMessage } from './message.js'

/**
 * Where Twilio reports what became of a message or call (see the alerting surface's Twilio
 * routes): the outbox message's id follows, so a report that beats our record of the send is kept.
 */
export const TWILIO_STATUS_PATH = '/api/v1/twilio/status'
/** Where a call fetches what to say: the outbox message's id follows. */
export const TWILIO_VOICE_PATH = '/api/v1/twilio/voice'

/**
 * The SDK's HTTP client, sending to a Twilio-compatible server instead of api.twilio.com. The SDK
 * has no base-URL option; replacing the client is the way its maintainers point to
 * (twilio/twilio-node#326).
 */
class GatewayClient extends twilio.RequestClient {
  constructor(private readonly apiUrl: string) {
    super()
  }

  override request<TData>(options: RequestClient.RequestOptions<TData>) {
    return super.request<TData>({ ...options, uri: options.uri.replace(/^https:\/\/[a-z]+\.twilio\.com/, this.apiUrl) })
  }
}

interface TwilioFailure extends Error {
  status?: number
  code?: number
}

function deliveryError(error: unknown): DeliveryError {
  const failure = error as TwilioFailure
  // Twilio answers 4xx for what retrying cannot fix (a bad number, a blocked recipient), except 429.
  const permanent = failure.status !== undefined && failure.status >= 400 && failure.status < 500 && failure.status !== 429
  const code = failure.code ? ` (Twilio error ${failure.code})` : ''
  return new DeliveryError(`twilio: ${failure.message}${code}`, permanent, { cause: error })
}

/** SMS (`messages.create`) and voice (`calls.create`, the call fetching its words from us) through Twilio's REST API with its SDK. */
export function twilioProviders(config: TwilioConfig): { sms: MessageProvider; voice: MessageProvider } {
  const client = twilio(config.accountSid, config.authToken, config.apiUrl ? { httpClient: new GatewayClient(config.apiUrl) } : {})
  const statusCallback = (message: OutboundMessage) => `${config.callbackBase}${TWILIO_STATUS_PATH}/${message.id}`
  return {
    sms: {
      name: 'twilio',
      async send(message: OutboundMessage) {
        try {
          const sent = await client.messages.create({
            to: message.to,
            from: config.from,
            body: message.text,
            statusCallback: statusCallback(message),
          })
          return { messageId: sent.sid }
        } catch (error) {
          throw deliveryError(error)
        }
      },
    },
    voice: {
      name: 'twilio',
      async send(message: OutboundMessage) {
        try {
          const call = await client.calls.create({
            to: message.to,
            from: config.from,
            url: `${config.callbackBase}${TWILIO_VOICE_PATH}/${message.id}`,
            statusCallback: statusCallback(message),
            statusCallbackEvent: ['completed'],
          })
          return { messageId: call.sid }
        } catch (error) {
          throw deliveryError(error)
        }
      },
    },
  }
}
