import { hash } from 'node:crypto'

/**
 * How a credential that only needs to be recognised is stored (ingest API keys, acknowledgement
 * link and calendar feed tokens, SCIM tokens): SHA-256, hex. They are long random strings, so a
 * fast hash is enough; the one-shot `hash` (Node 20.12) costs a quarter of `createHash`, and
 * ingestion pays it per delivery.
 */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex')
}
