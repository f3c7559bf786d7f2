import { createServer } from 'node:net'
import t from 'tap'
import { busyPortsMessage } from '@svc/runtime'

t.test('taken ports are named with the variables that move them; free ones are not', async (t) => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, resolve))
  t.teardown(() => server.close())
  const taken = (server.address() as { port: number }).port
  const free = createServer()
  await new Promise<void>((resolve) => free.listen({ port: 0, host: '127.0.0.1' }, resolve))
  const freed = (free.address() as { port: number }).port
  await new Promise((resolve) => free.close(resolve))

  t.equal(await busyPortsMessage([{ port: freed, variable: 'PRODUCT_PORT' }], '127.0.0.1'), undefined)
  t.equal(
    await busyPortsMessage(
      [
        { port: taken, variable: 'PLATFORM_PORT' },
        { port: freed, variable: 'PRODUCT_PORT' },
        { port: 0, variable: 'METRICS_PORT' },
      ],
      '127.0.0.1',
    ),
    `port ${taken} (PLATFORM_PORT) already in use on 127.0.0.1: another copy may be running (stop it), or set PLATFORM_PORT to free ports`,
  )
})
