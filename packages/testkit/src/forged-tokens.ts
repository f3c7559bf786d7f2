import { createHmac, createSign } from 'node:crypto'

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

/** Signs arbitrary header and claims with an RSA private key: for tokens a real issuer would never mint. */
export function signRs256(privateKeyPem: string, header: Record<string, unknown>, claims: Record<string, unknown>): string {
  const input = `${base64url({ alg: 'RS256', typ: 'JWT', ...header })}.${base64url(claims)}`
  const signature = createSign('RSA-SHA256').update(input).sign(privateKeyPem).toString('base64url')
  return `${input}.${signature}`
}

/** `alg: none`, no signature. */
export function unsignedToken(claims: Record<string, unknown>, kid?: string): string {
  return `${base64url({ alg: 'none', typ: 'JWT', ...(kid ? { kid } : {}) })}.${base64url(claims)}.`
}

/** The algorithm-confusion attack: HS256 keyed with the issuer's public key. */
export function hs256WithKey(key: string, claims: Record<string, unknown>, kid: string): string {
  const input = `${base64url({ alg: 'HS256', typ: 'JWT', kid })}.${base64url(claims)}`
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`
}

/** A valid token with its claims swapped after signing. */
export function tamperedToken(token: string, changes: Record<string, unknown>): string {
  const [header, payload, signature] = token.split('.')
  const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()) as Record<string, unknown>
  return `${header}.${base64url({ ...claims, ...changes })}.${signature}`
}

export function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>
}
