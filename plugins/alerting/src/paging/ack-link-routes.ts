import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ConflictError, GoneError, NotFoundError, publicCors } from '@svc/http'
import { findAlert, moveAlertByPerson } from '../alerts/index.js'
import { findAckLink, useAckLink } from './queries.js'
import { ackTimeoutFromNow, activeMembersAmong } from '../oncall/index.js'
import { ackTokenHash } from './page.js'

const TokenParams = Type.Object({ token: Type.String({ minLength: 20, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' }) })
const Acknowledged = Type.Object(
  {
    alertId: Type.String({ format: 'uuid' }),
    status: Type.Enum(['acknowledged'] as const),
    acknowledgedBy: Type.String({ format: 'uuid' }),
  },
  { title: 'AcknowledgedByLink' },
)

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character] as string)

// Read on a phone at night: large type and a large button, light or dark as the phone is.
const STYLE =
  ':root{color-scheme:light dark;font-family:system-ui,sans-serif;line-height:1.5}body{max-width:34rem;margin:0 auto;padding:1.5rem}' +
  'h1{font-size:1.5rem}dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{font-weight:600}dd{margin:0}' +
  'button{font:inherit;font-size:1.25rem;width:100%;padding:.9rem;border:0;border-radius:.5rem;background:#c62828;color:#fff}'
// The API's policy refuses every inline style; this page's one stylesheet is allowed by its hash.
const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`

function htmlPage(reply: FastifyReply, status: number, title: string, body: string) {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('content-security-policy', `default-src 'none'; style-src ${STYLE_HASH}; form-action 'self'; frame-ancestors 'none'`)
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title><style>${STYLE}</style></head><body><h1>${title}</h1>${body}</body></html>`,
    )
}

const utc = (at: Date) => `<time datetime="${at.toISOString()}">${at.toISOString().replace('T', ' ').slice(0, 16)} UTC</time>`

/** Who acknowledged the alert and when, said plainly (a teammate may have been first). */
function settledLine(alert: { status: string; acknowledgedAt: Date | null; acknowledgedByEmail: string | null; resolvedAt: Date | null }) {
  if (alert.status === 'resolved')
    return `<p>The alert was resolved${alert.resolvedAt ? ` at ${utc(alert.resolvedAt)}` : ''}: nothing to do.</p>`
  const who = alert.acknowledgedByEmail ? escapeHtml(alert.acknowledgedByEmail) : 'its source'
  return `<p>Acknowledged by ${who}${alert.acknowledgedAt ? ` at ${utc(alert.acknowledgedAt)}` : ''}: its escalation has stopped.</p>`
}

/** The page's own form posts form-encoded: a person at a browser, who should get a page, not JSON. */
const fromThePage = (request: FastifyRequest) => (request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')

/**
 * The acknowledgement link every page carries (`/api/v1/alerts/ack/:token`, public: the token is
 * the credential). GET only shows what the link does, with a button: mail scanners and link
 * previews fetch every link in a message, and a GET that acknowledged would be spent by them.
 * POST acknowledges, once, before the link expires, as the person it was sent to.
 */
export const ackLinkRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.database.db
  // The page's form posts an empty form body; nothing in it is read.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 1024 }, (_request, _body, done) =>
    done(null, undefined),
  )

  app.get(
    '/api/v1/alerts/ack/:token',
    {
      config: { public: true, cors: publicCors },
      schema: {
        tags: ['alerts'],
        summary: 'The page an acknowledgement link opens: the alert and a button that acknowledges it (public)',
        params: TokenParams,
        produces: ['text/html'],
        response: { 200: Type.String({ description: 'An HTML page' }) },
      },
    },
    async (request, reply) => {
      const link = await findAckLink(db, ackTokenHash(request.params.token))
      if (!link) throw new NotFoundError('acknowledgement link')
      const usable = link.usedAt === null && link.expiresAt > new Date()
      const title = escapeHtml(`[${link.priority}] ${link.title}`)
      // What the person paged needs to decide, readable in any browser without signing in.
      const details = `<dl><dt>Status</dt><dd>${escapeHtml(link.status)}</dd><dt>Service</dt><dd>${escapeHtml(link.service ?? 'not given')}</dd><dt>Source</dt><dd>${escapeHtml(link.source)}</dd><dt>Opened</dt><dd><time datetime="${link.createdAt.toISOString()}">${link.createdAt.toISOString().replace('T', ' ').slice(0, 16)} UTC</time></dd></dl>${link.description ? `<p>${escapeHtml(link.description)}</p>` : ''}`
      const action =
        link.status !== 'open'
          ? settledLine(link)
          : !usable
            ? `<p>This link was used or has expired.</p>`
            : `<form method="post"><button type="submit">Acknowledge</button></form>`
      return htmlPage(reply, 200, title, details + action)
    },
  )

  app.post(
    '/api/v1/alerts/ack/:token',
    {
      config: { public: true, cors: publicCors },
      schema: {
        tags: ['alerts'],
        summary: 'Acknowledge the alert a link was sent for (public; single use, expires)',
        description:
          '404: no such link, or its person is no longer an active member; 410: used or expired; 409: the alert is already acknowledged or resolved. The link page’s own form (a form-encoded post) gets an HTML page with the same status instead of JSON.',
        params: TokenParams,
        response: { 200: Acknowledged },
      },
    },
    async (request, reply) => {
      const tokenHash = ackTokenHash(request.params.token)
      const acknowledge = () =>
        db.transaction().execute(async (trx) => {
          const spent = await useAckLink(trx, tokenHash)
          if (!spent) {
            if (await findAckLink(trx, tokenHash)) throw new GoneError('this acknowledgement link was used or has expired')
            throw new NotFoundError('acknowledgement link')
          }
          const { organizationId, alertId, userId } = spent
          if (!(await activeMembersAmong(trx, organizationId, [userId])).has(userId)) throw new NotFoundError('acknowledgement link')
          const moved = await moveAlertByPerson(
            trx,
            { organizationId, alertId },
            { to: 'acknowledged', ackTimeout: ackTimeoutFromNow },
            userId,
            { via: 'link' },
          )
          if (!moved) {
            const alert = await findAlert(trx, organizationId, alertId)
            throw new ConflictError(`the alert is ${alert?.status ?? 'gone'}: it cannot be acknowledged`)
          }
          return { alertId, status: 'acknowledged' as const, acknowledgedBy: userId }
        })
      if (!fromThePage(request)) return acknowledge()
      try {
        await acknowledge()
        return htmlPage(reply, 200, 'Acknowledged', '<p>The alert is acknowledged: its escalation has stopped.</p>')
      } catch (error) {
        const status = (error as { statusCode?: number }).statusCode
        if (status === undefined || status >= 500) throw error
        // A teammate (or the source) was first: say who, not "not acknowledged".
        const link = status === 409 ? await findAckLink(db, tokenHash) : undefined
        if (link && link.status !== 'open')
          return htmlPage(reply, 409, link.status === 'resolved' ? 'Already resolved' : 'Already acknowledged', settledLine(link))
        return htmlPage(reply, status, 'Not acknowledged', `<p>${escapeHtml((error as Error).message)}</p>`)
      }
    },
  )
}
