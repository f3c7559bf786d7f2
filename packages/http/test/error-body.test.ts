import Fastify, { type FastifyError, type FastifyRequest } from 'fastify'
import t from 'tap'
import { Type } from 'typebox'
import { registerErrorHandling, toErrorBody } from '@svc/http'

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

t.test('a value outside a list is answered with the values allowed; a body of the wrong type with the types taken', async (t) => {
  const app = Fastify()
  registerErrorHandling(app)
  app.post(
    '/things',
    {
      schema: {
        body: Type.Object({
          kind: Type.Enum(['email', 'sms']),
          size: Type.Optional(Type.Union([Type.Literal('small'), Type.Literal('large')])),
          note: Type.Optional(Type.Union([Type.String(), Type.Null()])),
        }),
      },
    },
    async () => ({}),
  )
  t.teardown(() => app.close())
  const post = (payload: string | object, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url: '/things', payload, headers })

  const kind = await post({ kind: 'fax' })
  t.equal(kind.statusCode, 400)
  t.match(kind.json(), {
    code: 'VALIDATION_FAILED',
    message: 'body/kind must be one of "email", "sms"',
    details: [{ field: 'kind', message: 'must be one of "email", "sms"' }],
  })
  const size = await post({ kind: 'sms', size: 'huge' })
  t.same(size.json().details, [{ field: 'size', message: 'must be one of "small", "large"' }], 'a union of literals reads as one list')
  t.equal(size.json().message, 'body/size must be one of "small", "large"')
  const other = await post({ kind: 'sms', note: { text: 'x' } })
  t.match(other.json().message, /must match a schema in anyOf/, 'other unions keep Ajv’s words')

  const xml = await post('<kind>sms</kind>', { 'content-type': 'application/xml; charset=utf-8' })
  t.equal(xml.statusCode, 415)
  t.match(xml.json(), { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Content-Type application/xml is not accepted: send application/json' })
  const none = await post('{"kind":"sms"}', { 'content-type': '' })
  t.equal(none.json().message, 'the body has no Content-Type header: send application/json')
})
