// The test harness (databases, services, processes, identities, clocks) at the top of src;
// services that speak a vendor's wire protocol on loopback in fakes/<vendor>.ts; real peers the
// tests drive (Debian's Alertmanager) in peers/.
export { createTestDatabase, localPostgresReachable, testServerUrl } from './database.js'
export { buildEmbeddedSnapshot, embeddedSnapshot } from './embedded-snapshot.js'
export { claimsOf, hs256WithKey, signRs256, tamperedToken, unsignedToken } from './forged-tokens.js'
export { startTestIssuer, type TestIssuer } from './issuer.js'
export { freePort } from './ports.js'
export { startSmtpServer, type ReceivedMail, type RecipientReply, type SmtpServerOptions, type SmtpTestServer } from './fakes/smtp.js'
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
} from './fakes/chat.js'
export { startTwilioServer, type TwilioRefusal, type TwilioRequest, type TwilioTestServer } from './fakes/twilio.js'
export {
  chatCompletion,
  startOpenAiServer,
  type ChatReply,
  type ChatRequest,
  type OpenAiTestServer,
  type Responder,
} from './fakes/openai.js'
export { startTestService, testConfig, type BuildApp, type SignedIn, type TestService, type TestServiceOptions } from './service.js'
export type { TestContext } from './teardown.js'
export { until } from './until.js'
export { builtPathOf, entryPointArgs, sourcePathOf, TEST_BUILD_DIR, workspaceRoot } from './workspace.js'
export { acceptInvitationOf, invitationTokenFor } from './invitations.js'
export { startTlsFront, type TlsFront } from './tls-front.js'
export { ALERTMANAGER_BINARY, alertmanagerPresent, startAlertmanager } from './peers/alertmanager.js'
export { startPushService, type PushTestService, type ReceivedPush } from './fakes/web-push.js'
export { startStripeServer, type StripeCall, type StripeTestServer } from './fakes/stripe.js'
export { startDnsServer, type DnsTestServer } from './fakes/dns.js'
export { startJiraServer, type JiraIssue, type JiraTestServer } from './fakes/jira.js'
export { startLinearServer, type LinearIssue, type LinearTestServer } from './fakes/linear.js'
export { CHROMIUM, chromiumPresent } from './chromium.js'
export { SHOP_PASSWORD, shopScript, startShop, type TestShop } from './shop.js'
