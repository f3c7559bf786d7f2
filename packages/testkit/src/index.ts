export { createTestDatabase, localPostgresReachable, testServerUrl } from './database.js'
export { buildEmbeddedSnapshot, embeddedSnapshot } from './embedded-snapshot.js'
export { claimsOf, hs256WithKey, signRs256, tamperedToken, unsignedToken } from './forged-tokens.js'
export { startTestIssuer, type TestIssuer } from './issuer.js'
export { freePort } from './ports.js'
export { startSmtpServer, type ReceivedMail, type RecipientReply, type SmtpServerOptions, type SmtpTestServer } from './smtp-server.js'
export { startReplicaProcess, type ReplicaOptions, type ReplicaProcess } from './replica-process.js'
export {
  slackSignature,
  startSlackServer,
  startWebhookReceiver,
  type ReceivedRequest,
  type SlackPost,
  type SlackResponse,
  type SlackTestServer,
  type WebhookReceiver,
} from './chat-servers.js'
export { startTwilioServer, type TwilioRefusal, type TwilioRequest, type TwilioTestServer } from './twilio-server.js'
export {
  chatCompletion,
  startOpenAiServer,
  type ChatReply,
  type ChatRequest,
  type OpenAiTestServer,
  type Responder,
} from './openai-server.js'
export { startTestService, testConfig, type BuildApp, type SignedIn, type TestService, type TestServiceOptions } from './service.js'
export type { TestContext } from './teardown.js'
export { until } from './until.js'
export { builtPathOf, entryPointArgs, sourcePathOf, TEST_BUILD_DIR, workspaceRoot } from './workspace.js'
export { acceptInvitationOf, invitationTokenFor } from './invitations.js'
export { startTlsFront, type TlsFront } from './tls-front.js'
export { ALERTMANAGER_BINARY, alertmanagerPresent, startAlertmanager } from './alertmanager.js'
export { startPushService, type PushTestService, type ReceivedPush } from './push-service.js'
export { startStripeServer, type StripeCall, type StripeTestServer } from './stripe-server.js'
export { startDnsServer, type DnsTestServer } from './dns-server.js'
