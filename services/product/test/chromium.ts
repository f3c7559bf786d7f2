import { access } from 'node:fs/promises'
import t from 'tap'

/** Debian's Chromium, which .ci/run installs; CHROMIUM_PATH points elsewhere. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/**
 * Whether Chromium is here for a browser check. Without it, CI fails (it installs Chromium and
 * never skips a browser check) and a local run says what it skips.
 */
export async function chromiumPresent(what: string): Promise<boolean> {
  const present = await access(CHROMIUM).then(
    () => true,
    () => false,
  )
  if (!present && process.env.CI === 'true')
    t.fail(`${CHROMIUM} is not installed: .ci/run installs it (apt-get install -y chromium), and CI does not skip the browser check`)
  else if (!present) t.plan(0, `${CHROMIUM} is not installed (apt-get install -y chromium): ${what} is skipped`)
  return present
}
