import { productRoleAtLeast, productRoleOfUser } from '@svc/auth'
import type { Database } from '@svc/db'
import { slackClient, slackErrorOf, type SlackIntegration } from '../../destinations/index.js'
import { cacheSlackEmail, cachedSlackEmail, cachedSlackUserOf, memberByEmail } from './queries.js'

/** How long what Slack said about a user is trusted before asking again. */
const CACHE_SECONDS = 60 * 60

/** A Slack user mapped to a person allowed to act, or why they may not. */
export type SlackActor = { userId: string; email: string } | { refusal: string }

/**
 * Who a Slack user is to us (decision 0020, "Who pressed the button"): the address Slack's
 * users.info gives (scope users:read.email), cached for an hour, must be an active member of the
 * integration's organization holding the alerting role responder or higher. Anything else is a
 * refusal, never an action.
 */
export function createSlackPeople(database: Database, slackApiUrl: string | undefined) {
  const { db } = database
  async function emailOf(integration: SlackIntegration, slackUserId: string): Promise<string | null> {
    const cached = await cachedSlackEmail(db, integration.id, slackUserId, CACHE_SECONDS)
    if (cached) return cached.email
    let email: string | null = null
    try {
      const answer = await slackClient(integration.botToken, slackApiUrl).users.info({ user: slackUserId })
      // An ok answer carries the user and profile; the address only with the users:read.email scope.
      email = answer.user!.profile!.email ?? null
    } catch (error) {
      // Slack knows no such user: remember that too; anything else is not an answer.
      if (slackErrorOf(error) !== 'user_not_found') throw error
    }
    await cacheSlackEmail(db, integration.id, slackUserId, email)
    return email
  }

  return {
    async actorOf(integration: SlackIntegration, slackUserId: string): Promise<SlackActor> {
      const email = await emailOf(integration, slackUserId)
      if (!email) return { refusal: 'Slack gave no e-mail address for you, so you cannot act on incidents from here.' }
      const userId = await memberByEmail(db, integration.organizationId, email)
      if (!userId) return { refusal: `${email} is not a member of this organization, so you cannot act on its incidents.` }
      const role = await productRoleOfUser(database, integration.organizationId, userId, 'alerting')
      if (!productRoleAtLeast(role, 'responder')) return { refusal: 'This needs the alerting role responder or higher.' }
      return { userId, email }
    },

    /** The workspace's user with this address (users.lookupByEmail, remembered), for invitations. */
    async slackUserOf(integration: SlackIntegration, email: string): Promise<string | undefined> {
      const cached = await cachedSlackUserOf(db, integration.id, email)
      if (cached) return cached
      try {
        const answer = await slackClient(integration.botToken, slackApiUrl).users.lookupByEmail({ email })
        const slackUserId = answer.user!.id!
        await cacheSlackEmail(db, integration.id, slackUserId, email)
        return slackUserId
      } catch (error) {
        if (slackErrorOf(error) === 'users_not_found') return undefined
        throw error
      }
    },
  }
}

export type SlackPeople = ReturnType<typeof createSlackPeople>
