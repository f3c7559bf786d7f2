import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

// AES-256-GCM with the key from SYNTHETICS_SECRETS_KEY: a random 12-byte nonce per value, the
// 16-byte tag after it, then the ciphertext. The secret's organization and name are the
// additional data, so a sealed value copied to another row does not open there. Check secrets and
// ticket trackers' credentials are sealed with it.

export class SecretsKeyMissing extends Error {
  override name = 'SecretsKeyMissing'
}

export interface SecretSealer {
  seal(organizationId: string, name: string, value: string): Buffer
  open(organizationId: string, name: string, sealed: Buffer): string
}

export function secretSealer(base64Key: string | undefined): SecretSealer {
  const key = base64Key ? Buffer.from(base64Key, 'base64') : undefined
  const usable = () => {
    if (!key || key.length !== 32)
      throw new SecretsKeyMissing('SYNTHETICS_SECRETS_KEY (32 bytes, base64) is not set: secrets cannot be stored or used')
    return key
  }
  const context = (organizationId: string, name: string) => Buffer.from(`${organizationId}/${name}`)
  return {
    seal(organizationId, name, value) {
      const nonce = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', usable(), nonce)
      cipher.setAAD(context(organizationId, name))
      const ciphertext = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()])
      return Buffer.concat([nonce, cipher.getAuthTag(), ciphertext])
    },
    open(organizationId, name, sealed) {
      const decipher = createDecipheriv('aes-256-gcm', usable(), sealed.subarray(0, 12))
      decipher.setAAD(context(organizationId, name))
      decipher.setAuthTag(sealed.subarray(12, 28))
      return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8')
    },
  }
}
