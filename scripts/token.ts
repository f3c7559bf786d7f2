// `pnpm token <email> [--group NAME]... [--refresh]`: prints an ID token of the embedded
// development identity provider, for curl against the system `pnpm start` runs. It signs as the
// running system's provider (its DEV_IDP_PORT and its DATA_DIR's key), found by itself.
import { parseArgs } from 'node:util'
import { readEnvironment } from '@svc/config'
import { environmentOfRunningSystem, runningDevSystem } from './dev-system.js'
import { openDevIdentityProvider } from './embedded-identity.js'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    group: { type: 'string', multiple: true, default: [] },
    refresh: { type: 'boolean', default: false },
  },
})
const email = positionals[0]
if (!email || !email.includes('@')) {
  console.error('usage: pnpm token <email> [--group PlatformAdmins] [--refresh]')
  process.exit(2)
}

if (!runningDevSystem()) console.error('no running `pnpm start` was found: the token is for the settings of this shell')
const idp = await openDevIdentityProvider(environmentOfRunningSystem(readEnvironment()))
const subject = { email, groups: values.group }
if (values.refresh) {
  console.log(JSON.stringify({ idToken: idp.mintIdToken(subject), refreshToken: idp.mintRefreshToken(subject) }, null, 2))
} else {
  console.log(idp.mintIdToken(subject))
}
