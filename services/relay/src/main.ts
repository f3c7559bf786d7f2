import pino from 'pino'
import { browserRuntime, DEFAULT_CHROMIUM_PATH } from '@svc/check-runner'
import { createRelay } from './relay.js'

// `pnpm relay` (or `docker run IMAGE relay`): RELAY_URL and RELAY_KEY are required.
const log = pino({ level: process.env.LOG_LEVEL ?? 'info', base: { component: 'relay' } })
const url = process.env.RELAY_URL
const key = process.env.RELAY_KEY
if (!url || !/^https?:\/\//.test(url) || !key) {
  log.fatal('RELAY_URL (the product API, http(s)://…) and RELAY_KEY (shown when the relay was created) are required')
  process.exit(64)
}
const number = (name: string, fallback: number, min: number, max: number) => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isFinite(value) || value < min || value > max) {
    log.fatal(`${name} must be a number from ${min} to ${max}`)
    process.exit(64)
  }
  return value
}
const chromium = process.env.RELAY_CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH
const browser = browserRuntime(chromium, number('RELAY_BROWSER_CONCURRENCY', 2, 1, 64))
if (!browser) log.info({ chromium }, 'no Chromium here: this relay runs no browser check (RELAY_CHROMIUM_PATH)')
const relay = createRelay({
  url,
  key,
  concurrency: number('RELAY_CONCURRENCY', 20, 1, 500),
  pollSeconds: number('RELAY_POLL_SECONDS', 2, 0.1, 60),
  allowPrivateTargets: process.env.ALLOW_PRIVATE_TARGETS === 'true',
  ...(browser ? { browser } : {}),
  log,
  version: process.env.npm_package_version,
})
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => relay.stop())
try {
  await relay.run()
} catch (error) {
  log.fatal({ err: error }, 'relay could not start')
  process.exit(1)
}
