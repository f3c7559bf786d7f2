import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import escapeHtml from 'escape-html'
import { Type } from 'typebox'
import type { Executor } from '@svc/db'
import { NotFoundError } from '@svc/http'
import { latestOutboxRows, type OutboxStatus } from '@svc/notifier'

export const DEV_OUTBOX_PATH = '/dev/outbox'

export const outboxStatuses = ['pending', 'sent', 'delivered', 'held', 'failed', 'captured'] as const satisfies readonly OutboxStatus[]

const Query = Type.Object({
  status: Type.Optional(Type.Enum(outboxStatuses)),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 50 }),
})
const OutboxMessage = Type.Object({
  id: Type.String(),
  createdAt: Type.String(),
  status: Type.String(),
  channel: Type.String(),
  kind: Type.String(),
  recipient: Type.String(),
  subject: Type.Union([Type.String(), Type.Null()]),
  text: Type.String(),
  note: Type.Union([Type.String(), Type.Null()]),
})

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1'])

/**
 * Whether the request names this machine in its Host header. A page on another site can make the
 * browser send it here through a name that resolves to 127.0.0.1 (DNS rebinding): the peer is then
 * loopback, but the Host header is the attacker's name.
 */
function namesThisMachine(host: string | undefined): boolean {
  // A Host header is a name and a port: anything that would read as a user or a path is refused.
  if (!host || /[@/\\]/.test(host) || !URL.canParse(`http://${host}`)) return false
  const { hostname } = new URL(`http://${host}`)
  return hostname === 'localhost' || hostname.endsWith('.localhost') || hostname === '127.0.0.1' || hostname === '[::1]'
}

type Row = Awaited<ReturnType<typeof latestOutboxRows>>[number]
/** An outbox row as the development outbox answers it (and `pnpm outbox` prints it). */
export const outboxMessageOf = (row: Row) => ({
  id: row.id,
  createdAt: row.createdAt.toISOString(),
  status: row.status,
  channel: row.channel,
  kind: row.kind,
  recipient: row.recipient,
  subject: row.subject,
  text: row.bodyText,
  note: row.lastError,
})

function page(rows: Row[]): string {
  const e = (text: string | null) => escapeHtml(text ?? '')
  const items = rows
    .map(
      (row) =>
        `<article id="${e(row.id)}"><h2>${e(row.channel)} to ${e(row.recipient)}${row.subject ? `: ${e(row.subject)}` : ''}</h2><p>${e(row.createdAt.toISOString())} · ${e(row.status)} · ${e(row.kind)}${row.lastError ? ` · ${e(row.lastError)}` : ''}</p><pre>${e(row.bodyText)}</pre></article>`,
    )
    .join('<hr>')
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Outbox</title></head><body><h1>Outbox: the newest ${rows.length} messages</h1>${items || '<p>Nothing was sent yet.</p>'}</body></html>`
}

/**
 * The development outbox (`pnpm start` only): every message the system wrote, newest first, as a
 * page (`/dev/outbox`) and as JSON (`/dev/outbox.json`, what `pnpm outbox` reads). Messages hold
 * credentials (codes, acknowledgement and invitation links), so it answers only this machine, by
 * its peer address and by the name the request was sent to, and only `pnpm start` registers it: a service on its own never serves it.
 */
export const devOutboxRoutes: FastifyPluginAsyncTypebox<{ db: Executor }> = async (app, { db }) => {
  app.addHook('onRequest', async (request) => {
    if (!LOOPBACK.has(request.socket.remoteAddress ?? '') || !namesThisMachine(request.headers.host)) throw new NotFoundError('page')
  })
  app.get(
    `${DEV_OUTBOX_PATH}.json`,
    {
      schema: { hide: true, querystring: Query, response: { 200: Type.Object({ data: Type.Array(OutboxMessage) }) } },
      config: { public: true },
    },
    async (request) => ({ data: (await latestOutboxRows(db, request.query)).map(outboxMessageOf) }),
  )
  app.get(
    DEV_OUTBOX_PATH,
    { schema: { hide: true, querystring: Query, produces: ['text/html'], response: { 200: Type.String() } }, config: { public: true } },
    async (request, reply) =>
      reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(page(await latestOutboxRows(db, request.query))),
  )
}
