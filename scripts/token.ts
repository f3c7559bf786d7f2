// `pnpm token <email> [--group NAME]... [--refresh]`: prints an ID token of the embedded
// development identity provider, for curl against the system `pnpm start` runs.
import { parseArgs } from 'node:util'
import { readEnvironment } from '@svc/config'
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

const idp = await openDevIdentityProvider(readEnvironment())
const subject = { email, groups: values.group }
if (values.refresh) {
  console.log(JSON.stringify({ idToken: idp.mintIdToken(subject), refreshToken: idp.mintRefreshToken(subject) }, null, 2))
} else {
  console.log(idp.mintIdToken(subject))
}
