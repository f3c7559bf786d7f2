import { createHash, createPublicKey, generateKeyPairSync, type JsonWebKey } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'

export interface SigningKey {
  kid: string
  privateKeyPem: string
  publicKeyPem: string
  /** The public half as a JWK, as a JWKS lists it. */
  jwk: JsonWebKey & { kid: string; alg: 'RS256'; use: 'sig' }
}

export function generateSigningKey(): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return signingKeyFrom(
    privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  )
}

/** A key pair kept as PEM, with its JWK and RFC 7638 key id. */
export function signingKeyFrom(privateKeyPem: string, publicKeyPem: string): SigningKey {
  const jwk = createPublicKey(publicKeyPem).export({ format: 'jwk' })
  // RFC 7638 thumbprint as the key id: stable for the key, different for every other key.
  const kid = createHash('sha256')
    .update(JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n }))
    .digest('base64url')
  return { kid, privateKeyPem, publicKeyPem, jwk: { ...jwk, kid, alg: 'RS256', use: 'sig' } }
}

/** The development key, kept under the data folder so tokens survive a restart. */
export async function loadOrCreateSigningKey(folder: string): Promise<SigningKey> {
  const file = path.join(folder, 'signing-key.json')
  try {
    const stored = JSON.parse(await readFile(file, 'utf8')) as { privateKeyPem: string; publicKeyPem: string }
    return signingKeyFrom(stored.privateKeyPem, stored.publicKeyPem)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const key = generateSigningKey()
  await mkdir(folder, { recursive: true })
  await writeFile(file, JSON.stringify({ privateKeyPem: key.privateKeyPem, publicKeyPem: key.publicKeyPem }), { mode: 0o600 })
  return key
}
