import { hash } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { Value } from 'typebox/value'
import { auditContextOf } from '@svc/audit'
import { isUuid } from '@svc/auth'
import { ForbiddenError, NotFoundError, invalidField } from '@svc/http'
import { type Escalator } from '../../paging/index.js'
import {
  findSlackIntegration,
  slackClient,
  slackCommandPath,
  slackInteractivityPath,
  type SlackIntegration,
} from '../../destinations/index.js'
import { ChatRefusal, isOurMessage, pressButton, runCommand } from './actions.js'
import { BUTTON_ACTIONS, subjectOf } from './cards.js'
import type { SlackPeople } from './people.js'
import { claimSlackDelivery } from './queries.js'
import { renderAlert, renderIncident, type RenderDeps } from './render.js'
import { slackSignatureProblem } from './signature.js'

const tags = ['chat']
const Params = Type.Object({ integrationId: Type.String() })
const FormBody = Type.String({ description: 'application/x-www-form-urlencoded, as Slack sends it (signed)' })
const Ephemeral = Type.Object({
  response_type: Type.Literal('ephemeral'),
  text: Type.String(),
})

/** What Slack posts when a button is pressed on a message (the part we read); other interactions are ignored. */
const BlockActions = Type.Object({
  type: Type.Literal('block_actions'),
  user: Type.Object({ id: Type.String() }),
  channel: Type.Object({ id: Type.String() }),
  message: Type.Object({ ts: Type.String() }),
  response_url: Type.String(),
  actions: Type.Array(Type.Object({ action_id: Type.String(), value: Type.String() }), { minItems: 1 }),
})

/** What Slack posts when the slash command is run (the part we read). */
const SlashCommand = Type.Object({ user_id: Type.String(), channel_id: Type.String(), text: Type.String() })

export interface SlackRouteOptions extends RenderDeps {
  people: SlackPeople
  escalator: Pick<Escalator, 'escalateNow'>
  slackApiUrl: string | undefined
}

/**
 * Where a Slack app talks back (decision 0020): button presses on our messages and the
 * `/incident` slash command, one pair of URLs per integration. Public routes: each request must
 * carry Slack's signature under the integration's signing secret (403 otherwise), and acts as
 * the person Slack names only when they map to a responder of the integration's organization.
 */
