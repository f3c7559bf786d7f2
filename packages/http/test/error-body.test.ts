import t from 'tap'
import type { FastifyError, FastifyRequest } from 'fastify'
import { toErrorBody } from '@svc/http'

const request = { log: { error: () => undefined } } as unknown as FastifyRequest
const postgresError = (fields: Record<string, string>) => Object.assign(new Error(fields.message), fields) as unknown as FastifyError

t.test('no PostgreSQL message reaches a client', async (t) => {
  const check = toErrorBody(
    postgresError({
      code: '23514',
      constraint: 'alerts_priority_check',
      message: 'new row for relation "alerts" violates check constraint "alerts_priority_check"',
    }),
    request,
  )
  t.same(check, { statusCode: 409, error: 'Conflict', message: 'the change breaks a rule of the stored data', code: 'CONFLICT' })
  const ours = toErrorBody(postgresError({ code: '23514', message: 'an organization must keep at least one owner' }), request)
  t.equal(ours.message, 'an organization must keep at least one owner', 'our own trigger speaks our words')
  for (const code of ['23505', '23503', '22P02', '22P05']) {
    const mapped = toErrorBody(postgresError({ code, message: `relation "core.secret_table" says ${code}` }), request)
    t.notMatch(mapped.message, /relation|secret_table/, code)
  }
})
