import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Environment } from '@svc/config'

/**
 * A key the embedded default needs when none is set: 32 random bytes kept under DATA_DIR
 * beside the database they protect (mode 0600), so one machine works out of the box. A
 * deployment sets the variable; every replica must share it.
 */
async function embeddedKey(env: Environment, fileName: string): Promise<string> {
  const file = path.resolve(env.DATA_DIR, fileName)
  try {
    return (await readFile(file, 'utf8')).trim()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  await mkdir(path.dirname(file), { recursive: true })
  const key = randomBytes(32).toString('base64')
  await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' })
  return key
}

/** SYNTHETICS_SECRETS_KEY, or the embedded one: seals check secrets. */
export async function embeddedSecretsKey(env: Environment): Promise<string> {
  return env.SYNTHETICS_SECRETS_KEY ?? embeddedKey(env, 'synthetics-secrets.key')
}

/** REPORTS_SIGNING_KEY, or the embedded one: signs report download links. */
export async function embeddedReportsSigningKey(env: Environment): Promise<string> {
  return env.REPORTS_SIGNING_KEY ?? embeddedKey(env, 'reports-signing.key')
}
