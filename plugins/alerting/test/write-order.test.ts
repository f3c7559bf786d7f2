import t from 'tap'
import { createWriteOrder, BUSY_MS } from '../src/intake/write-order.js'

// Firing writes wait for the urgent writes that began before them (decision 0019, "Correlation"):
// a symptom written while its root's transaction is open would not see the root.

/** A write the test finishes when it chooses; `began` says whether it has started. */
function heldWrite(log: string[], name: string) {
  let finish: (() => void) | undefined
  let fail: ((error: Error) => void) | undefined
  const write = {
    began: false,
    run: () =>
      new Promise<string>((resolve, reject) => {
        write.began = true
        log.push(`${name} began`)
        finish = () => {
          log.push(`${name} committed`)
          resolve(name)
        }
        fail = reject
      }),
    finish: () => finish?.(),
    fail: (error: Error) => fail?.(error),
  }
  return write
}

/** Lets every settled promise's reactions run. */
const settle = () => new Promise((resolve) => setImmediate(resolve))

const urgentOf = (organizationId: string) => ({ organizations: [organizationId], urgent: [organizationId] })
const plainOf = (...organizations: string[]) => ({ organizations, urgent: [] })

t.test('a write waits for its organizations’ urgent writes begun before it, and a failed one still lets it go', async (t) => {
  const { inOrder } = createWriteOrder(() => 0)
  const log: string[] = []
  const plain = heldWrite(log, 'plain')
  const root = heldWrite(log, 'root')
  const symptom = heldWrite(log, 'symptom')
  const elsewhere = heldWrite(log, 'elsewhere')

  const plainWritten = inOrder(plainOf('acme'), plain.run)
  const rootWritten = inOrder(urgentOf('acme'), root.run)
  await settle()
  t.ok(plain.began && root.began, 'an urgent write waits for no plain one, and a plain one began before it makes nobody wait')

  const symptomWritten = inOrder(plainOf('globex', 'acme'), symptom.run)
  const elsewhereWritten = inOrder(plainOf('globex'), elsewhere.run)
  await settle()
  t.notOk(symptom.began, 'a batch with an alert of the organization waits')
  t.ok(elsewhere.began, 'another organization’s write does not')
  root.fail(new Error('deadlock'))
  await t.rejects(rootWritten, /deadlock/, 'the urgent write’s caller gets its failure')
  await settle()
  t.ok(symptom.began, 'and the waiting write goes on')
  for (const write of [symptom, plain, elsewhere]) write.finish()
  t.same(await Promise.all([plainWritten, symptomWritten, elsewhereWritten]), ['plain', 'symptom', 'elsewhere'])
})

t.test('a symptom begun after its root is written after the root commits; then the organization is busy and nothing waits', async (t) => {
  let clock = 0
  const { inOrder } = createWriteOrder(() => clock)
  const log: string[] = []
  const [root, symptom, secondRoot, secondSymptom] = ['root', 'symptom', 'second root', 'second symptom'].map((name) =>
    heldWrite(log, name),
  )
  const rootWritten = inOrder(urgentOf('acme'), root!.run)
  const symptomWritten = inOrder(plainOf('acme'), symptom!.run)
  await settle()
  root!.finish()
  await rootWritten
  await settle()
  symptom!.finish()
  await symptomWritten
  t.same(log, ['root began', 'root committed', 'symptom began', 'symptom committed'])

  // Within BUSY_MS the root waits for correlation or is in an open incident: the next write sees that.
  clock += BUSY_MS - 1
  const secondRootWritten = inOrder(urgentOf('acme'), secondRoot!.run)
  const secondSymptomWritten = inOrder(plainOf('acme'), secondSymptom!.run)
  await settle()
  t.ok(secondSymptom!.began, 'a busy organization’s writes do not wait')
  secondRoot!.finish()
  secondSymptom!.finish()
  await Promise.all([secondRootWritten, secondSymptomWritten])

  clock += BUSY_MS
  const third = heldWrite(log, 'third root')
  const after = heldWrite(log, 'after')
  const thirdWritten = inOrder(urgentOf('acme'), third.run)
  const afterWritten = inOrder(plainOf('acme'), after.run)
  await settle()
  t.notOk(after.began, 'quiet again once BUSY_MS has passed since its last urgent write')
  third.finish()
  await thirdWritten
  await settle()
  after.finish()
  await afterWritten
})

t.test('the event dispatcher waits for the urgent writes under way when it looks, of any organization, and for no later one', async (t) => {
  let clock = 0
  const order = createWriteOrder(() => clock)
  const log: string[] = []
  t.equal(order.urgentWritten(), undefined, 'nothing under way: the dispatcher claims at once')

  // acme is busy: its urgent writes make no firing write wait, but the dispatcher still waits.
  const warmUp = heldWrite(log, 'warm-up')
  const warmUpWritten = order.inOrder(urgentOf('acme'), warmUp.run)
  warmUp.finish()
  await warmUpWritten
  clock += 1
  const root = heldWrite(log, 'root')
  const symptom = heldWrite(log, 'symptom')
  const rootWritten = order.inOrder(urgentOf('acme'), root.run)
  const symptomWritten = order.inOrder(plainOf('acme'), symptom.run)
  await settle()
  t.ok(symptom.began, 'in a busy organization the symptom is written at once')
  symptom.finish()
  await symptomWritten

  const looked = order.urgentWritten()
  t.ok(looked, 'the root is under way')
  let claimed = false
  void looked!.then(() => (claimed = true))
  const later = heldWrite(log, 'later root')
  const laterWritten = order.inOrder(urgentOf('globex'), later.run)
  await settle()
  t.notOk(claimed, 'the claim waits for the root')
  root.fail(new Error('deadlock'))
  await t.rejects(rootWritten, /deadlock/)
  await settle()
  t.ok(claimed, 'once it settled (here it failed), the claim goes on without waiting for the later one')
  t.ok(order.urgentWritten(), 'which the next claim waits for')
  later.finish()
  await laterWritten
  await settle()
  t.equal(order.urgentWritten(), undefined)
})
