export interface RefreshRequest {
  tokenUrl: string
  clientId: string
  clientSecret?: string
  refreshToken: string
}

export type RefreshOutcome =
  { kind: 'refreshed'; idToken: string; refreshToken?: string } | { kind: 'invalid_grant' } | { kind: 'failed'; reason: string }

interface TokenEndpointResponse {
  id_token?: string
  refresh_token?: string
  error?: string
  error_description?: string
}

/**
 * OAuth 2.0 refresh-token grant (RFC 6749 §6) against the identity provider's token
 * endpoint, as a Cognito user pool expects it: form-encoded, and the client secret (when
 * the app client has one) by HTTP Basic (RFC 6749 §2.3.1).
 */
export async function exchangeRefreshToken(request: RefreshRequest): Promise<RefreshOutcome> {
  const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: request.refreshToken, client_id: request.clientId })
  const headers = clientHeaders(request.clientId, request.clientSecret)
  let response: Response
  try {
    response = await fetch(request.tokenUrl, { method: 'POST', headers, body: form, signal: AbortSignal.timeout(10_000) })
  } catch (error) {
    return { kind: 'failed', reason: (error as Error).message }
  }
  const body = (await response.json().catch(() => ({}))) as TokenEndpointResponse
  if (!response.ok) {
    if (body.error === 'invalid_grant') return { kind: 'invalid_grant' }
    return { kind: 'failed', reason: body.error ?? `HTTP ${response.status}` }
  }
  if (!body.id_token) return { kind: 'failed', reason: 'no id_token in the response' }
  return { kind: 'refreshed', idToken: body.id_token, refreshToken: body.refresh_token }
}

/** A form post as the app client: its secret, when it has one, by HTTP Basic (RFC 6749 §2.3.1). */
function clientHeaders(clientId: string, clientSecret: string | undefined): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }
  if (clientSecret) {
    const credentials = `${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`
    headers.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`
  }
  return headers
}

/**
 * Token revocation (RFC 7009) at the identity provider, as Cognito's /oauth2/revoke takes it:
 * `token` and `client_id`, form-encoded, the secret by HTTP Basic. Answers the failure's
 * reason, or undefined when the provider accepted it.
 */
export async function revokeRefreshToken(request: {
  revokeUrl: string
  clientId: string
  clientSecret?: string
  refreshToken: string
}): Promise<string | undefined> {
  const form = new URLSearchParams({ token: request.refreshToken, client_id: request.clientId })
  try {
    const response = await fetch(request.revokeUrl, {
      method: 'POST',
      headers: clientHeaders(request.clientId, request.clientSecret),
      body: form,
      signal: AbortSignal.timeout(10_000),
    })
    return response.ok ? undefined : `HTTP ${response.status}`
  } catch (error) {
    return (error as Error).message
  }
}
