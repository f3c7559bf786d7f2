import { readFile, mkdir, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { generateSigningKey, signingKeyFrom, type SigningKey } from '@svc/dev-idp'
import { workspaceRoot } from './workspace.js'

// Test issuers' RSA keys. Generating a 2048-bit key takes from 50 ms to a second (it searches for
// primes); most test files start an issuer, so the suite paid it a few hundred times. A
// few keys are generated once per checkout and kept under node_modules/.cache; each process
// hands them out in order, so its issuers still hold different keys, and generates any beyond.

/** More than any test file starts issuers. */
const KEPT_KEYS = 4

interface KeptPair {
  privateKeyPem: string
  publicKeyPem: string
}

let handedOut = 0
let keptKeys: Promise<SigningKey[]> | undefined

async function loadOrCreateKeptKeys(): Promise<SigningKey[]> {
  const file = path.join(workspaceRoot(), 'node_modules', '.cache', 'svc-testkit', 'signing-keys.json')
  try {
    const pairs = JSON.parse(await readFile(file, 'utf8')) as KeptPair[]
    if (pairs.length === KEPT_KEYS) return pairs.map((pair) => signingKeyFrom(pair.privateKeyPem, pair.publicKeyPem))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const keys = Array.from({ length: KEPT_KEYS }, () => generateSigningKey())
  const pairs: KeptPair[] = keys.map(({ privateKeyPem, publicKeyPem }) => ({ privateKeyPem, publicKeyPem }))
  // Written whole under a name of this process, then renamed: a process reading it never sees
  // half a file, and two processes creating it at once each keep their own keys.
  await mkdir(path.dirname(file), { recursive: true })
  const scratch = `${file}.${process.pid}`
  await writeFile(scratch, JSON.stringify(pairs), { mode: 0o600 })
  await rename(scratch, file)
  return keys
}

/** The next signing key of this process: one kept for the checkout while they last, then a new one. */
export async function nextSigningKey(): Promise<SigningKey> {
  const keys = await (keptKeys ??= loadOrCreateKeptKeys())
  return keys[handedOut++] ?? generateSigningKey()
}
