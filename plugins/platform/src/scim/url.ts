import { SCIM_BASE_PATH } from '@svc/auth'

const SCIM_PATH = new RegExp(`^${SCIM_BASE_PATH.replaceAll('/', '\\/')}(?<path>/[^?]*)?(?<query>\\?.*)?$`, 'i')
const endpoints = new Map(['Users', 'Groups', 'Schemas', 'ResourceTypes', 'ServiceProviderConfig'].map((name) => [name.toLowerCase(), name]))

/**
 * Identity providers vary the letter case of SCIM endpoints (`/users`) and add trailing slashes
 * (`/Users/?filter=`); both reach the same route. Other URLs are left untouched, and the test
 * that fails fastest (the anchored prefix) runs first, so other requests pay next to nothing.
 */
export function canonicalScimUrl(url: string): string {
  const match = SCIM_PATH.exec(url)
  if (!match?.groups) return url
  const { path = '', query = '' } = match.groups
  const [endpoint = '', ...rest] = path.replace(/\/+$/, '').split('/').slice(1)
  const canonical = endpoints.get(endpoint.toLowerCase())
  if (!canonical) return url
  return [SCIM_BASE_PATH, canonical, ...rest].join('/') + query
}
