// The one place that names generated row types; code imports these aliases, never
// generated.ts directly, so a regenerated file changes nothing else.
import type { Insertable, Selectable, Updateable } from 'kysely'
import type { DB } from './generated.js'

export type UserRow = Selectable<DB['core.users']>
export type NewUser = Insertable<DB['core.users']>
export type UserUpdate = Updateable<DB['core.users']>

export type OrganizationRow = Selectable<DB['core.organizations']>
export type OrganizationMemberRow = Selectable<DB['core.organizationMembers']>
export type OrgProductRoleRow = Selectable<DB['core.orgProductRoles']>
export type SubscriptionRow = Selectable<DB['core.subscriptions']>
export type OrgProductSubscriptionRow = Selectable<DB['core.orgProductSubscriptions']>
