import { randomBytes } from 'node:crypto'
import { hashSecret } from '@svc/auth'

/** Recognisable prefixes, so a leaked key or secret is found by secret scanners. */
const API_KEY_PREFIX = 'whk_'
const SIGNING_SECRET_PREFIX = 'whsec_'
const DISPLAYED_CHARACTERS = 12

export function hashApiKey(apiKey: string): string {
  return hashSecret(apiKey)
}

/** A new ingest API key: the plaintext (answered once), the prefix kept for display, the stored hash. */
export function generateApiKey(): { apiKey: string; prefix: string; hash: string } {
  const apiKey = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`
  return { apiKey, prefix: apiKey.slice(0, DISPLAYED_CHARACTERS), hash: hashApiKey(apiKey) }
}

export function generateSigningSecret(): string {
  return `${SIGNING_SECRET_PREFIX}${randomBytes(32).toString('base64url')}`
}
