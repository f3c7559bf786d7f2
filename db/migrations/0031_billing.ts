import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Billing through Stripe (issue 17). One Stripe customer per organization and one per person
  // (personal subscriptions), created on the first checkout and reused after.
  await db.schema
    .withSchema('core')
    .createTable('billing_customers')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.references('core.organizations.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (col) => col.references('core.users.id').onDelete('cascade'))
    .addColumn('stripe_customer_id', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('billing_customers_one_owner_check', sql`(organization_id is null) <> (user_id is null)`)
    .execute()
  await sql`create unique index billing_customers_stripe_idx on core.billing_customers (stripe_customer_id)`.execute(db)
  await sql`create unique index billing_customers_org_idx on core.billing_customers (organization_id) where organization_id is not null`.execute(
    db,
  )
  await sql`create unique index billing_customers_user_idx on core.billing_customers (user_id) where user_id is not null`.execute(db)

  // Every Stripe event applied, by id, written in the transaction of its effect: a redelivered
  // event finds its id and changes nothing.
  await db.schema
    .withSchema('core')
    .createTable('billing_events')
    .addColumn('event_id', 'text', (col) => col.primaryKey())
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull())
    .addColumn('processed_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()

  // A subscription row remembers when Stripe said what it holds, so an older event arriving late
  // never moves it backwards. Personal subscriptions (core.subscriptions) name their product.
  await db.schema.withSchema('core').alterTable('org_product_subscriptions').addColumn('provider_updated_at', 'timestamptz').execute()
  await db.schema.withSchema('core').alterTable('subscriptions').addColumn('product', 'text').execute()
  await db.schema.withSchema('core').alterTable('subscriptions').addColumn('provider_updated_at', 'timestamptz').execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('core').alterTable('subscriptions').dropColumn('provider_updated_at').execute()
  await db.schema.withSchema('core').alterTable('subscriptions').dropColumn('product').execute()
  await db.schema.withSchema('core').alterTable('org_product_subscriptions').dropColumn('provider_updated_at').execute()
  await db.schema.withSchema('core').dropTable('billing_events').ifExists().execute()
  await db.schema.withSchema('core').dropTable('billing_customers').ifExists().execute()
}