export const slackInteractivityRoutes: FastifyPluginAsyncTypebox<SlackRouteOptions> = async (app, options) => {
  const { db } = app.database
  const deps = { database: app.database, jobs: app.jobs, escalator: options.escalator }

  // The signature is over the body's exact bytes: it is kept as text and parsed once verified.
  if (app.hasContentTypeParser('application/x-www-form-urlencoded')) app.removeContentTypeParser('application/x-www-form-urlencoded')
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) =>
    done(null, body),
  )

  /** response_url is Slack's (hooks.slack.com), or the Slack-compatible server this service is pointed at. */
  const slackOrigins = new Set(['https://hooks.slack.com', ...(options.slackApiUrl ? [new URL(options.slackApiUrl).origin] : [])])
  const respond = async (log: FastifyBaseLogger, responseUrl: string, text: string) => {
    if (!URL.canParse(responseUrl) || !slackOrigins.has(new URL(responseUrl).origin)) return
    const answer = await fetch(responseUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ response_type: 'ephemeral', replace_original: false, text }),
      signal: AbortSignal.timeout(10_000),
    }).catch((error: Error) => error)
    if (answer instanceof Error || !answer.ok)
      log.warn({ err: answer instanceof Error ? answer : undefined }, 'slack response_url refused our answer')
  }

  /**
   * The integration the URL names, with the request verified as its Slack app's; the form; and
   * whether this is the delivery's first arrival. A signature holds for five minutes, so a
   * captured request could be sent again: only its first arrival acts (`replay` is true after).
   */
  const verified = async (request: FastifyRequest, integrationId: string, body: string) => {
    const integration = isUuid(integrationId) ? await findSlackIntegration(db, integrationId) : undefined
    if (!integration?.signingSecret) throw new NotFoundError('Slack integration')
    const problem = slackSignatureProblem(integration.signingSecret, request.headers, body)
    if (problem) throw new ForbiddenError(problem)
    const replay = !(await claimSlackDelivery(db, integration.id, hash('sha256', body)))
    if (replay) request.log.warn({ integrationId: integration.id }, 'a Slack request arrived again: not acted on')
    return { integration, form: new URLSearchParams(body), replay }
  }
  const audit = (request: FastifyRequest, userId: string) => ({ ...auditContextOf(request), actor: { type: 'user' as const, userId } })

  /** Rewrites the message a button was pressed on to show what it shows now. */
  const rewrite = async (
    integration: SlackIntegration,
    channel: string,
    ts: string,
    subject: { kind: 'alert' | 'incident'; id: string },
  ) => {
    const rendered =
      subject.kind === 'alert'
        ? await renderAlert(db, options, integration.organizationId, subject.id)
        : await renderIncident(db, options, integration.organizationId, subject.id)
    if (!rendered) return
    await slackClient(integration.botToken, options.slackApiUrl).chat.update({
      channel,
      ts,
      text: rendered.text,
      // Block Kit JSON of our own (cards.ts); the SDK's block types are a union we do not restate.
      blocks: rendered.blocks as never,
    })
  }

  app.post(
    slackInteractivityPath(':integrationId'),
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'Slack interactivity: a button pressed on a page or incident message (signed by Slack)',
        description:
          'Acknowledge, resolve, escalate or join as responder, as the Slack user’s e-mail address maps to a responder of the organization; otherwise an ephemeral refusal. 403 unless signed with the integration’s signing secret within five minutes.',
        params: Params,
        body: FormBody,
        response: { 200: Type.Null() },
      },
    },
    async (request, reply) => {
      const { integration, form, replay } = await verified(request, request.params.integrationId, request.body)
      if (replay) return reply.code(200).send(null)
      let payload: unknown
      try {
        payload = JSON.parse(form.get('payload') ?? '')
      } catch {
        throw invalidField('payload', 'is not JSON')
      }
      if (!Value.Check(BlockActions, payload)) return reply.code(200).send(null)
      const { channel, message, actions, user } = payload
      const subject = subjectOf(actions[0]!.value)
      const action = BUTTON_ACTIONS.find((known) => known === actions[0]!.action_id)
      if (!subject || !action || !(await isOurMessage(deps, integration.id, channel.id, message.ts))) return reply.code(200).send(null)
      const answer = await act(request, integration, user.id, (actor) =>
        pressButton(deps, integration.organizationId, actor, action, subject),
      )
      await respond(request.log, payload.response_url, answer.text)
      if (answer.acted)
        await rewrite(integration, channel.id, message.ts, subject).catch((error: Error) =>
          request.log.warn({ err: error }, 'slack message not rewritten'),
        )
      return reply.code(200).send(null)
    },
  )

  app.post(
    slackCommandPath(':integrationId'),
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'Slack slash command `/incident` (signed by Slack)',
        description:
          '`declare [<severity>] [type=<key>] [<field>=<value> …] <title>`, `set [INC-n] <field>=<value> … [type=<key>]`, `done [INC-n] <role> <number>`, `ack [INC-n]`, `resolve [INC-n]`, `status [INC-n] <text>`, `statuspage [INC-n] [template=<key>] [<status>] [<text>]`, `join [INC-n]`, `help`; without INC-n, the incident whose channel it is run in. Answers Slack with an ephemeral line. 403 unless signed with the integration’s signing secret within five minutes.',
        params: Params,
        body: FormBody,
        response: { 200: Ephemeral },
      },
    },
    async (request) => {
      const { integration, form, replay } = await verified(request, request.params.integrationId, request.body)
      if (replay) return { response_type: 'ephemeral' as const, text: 'This command was run already: Slack sent the same request again.' }
      const fields = Object.fromEntries(form)
      if (!Value.Check(SlashCommand, fields)) throw invalidField('text', 'is missing: this is not a slash command as Slack sends it')
      const answer = await act(request, integration, fields.user_id, (actor) =>
        runCommand(deps, integration, actor, fields.channel_id, fields.text),
      )
      return { response_type: 'ephemeral' as const, text: answer.text }
    },
  )

  /** Does `work` as the Slack user's person, or answers why not; refusals are never actions. */
  async function act(
    request: FastifyRequest,
    integration: SlackIntegration,
    slackUserId: string,
    work: (actor: { userId: string; audit: ReturnType<typeof audit> }) => Promise<string>,
  ): Promise<{ acted: boolean; text: string }> {
    if (!integration.enabled) return { acted: false, text: 'This Slack integration is turned off.' }
    const person = await options.people.actorOf(integration, slackUserId)
    if ('refusal' in person) return { acted: false, text: person.refusal }
    try {
      return { acted: true, text: await work({ userId: person.userId, audit: audit(request, person.userId) }) }
    } catch (error) {
      if (error instanceof ChatRefusal) return { acted: false, text: error.message }
      throw error
    }
  }
}
