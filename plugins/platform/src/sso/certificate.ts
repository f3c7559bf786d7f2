import { X509Certificate } from 'node:crypto'
import { invalidField } from '@svc/http'

export interface SigningCertificate {
  /** Normalized PEM, as stored. */
  pem: string
  subject: string
  issuer: string
  notBefore: Date
  notAfter: Date
  fingerprintSha256: string
}

/** PEM, or the bare base64 of `<ds:X509Certificate>`, as a PEM block. */
function asPem(text: string): string {
  const trimmed = text.trim()
  if (trimmed.startsWith('-----BEGIN CERTIFICATE-----')) return trimmed
  const body = trimmed.replace(/\s+/g, '')
  return `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)?.join('\n') ?? ''}\n-----END CERTIFICATE-----`
}

/** What a stored certificate says of itself, without judging it. */
export function describeCertificate(certificate: X509Certificate): SigningCertificate {
  return {
    pem: certificate.toString().trim(),
    subject: certificate.subject.replace(/\n/g, ', '),
    issuer: certificate.issuer.replace(/\n/g, ', '),
    notBefore: new Date(certificate.validFrom),
    notAfter: new Date(certificate.validTo),
    fingerprintSha256: certificate.fingerprint256,
  }
}

/**
 * The identity provider's signing certificate, checked: it must parse as X.509 and be valid
 * now. An expired certificate would make every sign-in fail, so it is refused up front.
 */
export function readSigningCertificate(text: string, field = 'certificate', now = new Date()): SigningCertificate {
  let certificate: X509Certificate
  try {
    certificate = new X509Certificate(asPem(text))
  } catch {
    throw invalidField(field, 'is not a valid X.509 certificate (PEM, or the base64 of a DER certificate)')
  }
  const described = describeCertificate(certificate)
  if (described.notAfter.getTime() <= now.getTime()) throw invalidField(field, `expired on ${described.notAfter.toISOString()}`)
  if (described.notBefore.getTime() > now.getTime()) throw invalidField(field, `is not valid before ${described.notBefore.toISOString()}`)
  return described
}
