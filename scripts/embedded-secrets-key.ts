import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Environment } from '@svc/config'

/**
 * The embedded default's SYNTHETICS_SECRETS_KEY when none is set: 32 random bytes kept under
 * DATA_DIR beside the database they protect (mode 0600), so check secrets work on one machine
 * out of the box. A deployment sets the variable; every replica must share it.
 */
export async function embeddedSecretsKey(env: Environment): Promise<string> {
  if (env.SYNTHETICS_SECRETS_KEY) return env.SYNTHETICS_SECRETS_KEY
  const file = path.resolve(env.DATA_DIR, 'synthetics-secrets.key')
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
