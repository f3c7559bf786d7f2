import { Session } from 'node:inspector/promises'
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import { buildApp } from '@svc/platform'
import { openResources } from '@svc/runtime'
import { startTestIssuer, testConfig } from '@svc/testkit'
const context = { teardown: () => {} }
const issuer = await startTestIssuer(context)
const config = testConfig(issuer, { logLevel: 'warn', rateLimit: { max: 1_000_000_000, timeWindow: '1 minute' } })
const resources = await openResources(config, { inMemory: true })
const platform = await buildApp(config, resources)
const address = await platform.listen({ port: 0, host: '127.0.0.1' })
const token = issuer.idp.mintIdToken({ email: 'bench@example.com' })
const url = process.env.PROBE_URL ? `${address}${process.env.PROBE_URL}` : `${address}/api/v1/users/me`
const run = (d: number) => new Promise<string>((resolve) => { const c = spawn('node_modules/.bin/autocannon', ['-c', '50', '-d', String(d), '-H', `authorization=Bearer ${token}`, url]); let out = ''; c.stdout.on('data', (x) => out += x); c.stderr.on('data', (x) => out += x); c.on('exit', () => resolve(out)) })
await run(2)
const session = new Session(); session.connect()
await session.post('Profiler.enable'); await session.post('Profiler.start')
const out = await run(6)
const { profile } = await session.post('Profiler.stop')
fs.mkdirSync('/tmp/prof', { recursive: true }); fs.rmSync('/tmp/prof', { recursive: true }); fs.mkdirSync('/tmp/prof')
fs.writeFileSync('/tmp/prof/p.cpuprofile', JSON.stringify(profile))
console.log(out.split('\n').filter((l) => /Req\/Sec|requests in/.test(l)).join('\n'))
process.exit(0)
