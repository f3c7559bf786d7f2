import t from 'tap'
import { inviteRefusal, ownProductRolesRefusal, productRolesRefusal, removalRefusal, roleChangeRefusal } from '../src/role-policy.js'

t.test('an owner may give and take any role', async (t) => {
  for (const current of ['member', 'admin', 'owner', undefined] as const) {
    for (const next of ['member', 'admin', 'owner'] as const) t.equal(roleChangeRefusal('owner', current, next), undefined)
  }
  t.equal(removalRefusal('owner', 'owner'), undefined)
  t.equal(productRolesRefusal('owner', 'owner'), undefined)
})

t.test('an admin manages members and admins, but never an owner and never above admin', async (t) => {
  t.equal(roleChangeRefusal('admin', 'member', 'admin'), undefined)
  t.equal(roleChangeRefusal('admin', 'admin', 'member'), undefined)
  t.equal(roleChangeRefusal('admin', undefined, 'admin'), undefined)
  t.equal(roleChangeRefusal('admin', 'owner', 'admin'), 'only an owner can change an owner')
  t.equal(roleChangeRefusal('admin', 'admin', 'owner'), 'only an owner can grant the owner role')
  t.equal(roleChangeRefusal('admin', undefined, 'owner'), 'only an owner can grant the owner role')
  t.equal(removalRefusal('admin', 'admin'), undefined)
  t.equal(removalRefusal('admin', 'owner'), 'only an owner can remove an owner')
  t.equal(productRolesRefusal('admin', 'member'), undefined)
  t.equal(productRolesRefusal('admin', 'owner'), 'only an owner can change an owner')
})

t.test('a member manages nobody', async (t) => {
  t.ok(roleChangeRefusal('member', 'member', 'member'))
  t.ok(removalRefusal('member', 'member'))
  t.ok(productRolesRefusal('member', 'member'))
})

t.test('inviting: admins and owners by the organization rule, a product admin plain members in their products', async (t) => {
  t.equal(inviteRefusal('owner', [], 'owner', { alerting: 'admin' }), undefined)
  t.equal(inviteRefusal('admin', [], 'admin', { insights: 'viewer' }), undefined, 'an admin grants any product role')
  t.equal(inviteRefusal('admin', [], 'owner', {}), 'only an owner can grant the owner role')
  t.equal(inviteRefusal('member', ['alerting'], 'member', { alerting: 'admin' }), undefined)
  t.equal(inviteRefusal('member', ['alerting'], 'member', {}), undefined, 'no product role at all')
  t.equal(
    inviteRefusal('member', ['alerting'], 'member', { alerting: 'viewer', synthetics: 'viewer' }),
    'only an admin of synthetics grants synthetics roles',
  )
  t.equal(inviteRefusal('member', ['alerting'], 'admin', {}), 'only admins and owners invite with the organization role admin or owner')
  t.equal(
    inviteRefusal('member', 'all', 'member', { statuspages: 'manager', insights: 'admin' }),
    undefined,
    'platform roles administer every product',
  )
  t.equal(inviteRefusal('member', 'all', 'owner', {}), 'only admins and owners invite with the organization role admin or owner')
})

t.test('an admin may lower their own product roles but never raise them', async (t) => {
  t.equal(ownProductRolesRefusal('admin', { alerting: 'manager' }, { alerting: 'viewer' }), undefined)
  t.equal(ownProductRolesRefusal('admin', { alerting: 'manager' }, {}), undefined)
  t.equal(ownProductRolesRefusal('admin', { alerting: 'manager' }, { alerting: 'manager' }), undefined)
  t.ok(ownProductRolesRefusal('admin', { alerting: 'manager' }, { alerting: 'admin' }))
  t.ok(ownProductRolesRefusal('admin', {}, { insights: 'viewer' }))
  t.equal(ownProductRolesRefusal('owner', {}, { insights: 'admin' }), undefined)
})
