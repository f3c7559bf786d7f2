import { SecretsKeyMissing, type SecretSealer } from '@svc/config'
import { ConflictError } from '@svc/http'

// A tracker's credential and webhook secret, sealed with the secrets key under names of their own
// (the tracker's id in the additional data), so neither opens in another row.

const names = { credential: (id: string) => `tracker:${id}:credential`, webhookSecret: (id: string) => `tracker:${id}:webhook-secret` }

/** Seals a value of the tracker; 409 when no secrets key is configured, as for check secrets. */
export function sealTrackerValue(
  sealer: SecretSealer,
  organizationId: string,
  trackerId: string,
  which: keyof typeof names,
  value: string,
) {
  try {
    return sealer.seal(organizationId, names[which](trackerId), value)
  } catch (error) {
    if (error instanceof SecretsKeyMissing) throw new ConflictError(error.message)
    throw error
  }
}

export function openTrackerValue(
  sealer: SecretSealer,
  organizationId: string,
  trackerId: string,
  which: keyof typeof names,
  sealed: Buffer,
) {
  return sealer.open(organizationId, names[which](trackerId), sealed)
}
