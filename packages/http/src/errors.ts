import createError from '@fastify/error'

// Every error the API answers with, declared once: a stable upper-case code and a status.
// The message is a format string; `new NotFoundError('organization')` fills the `%s`.
export const BadRequestError = createError('BAD_REQUEST', '%s', 400)
export const UnauthorizedError = createError('UNAUTHORIZED', '%s', 401)
export const ForbiddenError = createError('FORBIDDEN', '%s', 403)
export const NotFoundError = createError('NOT_FOUND', '%s not found', 404)
export const ConflictError = createError('CONFLICT', '%s', 409)
export const GoneError = createError('GONE', '%s', 410)
export const TooManyRequestsError = createError('RATE_LIMITED', '%s', 429)
export const BudgetExceededError = createError('BUDGET_EXCEEDED', '%s', 402)
export const PlanRequiredError = createError('PLAN_REQUIRED', '%s', 402)
export const UpstreamError = createError('UPSTREAM_FAILED', '%s', 502)
export const BillingDisabledError = createError('BILLING_DISABLED', '%s', 503)
export const ReportsDisabledError = createError('REPORTS_DISABLED', '%s', 503)

/** A 400 VALIDATION_FAILED for a rule the schema cannot express, shaped like a schema failure. */
export function invalidField(field: string, message: string, context: 'body' | 'querystring' | 'params' = 'body') {
  const error = new BadRequestError(`${context}/${field} ${message}`)
  return Object.assign(error, {
    validation: [{ keyword: 'semantic', instancePath: `/${field}`, schemaPath: '', params: {}, message }],
    validationContext: context,
  })
}
