import createClient, { type Client, type ClientOptions } from 'openapi-fetch'
import type { paths as PlatformPaths } from './generated/platform.js'
import type { paths as ProductPaths } from './generated/product.js'

export type { PlatformPaths, ProductPaths }
export type PlatformClient = Client<PlatformPaths>
export type ProductClient = Client<ProductPaths>

export interface ConnectOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** An ID token of the identity provider, sent as `Authorization: Bearer`. */
  token?: string
}

function optionsOf(baseUrl: string, { token, headers, ...rest }: ConnectOptions): ClientOptions {
  return { baseUrl, ...rest, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(headers as Record<string, string>) } }
}

/**
 * The platform API (identity, organizations, members, billing, SCIM, reports), typed from its
 * OpenAPI document: `client.GET('/api/v1/organizations/{orgId}/members', { params: { path: { orgId } } })`.
 */
export function createPlatformClient(baseUrl: string, options: ConnectOptions = {}): PlatformClient {
  return createClient<PlatformPaths>(optionsOf(baseUrl, options))
}

/** The product API (status pages, alerting, synthetics, insights), typed from its OpenAPI document. */
export function createProductClient(baseUrl: string, options: ConnectOptions = {}): ProductClient {
  return createClient<ProductPaths>(optionsOf(baseUrl, options))
}
