// The real peers `pnpm bench:peers` measures beside our services, as Debian packages them
// (`prometheus-alertmanager`, `prometheus-blackbox-exporter`), each started on loopback with a
// configuration of its own in a temporary directory and stopped at the end.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'

export interface PeerProcess {
  url: string
  pid: number
  stop(): Promise<void>
}

/** A port free on loopback now (the peers take their address as a flag, not port 0). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** Waits until `url` answers 200 (the peer is ready), for at most 20 s. */
async function ready(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${child.spawnfile} exited with ${child.exitCode}`)
    try {
      if ((await fetch(url)).ok) return
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${url} did not answer within 20 s`)
}

/** Starts a Debian peer with its configuration file; exits the bench with a clear line when it is not installed. */
async function startPeer(binary: string, configFile: string, args: (directory: string, address: string) => string[], readyPath: string) {
  const executable = `/usr/bin/${binary}`
  if (!existsSync(executable)) {
    console.error(`${binary} is not installed: apt-get install -y ${binary}`)
    process.exit(2)
  }
  const directory = await mkdtemp(path.join(tmpdir(), `${binary}-`))
  await writeFile(path.join(directory, 'config.yml'), configFile)
  const address = `127.0.0.1:${await freePort()}`
  const child = spawn(executable, args(directory, address), { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)))
  const url = `http://${address}`
  try {
    await ready(`${url}${readyPath}`, child)
  } catch (error) {
    child.kill('SIGKILL')
    throw new Error(`${(error as Error).message}\n${stderr}`)
  }
  return {
    url,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM')
      await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)))
      await rm(directory, { recursive: true, force: true })
    },
  } satisfies PeerProcess
}

/** Prometheus Alertmanager with one receiver that sends nowhere, clustering off: its API keeps alerts in memory. */
export const startAlertmanager = () =>
  startPeer(
    'prometheus-alertmanager',
    "route:\n  receiver: 'nowhere'\nreceivers:\n  - name: 'nowhere'\n",
    (directory, address) => [
      `--config.file=${path.join(directory, 'config.yml')}`,
      `--storage.path=${path.join(directory, 'data')}`,
      `--web.listen-address=${address}`,
      '--cluster.listen-address=',
      '--log.level=warn',
    ],
    '/-/ready',
  )

/** Prometheus blackbox_exporter with the `http_2xx` module its documentation starts with. */
export const startBlackboxExporter = () =>
  startPeer(
    'prometheus-blackbox-exporter',
    'modules:\n  http_2xx:\n    prober: http\n    timeout: 5s\n    http:\n      preferred_ip_protocol: ip4\n',
    (directory, address) => [`--config.file=${path.join(directory, 'config.yml')}`, `--web.listen-address=${address}`, '--log.level=warn'],
    '/-/healthy',
  )
