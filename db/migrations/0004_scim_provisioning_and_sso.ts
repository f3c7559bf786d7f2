import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A SCIM User is a membership: every member of an organization is one, whether an identity
  // provider created it or not, so the provider can find existing people by userName.
  await db.schema
    .withSchema('core')
    .alterTable('organization_members')
    // SCIM userName, unique per organization case-insensitively, stored as sent. A member who
    // joined without SCIM gets their e-mail (trigger below).
    .addColumn('user_name', 'text')
    .addColumn('external_id', 'text')
    // The rest of the SCIM User as the provider sent it (name, emails, phone numbers, the
    // enterprise extension...), so a read-modify-PUT gives back what it wrote.
    .addColumn('scim_attributes', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    // Set by the provider's active=false: the membership grants nothing, its data stays.
    .addColumn('suspended_at', 'timestamptz')
    // The SCIM token that created the member, when one did.
    .addColumn('provisioned_by_token_id', 'uuid', (col) => col.references('core.scim_tokens.id').onDelete('set null'))
    .execute()
  await sql`update core.organization_members m set user_name = u.email from core.users u where u.id = m.user_id`.execute(db)
  await sql`alter table core.organization_members alter column user_name set not null`.execute(db)
  await sql`
    create function core.organization_member_default_user_name() returns trigger language plpgsql as $$
    begin
      if new.user_name is null then
        select email into new.user_name from core.users where id = new.user_id;
      end if;
      return new;
    end
    $$`.execute(db)
  await sql`
    create trigger organization_member_default_user_name before insert on core.organization_members
    for each row execute function core.organization_member_default_user_name()`.execute(db)
  // text_pattern_ops: the same index answers `userName eq` and `userName sw` filters.
  await sql`create unique index organization_members_user_name_key on core.organization_members (organization_id, lower(user_name) text_pattern_ops)`.execute(
    db,
  )
  await sql`create index organization_members_external_id_idx on core.organization_members (organization_id, external_id)`.execute(db)
  // Filters on e-mails (`emails[type eq "work"].value eq ...`) find their rows through this
  // index of the lower-cased e-mail values, then check the element's other conditions.
  await sql`
    create function core.scim_email_values(emails jsonb) returns text[] language sql immutable parallel safe as $$
      select coalesce(array_agg(lower(element ->> 'value')), '{}')
      from jsonb_array_elements(case when jsonb_typeof(emails) = 'array' then emails else '[]'::jsonb end) as element
    $$`.execute(db)
  await sql`create index organization_members_scim_emails_idx on core.organization_members using gin (core.scim_email_values(scim_attributes -> 'emails'))`.execute(
    db,
  )
  // SCIM pages are ordered by creation, then id: stable while members come and go.
  await sql`create index organization_members_org_created_idx on core.organization_members (organization_id, created_at, id)`.execute(db)

  await db.schema
    .withSchema('core')
    .createTable('scim_groups')
    .addColumn('id', 'uuid', (col) => col.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    .addColumn('display_name', 'text', (col) => col.notNull())
    .addColumn('external_id', 'text')
    // What membership of the group grants: product roles, e.g. {"alerting": "responder"}.
    .addColumn('product_roles', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
  await sql`create unique index scim_groups_display_name_key on core.scim_groups (organization_id, lower(display_name))`.execute(db)
  await sql`create index scim_groups_org_created_idx on core.scim_groups (organization_id, created_at, id)`.execute(db)

  await db.schema
    .withSchema('core')
    .createTable('scim_group_members')
    .addColumn('group_id', 'uuid', (col) => col.notNull().references('core.scim_groups.id').onDelete('cascade'))
    .addColumn('member_id', 'uuid', (col) => col.notNull().references('core.organization_members.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (col) => col.notNull().references('core.organizations.id').onDelete('cascade'))
    // The member's `display` as the provider sent it; answered instead of the userName when set.
    .addColumn('display', 'text')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('scim_group_members_pkey', ['group_id', 'member_id'])
    .execute()
  await sql`create index scim_group_members_member_idx on core.scim_group_members (organization_id, member_id)`.execute(db)

  await db.schema
    .withSchema('core')
    .createTable('sso_configs')
    .addColumn('organization_id', 'uuid', (col) => col.primaryKey().references('core.organizations.id').onDelete('cascade'))
    .addColumn('idp_entity_id', 'text', (col) => col.notNull())
    .addColumn('idp_sso_url', 'text', (col) => col.notNull())
    // PEM of the identity provider's signing certificate, and when it stops being valid.
    .addColumn('idp_certificate', 'text', (col) => col.notNull())
    .addColumn('idp_certificate_expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('idp_metadata_xml', 'text')
    .addColumn('allowed_domains', sql`text[]`, (col) => col.notNull().defaultTo(sql`'{}'::text[]`))
    .addColumn('created_by', 'uuid', (col) => col.references('core.users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute()
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('core').dropTable('sso_configs').ifExists().execute()
  await db.schema.withSchema('core').dropTable('scim_group_members').ifExists().execute()
  await db.schema.withSchema('core').dropTable('scim_groups').ifExists().execute()
  await sql`drop index if exists core.organization_members_scim_emails_idx`.execute(db)
  await sql`drop function if exists core.scim_email_values(jsonb)`.execute(db)
  await sql`drop trigger if exists organization_member_default_user_name on core.organization_members`.execute(db)
  await sql`drop function if exists core.organization_member_default_user_name()`.execute(db)
  await sql`
    alter table core.organization_members
      drop column if exists user_name, drop column if exists external_id, drop column if exists scim_attributes,
      drop column if exists suspended_at, drop column if exists provisioned_by_token_id`.execute(db)
}
