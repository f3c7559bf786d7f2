// The embedded development identity provider's settings, shared by `pnpm start` and `pnpm token`.
import path from 'node:path'
import type { Environment } from '@svc/config'
import { createDevIdentityProvider, loadOrCreateSigningKey } from '@svc/dev-idp'

export const DEV_CLIENT_ID = 'dev-client'

export function devIssuer(env: Environment): string {
  return `http://localhost:${env.DEV_IDP_PORT}`
}

export async function openDevIdentityProvider(env: Environment) {
  const key = await loadOrCreateSigningKey(path.resolve(env.DATA_DIR, 'dev-idp'))
  return createDevIdentityProvider({ issuer: devIssuer(env), clientId: DEV_CLIENT_ID, key, groupsClaim: env.AUTH_GROUPS_CLAIM })
}
