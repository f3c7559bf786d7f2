export { createDevIdentityProvider, subjectForEmail, type DevIdentityProvider, type TokenSubject } from './identity-provider.js'
export { buildDevIdentityProviderServer } from './server.js'
export { generateSigningKey, loadOrCreateSigningKey, signingKeyFrom, type SigningKey } from './signing-key.js'
