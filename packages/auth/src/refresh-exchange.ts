export interface RefreshRequest {
  tokenUrl: string
  clientId: string
  clientSecret?: string
  refreshToken: string
}

export type RefreshOutcome =
  | { kind: 'refreshed'; idToken: string; refreshToken?: string }
  | { kind: 'invalid_grant' }
  | { kind: 'failed'; reason: string }

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
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  }
  if (request.clientSecret) {
    const credentials = `${encodeURIComponent(request.clientId)}:${encodeURIComponent(request.clientSecret)}`
    headers.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`
  }
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
