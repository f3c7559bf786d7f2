import t from 'tap'
import { priorityOfSeverity, severityOfPriority } from '../src/index.js'

t.test('an alert opens an incident of its priority’s severity; P5 and unknown words are the mildest', async (t) => {
  t.same(['P1', 'P2', 'P3', 'P4', 'P5', 'p1', 'toString'].map(severityOfPriority), ['SEV1', 'SEV2', 'SEV3', 'SEV4', 'SEV4', 'SEV4', 'SEV4'])
})

t.test('a severity pages at its priority, and back again', async (t) => {
  for (const severity of ['SEV1', 'SEV2', 'SEV3', 'SEV4'] as const) t.equal(severityOfPriority(priorityOfSeverity(severity)!), severity)
  t.equal(priorityOfSeverity('SEV5'), undefined)
  t.equal(priorityOfSeverity('constructor'), undefined)
})
