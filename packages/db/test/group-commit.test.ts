import t from 'tap'
import { createGroupCommit } from '@svc/db'

/** A writer whose batches finish when the test says: what each batch held, in order. */
function heldWriter(options: { maxBatch?: number; keyOf?: (entry: string) => string; refuse?: string } = {}) {
  const batches: string[][] = []
  const alone: string[] = []
  const release: Array<() => void> = []
  const held = () => new Promise<void>((resolve) => release.push(resolve))
  const commits = createGroupCommit<string, string>({
    writeBatch: async (batch) => {
      batches.push(batch)
      await held()
      if (options.refuse && batch.includes(options.refuse)) throw new Error(`${options.refuse} is refused`)
      return batch.map((entry) => `${entry} written with ${batch.length}`)
    },
    writeOne: async (entry) => {
      alone.push(entry)
      await held()
      if (entry === options.refuse) throw new Error(`${entry} is refused`)
      return `${entry} written alone`
    },
    maxBatch: options.maxBatch ?? 100,
    keyOf: options.keyOf,
  })
  /** Lets every write under way finish, and the ones they lead to, until none is left. */
  const settle = async () => {
    for (let round = 0; round < 20; round++) {
      await new Promise((resolve) => setImmediate(resolve))
      release.splice(0).forEach((resolve) => resolve())
    }
  }
  return { commits, batches, alone, settle }
}

t.test('a lone entry is written at once, alone', async (t) => {
  const { commits, batches, alone, settle } = heldWriter()
  const written = commits.write('a')
  await settle()
  t.equal(await written, 'a written alone')
  t.same(alone, ['a'])
  t.same(batches, [], 'no batch for one entry')
})

t.test('entries arriving while a write is under way are written together, each answered with its own result', async (t) => {
  const { commits, batches, alone, settle } = heldWriter()
  const first = commits.write('a')
  const rest = ['b', 'c', 'd'].map((entry) => commits.write(entry))
  await settle()
  t.equal(await first, 'a written alone')
  t.same(await Promise.all(rest), ['b written with 3', 'c written with 3', 'd written with 3'])
  t.same(alone, ['a'])
  t.same(batches, [['b', 'c', 'd']], 'one batch for what arrived meanwhile')
})

t.test('entries handed in together are written in one batch, even with none under way', async (t) => {
  const { commits, batches, alone, settle } = heldWriter()
  const written = commits.writeAll(['a', 'b', 'c'])
  await settle()
  t.same(await Promise.all(written), ['a written with 3', 'b written with 3', 'c written with 3'])
  t.same(alone, [], 'none is written alone')
  t.same(batches, [['a', 'b', 'c']])
})

t.test('a batch takes at most maxBatch entries; the rest form the next one', async (t) => {
  const { commits, batches, settle } = heldWriter({ maxBatch: 2 })
  const all = ['a', 'b', 'c', 'd', 'e'].map((entry) => commits.write(entry))
  await settle()
  await Promise.all(all)
  t.same(batches, [
    ['b', 'c'],
    ['d', 'e'],
  ])
})

t.test('entries of one key never share a batch: the second waits for the next', async (t) => {
  const { commits, batches, alone, settle } = heldWriter({ keyOf: (entry) => entry[0]! })
  const all = ['x', 'a1', 'a2', 'b1', 'a3'].map((entry) => commits.write(entry))
  await settle()
  await Promise.all(all)
  t.same(batches, [['a1', 'b1']], 'a2 and a3 wait for the batches after a1')
  t.same(alone, ['x', 'a2', 'a3'], 'each of them the only entry of its batch')
})

t.test('a batch that fails is written entry by entry: only the bad entry fails', async (t) => {
  const { commits, batches, alone, settle } = heldWriter({ refuse: 'bad' })
  const first = commits.write('a')
  const good = commits.write('good')
  const bad = commits.write('bad')
  const outcomes = Promise.allSettled([first, good, bad])
  await settle()
  const [a, goodOutcome, badOutcome] = await outcomes
  t.same(a, { status: 'fulfilled', value: 'a written alone' })
  t.same(batches, [['good', 'bad']])
  t.same(alone, ['a', 'good', 'bad'], 'the failed batch is written again entry by entry')
  t.same(goodOutcome, { status: 'fulfilled', value: 'good written alone' })
  t.equal(badOutcome!.status, 'rejected')
  t.match((badOutcome as PromiseRejectedResult).reason, { message: 'bad is refused' })
})
