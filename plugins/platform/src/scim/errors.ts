export const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error'

/** The `scimType` values of RFC 7644 §3.12 this server answers with. */
export type ScimType =
  'invalidFilter' | 'tooMany' | 'uniqueness' | 'mutability' | 'invalidSyntax' | 'invalidPath' | 'noTarget' | 'invalidValue' | 'invalidVers'

/** An error answered in the SCIM error schema (RFC 7644 §3.12) instead of the API's own shape. */
export class ScimError extends Error {
  constructor(
    readonly statusCode: number,
    readonly detail: string,
    readonly scimType?: ScimType,
  ) {
    super(detail)
    this.name = 'ScimError'
  }
}

export interface ScimErrorBody {
  schemas: string[]
  status: string
  detail: string
  scimType?: ScimType
}

export function scimErrorBody(error: ScimError): ScimErrorBody {
  return {
    schemas: [SCIM_ERROR_SCHEMA],
    // A string, as RFC 7644 §3.12 writes it.
    status: String(error.statusCode),
    detail: error.detail,
    ...(error.scimType ? { scimType: error.scimType } : {}),
  }
}

export const resourceNotFound = (resourceType: 'User' | 'Group', id: string) => new ScimError(404, `${resourceType} ${id} not found`)
