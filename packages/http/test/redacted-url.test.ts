import t from 'tap'
import { redactedUrl } from '../src/index.js'

t.test('credentials in URLs never reach a log line', async (t) => {
  t.equal(redactedUrl('/api/v1/webhooks/ingest/whk_secret?x=1'), '/api/v1/webhooks/ingest/[redacted]?x=1')
  t.equal(redactedUrl('/api/v1/alerts/ack/AbC-123_xyz'), '/api/v1/alerts/ack/[redacted]')
  t.equal(redactedUrl('/api/v1/users/me/on-call.ics?token=feed_secret&x=1'), '/api/v1/users/me/on-call.ics?token=[redacted]&x=1')
  t.equal(redactedUrl('/api/v1/synthetics/heartbeats/hb_secret/fail'), '/api/v1/synthetics/heartbeats/[redacted]/fail')
  t.equal(
    redactedUrl('/api/v1/statuspages/public/acme/history.atom?locale=de&audience=aud_secret'),
    '/api/v1/statuspages/public/acme/history.atom?locale=de&audience=[redacted]',
  )
  t.equal(
    redactedUrl('/api/v1/reports/r/file?expires=1764000000&signature=f00d'),
    '/api/v1/reports/r/file?expires=1764000000&signature=[redacted]',
    'a report link is a credential for 15 minutes',
  )
  t.equal(redactedUrl('/api/v1/organizations/o/alerts?page=2'), '/api/v1/organizations/o/alerts?page=2', 'other URLs stay as they are')
})
