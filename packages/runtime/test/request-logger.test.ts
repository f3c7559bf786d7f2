import Fastify, { LogController, type FastifyBaseLogger } from 'fastify'
import { pino } from 'pino'
import t from 'tap'
import { lazyRequestLogger } from '../src/request-logger.js'

/** A Fastify app on the lazy request logger, its lines read back, counting the children pino builds. */
async function appAt(level: string) {
  const lines: Array<Record<string, unknown>> = []
  let children = 0
  const parent = pino(
    { level, base: { service: 'test' }, onChild: () => (children += 1) },
    { write: (line: string) => void lines.push(JSON.parse(line)) },
  )
  const app = Fastify({
    loggerInstance: parent,
    childLoggerFactory: lazyRequestLogger,
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => 'req-1',
  })
  app.get('/quiet', async () => ({ ok: true }))
  app.get('/chatty', async (request) => {
    request.log.info({ detail: 1 }, 'an info line')
    request.log.warn('a warning')
    return { ok: true }
  })
  app.get('/nested', async (request) => {
    request.log.child({ step: 'inner' }).warn('from a child')
    return { ok: true }
  })
  app.get('/level', { logLevel: 'error' }, async (request) => {
    request.log.warn('dropped by the route level')
    request.log.error('kept')
    return { ok: true }
  })
  t.teardown(() => app.close())
  await app.ready()
  const before = children
  return { app, lines, children: () => children - before }
}

t.test('a request that logs nothing builds no child logger', async (t) => {
  const { app, lines, children } = await appAt('warn')
  t.equal((await app.inject('/quiet')).statusCode, 200)
  t.equal(children(), 0)
  t.same(lines, [])
})

t.test('a line at a level that writes carries the request id and the parent’s bindings', async (t) => {
  const { app, lines, children } = await appAt('warn')
  t.equal((await app.inject('/chatty')).statusCode, 200)
  t.equal(children(), 1, 'built once, for the warning')
  t.match(lines, [{ level: 40, msg: 'a warning', reqId: 'req-1', service: 'test' }])
  t.notOk(
    lines.some((line) => line.msg === 'an info line'),
    'info is below warn: nothing built or written for it',
  )
})

t.test('at info, every line is written with the request id', async (t) => {
  const { app, lines } = await appAt('info')
  await app.inject('/chatty')
  t.match(lines, [
    { level: 30, msg: 'an info line', detail: 1, reqId: 'req-1' },
    { level: 40, msg: 'a warning', reqId: 'req-1' },
  ])
})

t.test('a child of the request logger keeps the request id', async (t) => {
  const { app, lines } = await appAt('warn')
  await app.inject('/nested')
  t.match(lines, [{ msg: 'from a child', reqId: 'req-1', step: 'inner' }])
})

t.test('a route with a log level of its own gets it', async (t) => {
  const { app, lines } = await appAt('info')
  await app.inject('/level')
  t.same(
    lines.map((line) => line.msg),
    ['kept'],
  )
})

t.test('the level reads the parent’s until the request sets its own', async (t) => {
  const parent = pino({ level: 'warn' }, { write: () => {} })
  const logger = lazyRequestLogger.call(Fastify(), parent, { reqId: 'r' }, {}, undefined as never) as FastifyBaseLogger
  t.equal(logger.level, 'warn')
  logger.level = 'debug'
  t.equal(logger.level, 'debug')
  t.equal(parent.level, 'warn', 'the parent is untouched')
  logger.silent('nothing')
})
