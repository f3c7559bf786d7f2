import { randomBytes } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import ical from 'ical-generator'
import { Type } from 'typebox'
import { NotFoundError, Timestamp } from '@svc/http'
import { hashSecret } from '@svc/auth'
import { deleteFeed, feedOwner, findFeed, putFeedToken } from './calendar-feeds.js'
import { userShifts } from './on-call.js'

/** The feed covers a week back (shifts just done stay visible) and 60 days ahead. */
const FEED_DAYS_BACK = 7
const FEED_DAYS_AHEAD = 60
const DAY = 86_400_000
const FEED_PATH = '/api/v1/users/me/on-call.ics'

const tokenHash = hashSecret

const Feed = Type.Object(
  { active: Type.Boolean(), createdAt: Type.Union([Timestamp, Type.Null()]), rotatedAt: Type.Union([Timestamp, Type.Null()]) },
  { title: 'OnCallFeed' },
)
const FeedWithToken = Type.Object(
  {
    url: Type.String({ description: 'Subscribe to this in a calendar app; shown once' }),
    token: Type.String({ description: 'Shown once: only its SHA-256 is kept' }),
    createdAt: Timestamp,
    rotatedAt: Timestamp,
  },
  { title: 'OnCallFeedWithToken' },
)

/**
 * Each user's on-call shifts as an iCalendar feed. Calendar apps cannot sign in, so the
 * feed URL carries a per-user token: created or rotated (the old URL stops working) and revoked
 * by the signed-in user; the feed itself is public and answers the token's owner's shifts.
 */
export const calendarFeedRoutes: FastifyPluginAsyncTypebox<{ productUrl: string }> = async (app, { productUrl }) => {
  const db = app.database.db

  app.get(
    '/api/v1/users/me/on-call-feed',
    { schema: { tags: ['schedules'], summary: 'Whether the signed-in user has an on-call calendar feed', response: { 200: Feed } } },
    async (request) => {
      const feed = await findFeed(db, request.user.userId)
      return {
        active: feed !== undefined,
        createdAt: feed?.createdAt.toISOString() ?? null,
        rotatedAt: feed?.rotatedAt.toISOString() ?? null,
      }
    },
  )

  app.post(
    '/api/v1/users/me/on-call-feed',
    {
      schema: {
        tags: ['schedules'],
        summary: 'Create or rotate the signed-in user’s on-call calendar feed; the URL before stops working',
        response: { 201: FeedWithToken },
      },
    },
    async (request, reply) => {
      const token = `ics_${randomBytes(32).toString('base64url')}`
      const feed = await putFeedToken(db, request.user.userId, tokenHash(token))
      return reply.code(201).send({
        url: `${productUrl}${FEED_PATH}?token=${token}`,
        token,
        createdAt: feed.createdAt.toISOString(),
        rotatedAt: feed.rotatedAt.toISOString(),
      })
    },
  )

  app.delete(
    '/api/v1/users/me/on-call-feed',
    { schema: { tags: ['schedules'], summary: 'Revoke the signed-in user’s on-call calendar feed', response: { 204: Type.Null() } } },
    async (request, reply) => {
      if (!(await deleteFeed(db, request.user.userId))) throw new NotFoundError('on-call feed')
      return reply.code(204).send(null)
    },
  )

  app.get(
    FEED_PATH,
    {
      config: { public: true },
      schema: {
        tags: ['schedules'],
        summary: `The token owner's on-call shifts, ${FEED_DAYS_BACK} days back to ${FEED_DAYS_AHEAD} ahead, as iCalendar (public, by token)`,
        querystring: Type.Object({ token: Type.String({ minLength: 10, maxLength: 100 }) }),
        produces: ['text/calendar'],
        response: { 200: Type.String({ description: 'text/calendar' }) },
      },
    },
    async (request, reply) => {
      const userId = await feedOwner(db, tokenHash(request.query.token))
      if (!userId) throw new NotFoundError('on-call feed')
      const now = Date.now()
      const shifts = await userShifts(db, userId, new Date(now - FEED_DAYS_BACK * DAY), new Date(now + FEED_DAYS_AHEAD * DAY))
      const calendar = ical({ name: 'On call', prodId: { company: 'incident-platform', product: 'on-call' }, ttl: 15 * 60 })
      for (const shift of shifts) {
        calendar.createEvent({
          // Stable across fetches, so calendar apps update a shift rather than duplicate it.
          id: `${shift.scheduleId}-${shift.start.toISOString()}@incident-platform`,
          start: shift.start,
          end: shift.end,
          summary: `On call: ${shift.scheduleName}`,
          description: `${shift.organizationName}, schedule ${shift.scheduleName}`,
        })
      }
      return reply.type('text/calendar; charset=utf-8').header('cache-control', 'private, max-age=300').send(calendar.toString())
    },
  )
}
