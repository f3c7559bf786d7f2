import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // On-call schedules (issue 14): a time zone and ordered layers of rotations. The layers are one
  // document, read and replaced whole, and computed from in TypeScript (oncall/schedules/rotation.ts).
  await db.schema
    .withSchema('divinux')
    .createTable('schedules')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull().check(sql`length(name) between 1 and 100`))
    .addColumn('description', 'text')
    .addColumn('time_zone', 'text', (col) => col.notNull())
    .addColumn('layers', 'jsonb', (col) => col.notNull())
    .addColumn('created_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create unique index schedules_org_name_idx on divinux.schedules (organization_id, lower(name))`.execute(db)

  // A person on call instead of whoever the layers say, for a range; a schedule's overrides never overlap.
  await db.schema
    .withSchema('divinux')
    .createTable('schedule_overrides')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('schedule_id', 'uuid', (col) => col.notNull().references('divinux.schedules.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (col) => col.notNull().references('core.users.id').onDelete('cascade'))
    .addColumn('starts_at', 'timestamptz', (col) => col.notNull())
    .addColumn('ends_at', 'timestamptz', (col) => col.notNull())
    .addColumn('created_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('schedule_overrides_range', sql`starts_at < ends_at`)
    .execute()
  await db.schema
    .withSchema('divinux')
    .createIndex('schedule_overrides_range_idx')
    .on('schedule_overrides')
    .columns(['schedule_id', 'ends_at'])
    .execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('divinux').dropTable('schedule_overrides').ifExists().execute()
  await db.schema.withSchema('divinux').dropTable('schedules').ifExists().execute()
}
