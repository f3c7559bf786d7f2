import t from 'tap'
import { productRolesRefusal, removalRefusal, roleChangeRefusal } from '../src/members/role-policy.js'

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
