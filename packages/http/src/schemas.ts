import { Type, type Static, type TInteger, type TNumber, type TSchema } from 'typebox'

export const ErrorResponse = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String({ description: 'HTTP reason phrase' }),
    message: Type.String(),
    code: Type.String({ description: 'Stable upper-case error code, e.g. UNAUTHORIZED, VALIDATION_FAILED' }),
    details: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
        description: 'The failing fields of a VALIDATION_FAILED error',
      }),
    ),
  },
  { $id: 'ErrorResponse', title: 'Error' },
)
export type ErrorBody = Static<typeof ErrorResponse>

export const PaginationQuery = Type.Object({
  page: Type.Integer({ minimum: 1, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
})
export type Pagination = Static<typeof PaginationQuery>

/** The list envelope every list endpoint answers with. */
export function ListResponse<T extends TSchema>(item: T) {
  return Type.Object({
    data: Type.Array(item),
    meta: Type.Object({ page: Type.Integer(), limit: Type.Integer(), total: Type.Integer() }),
  })
}

export const Timestamp = Type.String({ format: 'date-time' })

/**
 * A number or null in a request body. Written as `type: [..., 'null']` rather than a union:
 * the body coercion of the HTTP conventions would turn null into 0 when an integer branch is
 * tried first, and 0 into null when a null branch is; ajv coerces a type list only when the
 * value matches none of its types.
 */
export function NullableNumber<T extends TNumber | TInteger>(schema: T) {
  return Type.Unsafe<number | null>({ ...schema, type: [schema.type, 'null'] })
}

/** A string or null in a request body, for the same reason as `NullableNumber`: null stays null, never "". */
export function NullableString(options: { maxLength?: number; minLength?: number; description?: string } = {}) {
  return Type.Unsafe<string | null>({ ...options, type: ['string', 'null'] })
}
