import { sql, type Kysely } from 'kysely'

// Frozen: a migration describes the schema as it was on the day it shipped. Never edit it;
// add a new one. `Kysely<any>` on purpose: the generated types describe today's schema.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create schema if not exists core`.execute(db)
  await sql`create schema if not exists divinux`.execute(db)

  await db.schema
    .withSchema('core')
    .createTable('users')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    // Subject (`sub`) at the identity provider; null for a user invited before first sign-in.
    .addColumn('idp_subject', 'text', (col) => col.unique())
    .addColumn('email', 'text', (col) => col.notNull())
    .addColumn('display_name', 'text')
    .addColumn('time_zone', 'text')
    .addColumn('is_employee', 'boolean', (col) => col.notNull().defaultTo(false))
    // Platform-wide role: GLOBAL_ADMIN and ADMIN bypass product-role checks.
    .addColumn('platform_role', 'text', (col) => col.check(sql`platform_role in ('GLOBAL_ADMIN', 'ADMIN')`))
    .addColumn('last_seen_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create index users_email_lower_idx on core.users (lower(email))`.execute(db)

  await db.schema
    .withSchema('core')
    .createTable('organizations')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('slug', 'text', (col) => col.notNull().unique())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()

  await db.schema
    .withSchema('core')
    .createTable('organization_members')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('core.users.id').onDelete('cascade'))
    .addColumn('role', 'text', (col) => col.notNull().check(sql`role in ('member', 'admin', 'owner')`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('organization_members_org_user_key', ['organization_id', 'user_id'])
    .execute()
  await sql`create index organization_members_user_idx on core.organization_members (user_id)`.execute(db)

  await db.schema
    .withSchema('core')
    .createTable('org_product_roles')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('member_id', 'uuid', (col) => col.notNull().references('core.organization_members.id').onDelete('cascade'))
    .addColumn('product', 'text', (col) => col.notNull().check(sql`product in ('statuspages', 'alerting', 'synthetics', 'insights')`))
    .addColumn('role', 'text', (col) => col.notNull().check(sql`role in ('viewer', 'responder', 'manager', 'admin')`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('org_product_roles_member_product_key', ['member_id', 'product'])
    .execute()
  await sql`create index org_product_roles_org_idx on core.org_product_roles (organization_id)`.execute(db)

  // Legacy per-user billing, kept for accounts that predate organization billing.
  await db.schema
    .withSchema('core')
    .createTable('subscriptions')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('organization_id', 'uuid', (col) => col.references('core.organizations.id').onDelete('cascade'))
    .addColumn('plan', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('stripe_customer_id', 'text')
    .addColumn('stripe_subscription_id', 'text', (col) => col.unique())
    .addColumn('current_period_end', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create index subscriptions_user_idx on core.subscriptions (user_id)`.execute(db)
  await sql`create index subscriptions_org_idx on core.subscriptions (organization_id)`.execute(db)

  await db.schema
    .withSchema('core')
    .createTable('org_product_subscriptions')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('product', 'text', (col) => col.notNull().check(sql`product in ('statuspages', 'alerting', 'synthetics', 'bundle')`))
    .addColumn('plan', 'text', (col) => col.notNull().check(sql`plan in ('team', 'business', 'enterprise')`))
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('stripe_customer_id', 'text')
    .addColumn('stripe_subscription_id', 'text')
    .addColumn('current_period_end', 'timestamptz')
    .addColumn('cancel_at_period_end', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('org_product_subscriptions_org_product_key', ['organization_id', 'product'])
    .execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop schema if exists core cascade`.execute(db)
  await sql`drop schema if exists divinux cascade`.execute(db)
}
