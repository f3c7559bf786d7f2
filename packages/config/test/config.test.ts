import t from 'tap'
import {
  ConfigurationError,
  DEFAULT_AI_CONFIG,
  DEFAULT_INVITATION_TTL_DAYS,
  DEFAULT_NOTIFIER_CONFIG,
  aiConfigFor,
  authConfigFor,
  notifierConfigFor,
  readEnvironment,
  serviceConfigFor,
  standaloneServiceConfig,
  trustProxyOf,
} from '@svc/config'

t.test('defaults follow the configuration table', async (t) => {
  const env = readEnvironment({})
  t.match(env, {
    DATA_DIR: './.data',
    PLATFORM_PORT: 3004,
    PRODUCT_PORT: 3003,
    HOST: '0.0.0.0',
    AUTH_GROUPS_CLAIM: 'cognito:groups',
    LOG_LEVEL: 'info',
    TRUST_PROXY: 'false',
    INGEST_RATE_LIMIT_MAX: 6000,
  })
  t.equal(env.DATABASE_URL, undefined)
})

t.test('JWKS and token endpoints default to paths under the issuer', async (t) => {
  const env = readEnvironment({ AUTH_ISSUER: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc/', AUTH_CLIENT_ID: 'a, b' })
  const auth = authConfigFor(env, env.AUTH_ISSUER as string, ['a', 'b'])
  t.equal(auth.jwksUrl, 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc/.well-known/jwks.json')
  t.equal(auth.tokenUrl, 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc/oauth2/token')
  const config = serviceConfigFor(
    readEnvironment({ ALLOWED_ORIGINS: 'https://app.example.com, https://admin.example.com', COOKIE_DOMAIN: 'example.com' }),
    auth,
  )
  t.same(config.cookies, { domain: 'example.com', allowedOrigins: ['https://app.example.com', 'https://admin.example.com'] })
})

t.test('a service on its own needs PostgreSQL and an identity provider', async (t) => {
  t.throws(
    () => standaloneServiceConfig(readEnvironment({})),
    new ConfigurationError('DATABASE_URL is required when a service runs on its own (the embedded database is for `pnpm start`)'),
  )
  t.throws(() => standaloneServiceConfig(readEnvironment({ DATABASE_URL: 'postgres://localhost/app' })), /AUTH_ISSUER is required/)
  t.throws(
    () => standaloneServiceConfig(readEnvironment({ DATABASE_URL: 'postgres://localhost/app', AUTH_ISSUER: 'https://idp.example.com' })),
    /AUTH_CLIENT_ID is required/,
  )
  const config = standaloneServiceConfig(
    readEnvironment({ DATABASE_URL: 'postgres://localhost/app', AUTH_ISSUER: 'https://idp.example.com', AUTH_CLIENT_ID: 'web,mobile' }),
  )
  t.same(config.auth.clientIds, ['web', 'mobile'])
})

t.test('without SMTP_URL e-mails are held; with it they go to that server, with links to APP_URL', async (t) => {
  t.same(notifierConfigFor(readEnvironment({})), {
    smtpUrl: undefined,
    from: 'Incident Platform <no-reply@localhost>',
    appUrl: undefined,
    retryLimit: 5,
    retryDelaySeconds: 60,
  })
  const configured = notifierConfigFor(
    readEnvironment({
      SMTP_URL: 'smtps://user:secret@smtp.example.com:465',
      SMTP_FROM: 'Ops <ops@example.com>',
      APP_URL: 'https://app.example.com/',
      NOTIFY_RETRY_LIMIT: '2',
    }),
  )
  t.match(configured, {
    smtpUrl: 'smtps://user:secret@smtp.example.com:465',
    from: 'Ops <ops@example.com>',
    appUrl: 'https://app.example.com',
    retryLimit: 2,
  })
  t.throws(() => readEnvironment({ SMTP_URL: 'mail.example.com' }), { name: 'ConfigurationError', message: /SMTP_URL/ })
})

t.test('Twilio is configured by its three settings together, calling back to the product API', async (t) => {
  const sid = `AC${'0'.repeat(32)}`
  const twilio = notifierConfigFor(
    readEnvironment({
      TWILIO_ACCOUNT_SID: sid,
      TWILIO_AUTH_TOKEN: 'a'.repeat(32),
      TWILIO_FROM: '+15005550006',
      TWILIO_API_URL: 'http://127.0.0.1:9999/',
      PUBLIC_PRODUCT_URL: 'https://product.example.com/',
    }),
  ).twilio
  t.same(twilio, {
    accountSid: sid,
    authToken: 'a'.repeat(32),
    from: '+15005550006',
    apiUrl: 'http://127.0.0.1:9999',
    callbackBase: 'https://product.example.com',
  })
  const local = notifierConfigFor(
    readEnvironment({ TWILIO_ACCOUNT_SID: sid, TWILIO_AUTH_TOKEN: 'a'.repeat(32), TWILIO_FROM: '+15005550006' }),
  )
  t.equal(local.twilio?.callbackBase, 'http://localhost:3003')
  t.throws(() => notifierConfigFor(readEnvironment({ TWILIO_ACCOUNT_SID: sid })), { name: 'ConfigurationError', message: /set all three/ })
  t.throws(() => readEnvironment({ TWILIO_FROM: '0151 1234' }), { name: 'ConfigurationError', message: /TWILIO_FROM/ })
})

t.test('web push takes VAPID keys and a subject, all three or none', async (t) => {
  const keys = {
    VAPID_PUBLIC_KEY: 'BDVt_vUaE9X8rhflA032NKeST4hQO_heX1y3jevSlbX5JvInn-8WgSPnhIbmIMVmGtx0odVWOvgNncpS1FtSLV4',
    VAPID_PRIVATE_KEY: 'xgvCOGAp6HXUiWcnnAgIIHEMNLwgYaEUnvO-1yTcwbs',
    VAPID_SUBJECT: 'mailto:oncall@example.com',
  }
  t.same(notifierConfigFor(readEnvironment({ ...keys, ALLOW_PRIVATE_TARGETS: 'true' })).webPush, {
    publicKey: keys.VAPID_PUBLIC_KEY,
    privateKey: keys.VAPID_PRIVATE_KEY,
    subject: keys.VAPID_SUBJECT,
    allowPrivateTargets: true,
  })
  t.throws(() => notifierConfigFor(readEnvironment({ VAPID_SUBJECT: keys.VAPID_SUBJECT })), {
    name: 'ConfigurationError',
    message: /VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY and VAPID_SUBJECT go together/,
  })
  t.throws(() => readEnvironment({ ...keys, VAPID_SUBJECT: 'oncall@example.com' }), {
    name: 'ConfigurationError',
    message: /VAPID_SUBJECT/,
  })
})

t.test('the defaults services use without an environment are the table’s own', async (t) => {
  const env = readEnvironment({})
  // An unset setting may be an absent key or an undefined one: compare what is set.
  const set = (config: object): unknown => JSON.parse(JSON.stringify(config))
  t.same(set(DEFAULT_AI_CONFIG), set(aiConfigFor(env)))
  t.same(set(DEFAULT_NOTIFIER_CONFIG), set(notifierConfigFor(env)))
  t.equal(env.INVITATION_TTL_DAYS, DEFAULT_INVITATION_TTL_DAYS)
})

t.test('INVITATION_TTL_DAYS sets how long invitations work, from one day to ninety', async (t) => {
  t.equal(readEnvironment({ INVITATION_TTL_DAYS: '2' }).INVITATION_TTL_DAYS, 2)
  t.throws(() => readEnvironment({ INVITATION_TTL_DAYS: '0' }), { name: 'ConfigurationError', message: /INVITATION_TTL_DAYS/ })
  t.throws(() => readEnvironment({ INVITATION_TTL_DAYS: '91' }), { name: 'ConfigurationError', message: /INVITATION_TTL_DAYS/ })
})

t.test('a bad value stops with one line naming it', async (t) => {
  t.throws(() => readEnvironment({ PLATFORM_PORT: 'eighty' }), { name: 'ConfigurationError', message: /PLATFORM_PORT/ })
  t.throws(() => readEnvironment({ LOG_LEVEL: 'loud' }), { name: 'ConfigurationError', message: /LOG_LEVEL/ })
  t.throws(() => readEnvironment({ DATABASE_URL: 'mysql://x' }), { name: 'ConfigurationError', message: /DATABASE_URL/ })
  const error = (() => {
    try {
      readEnvironment({ PRODUCT_PORT: '99999' })
    } catch (caught) {
      return caught as Error
    }
  })()
  t.notMatch(error?.message ?? '', /\n/, 'one line')
})

t.test('reports are kept until deleted unless REPORTS_RETENTION_DAYS says how long', async (t) => {
  const auth = authConfigFor(readEnvironment({}), 'https://idp.example.com', ['web'])
  t.equal(serviceConfigFor(readEnvironment({}), auth).reportsRetentionDays, undefined)
  t.equal(serviceConfigFor(readEnvironment({ REPORTS_RETENTION_DAYS: '365' }), auth).reportsRetentionDays, 365)
  for (const bad of ['0', '3651', 'a year'])
    t.throws(() => readEnvironment({ REPORTS_RETENTION_DAYS: bad }), { name: 'ConfigurationError', message: /REPORTS_RETENTION_DAYS/ }, bad)
})

t.test('TRUST_PROXY takes true, false, a hop count, or addresses and CIDRs', async (t) => {
  t.equal(trustProxyOf('true'), true)
  t.equal(trustProxyOf('FALSE'), false)
  t.equal(trustProxyOf('2'), 2)
  t.same(trustProxyOf('10.0.0.0/8, 192.168.1.7, ::1, fd00::/8, loopback'), ['10.0.0.0/8', '192.168.1.7', '::1', 'fd00::/8', 'loopback'])
  for (const bad of ['yes', '10.0.0.0/33', '300.1.1.1', '10.0.0.1/8/1', 'proxy.internal']) {
    t.throws(() => trustProxyOf(bad), { name: 'ConfigurationError', message: /TRUST_PROXY/ }, bad)
  }
  t.equal(
    serviceConfigFor(readEnvironment({ TRUST_PROXY: '1' }), authConfigFor(readEnvironment({}), 'https://idp.example.com', ['web']))
      .trustProxy,
    1,
  )
})

t.test('billing, phone countries and public URLs are read as an operator writes them', async (t) => {
  const env = readEnvironment({
    STRIPE_SECRET_KEY: 'sk_test_123',
    APP_URL: 'https://app.example.com//',
    PHONE_COUNTRIES: 'us, gb',
    PUBLIC_PRODUCT_URL: 'https://product.example.com/',
  })
  const config = serviceConfigFor(env, authConfigFor(env, 'https://issuer.example.com', ['client']))
  t.match(config.billing, {
    secretKey: 'sk_test_123',
    successUrl: 'https://app.example.com/billing/success',
    cancelUrl: 'https://app.example.com/billing/cancel',
  })
  t.match(JSON.stringify(config), /"countries":\["US","GB"\]/)
  t.equal(config.publicUrls?.product, 'https://product.example.com', 'trailing slashes trimmed')
})
