import { readFile } from 'node:fs/promises'
import t from 'tap'
import { buildApp as buildPlatform } from '@svc/platform'
import { buildApp as buildProduct } from '@svc/product'
import { startTestService } from '@svc/testkit'
import { documentOf as generatedDocumentOf, generatedFile, typesOf, type ServiceName } from '../codegen/generate.js'
import { createPlatformClient, createProductClient } from '../src/index.js'

const service = await startTestService(t, buildPlatform, {
  config: { publicUrls: { platform: 'https://platform.example.com', product: 'https://product.example.com' } },
})
const product = await buildProduct(service.config, service.resources)
t.teardown(() => product.close())
const platformUrl = await service.app.listen({ port: 0, host: '127.0.0.1' })
const productUrl = await product.listen({ port: 0, host: '127.0.0.1' })
const apps = { platform: service.app, product }

interface Operation {
  operationId?: string
  tags?: string[]
}
interface Document {
  tags: Array<{ name: string; description?: string }>
  servers?: Array<{ url: string }>
  paths: Record<string, Record<string, Operation>>
}
const documentOf = (name: ServiceName) => apps[name].swagger() as unknown as Document

t.test('every operation has an operationId unique in its document, and a declared, described tag', async (t) => {
  let named = 0
  for (const name of ['platform', 'product'] as const) {
    const ids = new Set<string>()
    const document = documentOf(name)
    const declared = new Map(document.tags.map((tag) => [tag.name, tag.description]))
    for (const [path, operations] of Object.entries(document.paths))
      for (const [method, operation] of Object.entries(operations)) {
        const where = `${name}: ${method.toUpperCase()} ${path}`
        if (!operation.operationId) t.fail(`${where} has no operationId`)
        else if (ids.has(operation.operationId)) t.fail(`${where}: ${operation.operationId} is used twice`)
        else ids.add(operation.operationId)
        if (!operation.tags?.length) t.fail(`${where} has no tag`)
        for (const tag of operation.tags ?? []) if (!declared.get(tag)) t.fail(`${where}: tag ${tag} is not declared with a description`)
      }
    named += ids.size
    t.ok(ids.has(name === 'platform' ? 'getOrganizationsInvitations' : 'postV2Enqueue'), `${name}: names follow the method and the path`)
  }
  t.ok(named > 300, `${named} operations, each named once in its document`)
})

t.test('servers come from the public URL settings', async (t) => {
  t.same(documentOf('platform').servers?.[0]?.url, 'https://platform.example.com')
  t.same(documentOf('product').servers?.[0]?.url, 'https://product.example.com')
})

t.test('the committed client types are what the routes document now', async (t) => {
  for (const name of ['platform', 'product'] as const) {
    // Built the way `pnpm client:generate` builds them: the service in memory, its document, openapi-typescript.
    const generated = await typesOf(await generatedDocumentOf(name))
    t.equal(generated === (await readFile(generatedFile(name), 'utf8')), true, `${name}: run \`pnpm client:generate\` when this fails`)
  }
})

t.test('the typed clients call the running services', async (t) => {
  const owner = await service.signIn('owner@client.example')
  const platform = createPlatformClient(platformUrl, { token: owner.token })
  const me = await platform.GET('/api/v1/users/me')
  t.equal(me.response.status, 200)
  t.equal(me.data?.email, 'owner@client.example')

  const created = await platform.POST('/api/v1/organizations', { body: { name: 'Typed', slug: 'typed' } })
  t.equal(created.response.status, 201)
  const orgId = created.data!.id
  const invited = await platform.POST('/api/v1/organizations/{orgId}/invitations', {
    params: { path: { orgId } },
    body: { email: 'new@client.example', role: 'member' },
  })
  t.equal(invited.data?.status, 'pending')
  const members = await platform.GET('/api/v1/organizations/{orgId}/members', { params: { path: { orgId }, query: { limit: 10 } } })
  t.same(members.data?.data.map((member) => [member.email, member.invited]).sort(), [
    ['new@client.example', true],
    ['owner@client.example', false],
  ])
  const missing = await platform.GET('/api/v1/organizations/{orgId}', {
    params: { path: { orgId: '00000000-0000-4000-8000-000000000000' } },
  })
  t.equal(missing.response.status, 404)
  t.match(missing.error, { code: 'NOT_FOUND' }, 'errors are typed too')

  const productClient = createProductClient(productUrl, { token: owner.token })
  const config = await productClient.POST('/api/v1/organizations/{orgId}/webhooks', {
    params: { path: { orgId } },
    body: { name: 'PagerDuty senders', format: 'pagerduty' },
  })
  t.equal(config.response.status, 201)
  const sent = await createProductClient(productUrl).POST('/v2/enqueue', {
    body: {
      routing_key: config.data!.apiKey,
      event_action: 'trigger',
      payload: { summary: 'Typed trigger', source: 'client', severity: 'error' },
    },
  })
  t.equal(sent.response.status, 202)
  t.match(sent.data, { status: 'success', dedup_key: /^[0-9a-f-]{36}$/ })
  const alerts = await productClient.GET('/api/v1/organizations/{orgId}/alerts', { params: { path: { orgId } } })
  t.equal(alerts.data?.data[0]?.title, 'Typed trigger')
})
