// Where a running `pnpm start` says it is, so `pnpm token` and `pnpm outbox` in another terminal
// find it by themselves after PLATFORM_PORT, DEV_IDP_PORT or DATA_DIR changed.
import { readFileSync } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Environment } from '@svc/config'

/**
 * In the checkout, not under DATA_DIR: it is how a different DATA_DIR is found. DEV_SYSTEM_FILE
 * puts it elsewhere, so the tests' own `pnpm start` never overwrites, then removes, the file of a
 * developer's running beside it.
 */
const file = () => process.env.DEV_SYSTEM_FILE || path.resolve(import.meta.dirname, '..', '.dev-system.json')

export interface DevSystem {
  pid: number
  dataDir: string
  platformPort: number
  productPort: number
  devIdpPort: number
}

/** Written once `pnpm start` listens; removed when it stops. */
export async function announceDevSystem(env: Environment): Promise<() => Promise<void>> {
  const system: DevSystem = {
    pid: process.pid,
    dataDir: path.resolve(env.DATA_DIR),
    platformPort: env.PLATFORM_PORT,
    productPort: env.PRODUCT_PORT,
    devIdpPort: env.DEV_IDP_PORT,
  }
  const announced = file()
  await writeFile(announced, `${JSON.stringify(system, null, 2)}\n`)
  return () => rm(announced, { force: true })
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The running system this checkout started, if any (a file left by one that died is ignored). */
export function runningDevSystem(): DevSystem | undefined {
  try {
    const system = JSON.parse(readFileSync(file(), 'utf8')) as DevSystem
    return alive(system.pid) ? system : undefined
  } catch {
    return undefined
  }
}

/**
 * The environment a helper command works in: the running system's ports and data directory,
 * except where the caller set one explicitly.
 */
export function environmentOfRunningSystem(env: Environment, raw: NodeJS.ProcessEnv = process.env): Environment {
  const system = runningDevSystem()
  if (!system) return env
  return {
    ...env,
    ...(raw.DATA_DIR ? {} : { DATA_DIR: system.dataDir }),
    ...(raw.PLATFORM_PORT ? {} : { PLATFORM_PORT: system.platformPort }),
    ...(raw.PRODUCT_PORT ? {} : { PRODUCT_PORT: system.productPort }),
    ...(raw.DEV_IDP_PORT ? {} : { DEV_IDP_PORT: system.devIdpPort }),
  }
}
