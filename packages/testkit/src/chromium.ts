import { access } from 'node:fs/promises'

/** Debian's Chromium, which .ci/run installs; CHROMIUM_PATH points elsewhere. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** What of a tap test saying why a file runs nothing takes. */
export interface ChromiumTest {
  fail(message: string): void
  plan(count: number, why: string): void
}

/**
 * Whether Chromium is here for a browser test. Without it, CI fails (it installs Chromium and
 * never skips a browser test) and a local run says what it skips.
 */
export async function chromiumPresent(t: ChromiumTest, what: string): Promise<boolean> {
  const present = await access(CHROMIUM).then(
    () => true,
    () => false,
  )
  if (!present && process.env.CI === 'true')
    t.fail(`${CHROMIUM} is not installed: .ci/run installs it (apt-get install -y chromium), and CI does not skip the browser check`)
  else if (!present) t.plan(0, `${CHROMIUM} is not installed (apt-get install -y chromium): ${what} is skipped`)
  return present
}
