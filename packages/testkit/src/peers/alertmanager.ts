import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from '../teardown.js'

/** Debian's Prometheus Alertmanager (`apt-get install prometheus-alertmanager`; .ci/run installs it). */
export const ALERTMANAGER_BINARY = process.env.ALERTMANAGER_PATH ?? '/usr/bin/prometheus-alertmanager'

/**
 * Whether the real Alertmanager is here; CI must have it (a skipped interoperability test there
 * would be a pass that proves nothing), so its absence under CI=true throws.
 */
export function alertmanagerPresent(): boolean {
  const present = existsSync(ALERTMANAGER_BINARY)
  if (!present && process.env.CI) throw new Error(`${ALERTMANAGER_BINARY} is missing: .ci/run installs prometheus-alertmanager`)
  return present
}

/**
 * Starts the real Alertmanager with `config` (its YAML), on a port it picks itself (read from its
 * log, so two tests running at once never meet on one port), with no clustering; answers its
 * API base (`http://127.0.0.1:<port>/api/v2`) once it serves. Stopped at the test's end.
 */
export async function startAlertmanager(t: TestContext, config: string): Promise<{ api: string }> {
  const directory = await mkdtemp(join(tmpdir(), 'alertmanager-'))
  await writeFile(join(directory, 'alertmanager.yml'), config)
  const child = spawn(
    ALERTMANAGER_BINARY,
    [
      `--config.file=${join(directory, 'alertmanager.yml')}`,
      `--storage.path=${directory}`,
      '--web.listen-address=127.0.0.1:0',
      '--cluster.listen-address=',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  )
  // Stopped first, then its directory removed: on SIGTERM it writes its state there, and a
  // removal racing that write fails (ENOTEMPTY).
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  t.teardown(async () => {
    child.kill()
    await exited
    await rm(directory, { recursive: true, force: true, maxRetries: 3 })
  })
  const port = await new Promise<string>((resolve, reject) => {
    let log = ''
    const timer = setTimeout(() => reject(new Error(`Alertmanager did not start:\n${log}`)), 20_000)
    child.stderr.on('data', (chunk: Buffer) => {
      log += chunk.toString()
      const listening = /msg="Listening on" address=127\.0\.0\.1:(\d+)/.exec(log)
      if (listening?.[1]) {
        clearTimeout(timer)
        resolve(listening[1])
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`Alertmanager exited (${code}):\n${log}`))
    })
  })
  const api = `http://127.0.0.1:${port}/api/v2`
  const deadline = Date.now() + 20_000
  while (!(await fetch(`${api}/status`).catch(() => undefined))?.ok) {
    if (Date.now() > deadline) throw new Error('Alertmanager does not answer')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { api }
}
