import { DOMParser, type Element } from '@xmldom/xmldom'
import { invalidField } from '@svc/http'

const METADATA_NS = 'urn:oasis:names:tc:SAML:2.0:metadata'
const SIGNATURE_NS = 'http://www.w3.org/2000/09/xmldsig#'
const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect'
const POST_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'

export interface IdentityProviderSettings {
  entityId: string
  ssoUrl: string
  /** Base64 of the signing certificate, as the metadata carries it. */
  certificate: string
}

function children(parent: Element, namespace: string, name: string): Element[] {
  return Array.from(parent.getElementsByTagNameNS(namespace, name))
}

/**
 * Reads an identity provider's SAML 2.0 metadata (what Okta, Entra ID, OneLogin, JumpCloud and
 * Google export): the entity id, the single sign-on URL (HTTP-Redirect preferred, else
 * HTTP-POST) and the signing certificate. What is not well-formed metadata is a 400.
 */
export function readIdentityProviderMetadata(xml: string): IdentityProviderSettings {
  const problems: string[] = []
  let root: Element | null = null
  try {
    const document = new DOMParser({
      onError: (level, message) => {
        if (level !== 'warning') problems.push(message)
      },
    }).parseFromString(xml, 'text/xml')
    root = document.documentElement
  } catch (error) {
    // xmldom throws on fatal errors after reporting them.
    problems.push(error instanceof Error ? error.message : String(error))
  }
  if (problems.length > 0 || !root) throw invalidField('metadataXml', `is not well-formed XML: ${problems[0] ?? 'no root element'}`)

  const entity =
    root.localName === 'EntityDescriptor' && root.namespaceURI === METADATA_NS ? root : children(root, METADATA_NS, 'EntityDescriptor')[0]
  if (!entity) throw invalidField('metadataXml', 'has no SAML 2.0 EntityDescriptor')
  const entityId = entity.getAttribute('entityID')
  if (!entityId) throw invalidField('metadataXml', 'has no entityID')
  const descriptor = children(entity, METADATA_NS, 'IDPSSODescriptor')[0]
  if (!descriptor) throw invalidField('metadataXml', 'describes no identity provider (IDPSSODescriptor)')

  const services = children(descriptor, METADATA_NS, 'SingleSignOnService')
  const service =
    services.find((candidate) => candidate.getAttribute('Binding') === REDIRECT_BINDING) ??
    services.find((candidate) => candidate.getAttribute('Binding') === POST_BINDING)
  const ssoUrl = service?.getAttribute('Location')
  if (!ssoUrl) throw invalidField('metadataXml', 'has no SingleSignOnService with the HTTP-Redirect or HTTP-POST binding')

  const keys = children(descriptor, METADATA_NS, 'KeyDescriptor')
  const signing = keys.find((key) => key.getAttribute('use') === 'signing') ?? keys.find((key) => !key.getAttribute('use'))
  const certificate = signing ? children(signing, SIGNATURE_NS, 'X509Certificate')[0]?.textContent?.trim() : undefined
  if (!certificate) throw invalidField('metadataXml', 'has no signing certificate (KeyDescriptor with ds:X509Certificate)')

  return { entityId, ssoUrl, certificate }
}
