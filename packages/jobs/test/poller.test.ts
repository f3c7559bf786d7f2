import type { FastifyBaseLogger } from 'fastify'
import t from 'tap'
import { createPoller } from '@svc/jobs'

// The pollers behind table-driven work (pending escalations, undispatched events): rounds one at a
// time, again at once after a full batch, and a helper that runs only when woken.

// The pollers' timers do not hold the process open (unref); this one does, while the tests wait on them.
const keepAlive = setInterval(() => undefined, 60_000)
t.teardown(() => clearInterval(keepAlive))

const errors: unknown[] = []
const log = { error: (entry: unknown) => errors.push(entry) } as unknown as FastifyBaseLogger

/** A round that waits until the test lets it end, so the test decides what happens meanwhile. */
function heldRounds(answers: boolean[]) {
  const started: number[] = []
  let release: (() => void) | undefined
  let announce: (() => void) | undefined
  return {
    started,
    round: async () => {
      started.push(started.length)
      announce?.()
      await new Promise<void>((resolve) => (release = resolve))
      return { more: answers[started.length - 1] ?? false }
    },
    /** Resolves once the next round has started. */
    nextStart: () => new Promise<void>((resolve) => (announce = resolve)),
    end: () => release?.(),
  }
}

t.test('a helper without an interval runs only when woken, and once more when woken during a round', async (t) => {
  const rounds = heldRounds([false, false])
  const helper = createPoller({ intervalMs: null, log, what: 'helping', round: rounds.round })
  helper.start()
  t.teardown(() => helper.stop())
  // A timer set now fires after any the start set for now: the round would have begun by then.
  await new Promise((resolve) => setTimeout(resolve, 0))
  t.same(rounds.started, [], 'started, it waits to be woken')

  let next = rounds.nextStart()
  helper.wake()
  await next
  next = rounds.nextStart()
  helper.wake() // during the round: it runs once more after it
  rounds.end()
  await next
  t.same(rounds.started, [0, 1])
  rounds.end()
  await helper.stop()
  t.equal(rounds.started.length, 2, 'and then nothing until woken again')
  t.same(errors, [])
})

t.test('a full batch runs the next round at once', async (t) => {
  const rounds = heldRounds([true, false])
  const poller = createPoller({ intervalMs: 60_000, log, what: 'polling', round: rounds.round })
  let next = rounds.nextStart()
  poller.start()
  t.teardown(() => poller.stop())
  await next
  next = rounds.nextStart()
  rounds.end()
  await next
  t.same(rounds.started, [0, 1], 'the second round followed the full first without waiting for the interval')
  rounds.end()
  await poller.stop()
})
