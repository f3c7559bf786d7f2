import { spawn } from 'node:child_process'
import { freePort } from './ports.js'
import type { TestIssuer } from './issuer.js'
import type { TestContext } from './teardown.js'
import { until } from './until.js'
import { entryPointArgs, workspaceRoot } from './workspace.js'

const ROOT = workspaceRoot()

export interface ReplicaProcess {
  /** `http://127.0.0.1:<port>` */
  url: string
  pid: number
  /** Ends the process at once, as a crashed host or the OOM killer would: no hook runs. */
  kill(): Promise<void>
  /** What it wrote to stdout and stderr so far (pino lines). */
  output(): string
}

export interface ReplicaOptions {
  service: 'product' | 'platform'
  databaseUrl: string
  issuer: TestIssuer
  /** More environment variables, as an operator sets them (SMTP_URL, ALLOW_PRIVATE_TARGETS, …). */
  env?: Record<string, string>
  /** How long to wait for readiness; a start from source compiles it with tsx first. */
  readyTimeoutMs?: number
}

/**
 * A replica of a service as production runs one: its own process started from the service's
 * `server.ts` and configured by environment variables only, on a database the test shares with
 * other replicas. Tests of what survives a killed replica (decision 0013, "Replicas that die")
 * kill it with SIGKILL, so nothing of its own shutdown runs.
 */
export async function startReplicaProcess(t: TestContext, options: ReplicaOptions): Promise<ReplicaProcess> {
  const port = await freePort()
  const portVariable = options.service === 'product' ? 'PRODUCT_PORT' : 'PLATFORM_PORT'
  const child = spawn(process.execPath, entryPointArgs(`services/${options.service}/src/server.ts`), {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      [portVariable]: String(port),
      DATABASE_URL: options.databaseUrl,
      DATABASE_POOL_MAX: '5',
      AUTH_ISSUER: options.issuer.issuer,
      AUTH_JWKS_URL: options.issuer.jwksUrl,
      AUTH_CLIENT_ID: options.issuer.clientId,
      AUTH_TOKEN_URL: options.issuer.tokenUrl,
      LOG_LEVEL: 'warn',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      output += `[exited: ${signal ?? code}]\n`
      resolve()
    }),
  )
  let running = true
  void exited.then(() => (running = false))
  const kill = async () => {
    if (running) child.kill('SIGKILL')
    await exited
  }
  t.teardown(kill)
  const url = `http://127.0.0.1:${port}`
  await until(
    `the ${options.service} replica on ${url} to be ready`,
    async () => {
      if (!running) throw new Error(`the ${options.service} replica exited before it was ready:\n${output}`)
      const ready = await fetch(`${url}/api/v1/health/ready`).catch(() => undefined)
      return ready?.status === 200 ? true : undefined
    },
    options.readyTimeoutMs ?? 60_000,
  )
  return { url, pid: child.pid!, kill, output: () => output }
}
