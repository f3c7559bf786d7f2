import { randomBytes } from 'node:crypto'
import t from 'tap'
import { SecretsKeyMissing, secretSealer } from '../src/seal.js'

const key = randomBytes(32).toString('base64')

t.test('a sealed secret opens with its key, for its organization and name only', async (t) => {
  const sealer = secretSealer(key)
  const sealed = sealer.seal('org-1', 'TOKEN', 'value')
  t.equal(sealer.open('org-1', 'TOKEN', sealed), 'value')
  t.not(sealer.seal('org-1', 'TOKEN', 'value').toString('hex'), sealed.toString('hex'), 'a new nonce each time')
  t.throws(() => sealer.open('org-2', 'TOKEN', sealed), 'copied to another organization, it does not open')
  t.throws(() => sealer.open('org-1', 'OTHER', sealed), 'nor under another name')
  t.throws(() => secretSealer(randomBytes(32).toString('base64')).open('org-1', 'TOKEN', sealed), 'nor with another key')
})

t.test('without a key nothing is sealed or opened', async (t) => {
  t.throws(() => secretSealer(undefined).seal('org', 'A', 'v'), SecretsKeyMissing)
  t.throws(() => secretSealer(Buffer.alloc(16).toString('base64')).seal('org', 'A', 'v'), SecretsKeyMissing)
})
