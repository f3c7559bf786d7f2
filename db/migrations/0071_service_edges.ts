import { sql, type Kysely } from 'kysely'

// Frozen: see 0001.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The dependency map becomes edges between catalog services (issue 55): a service depends on
  // another, both rows of divinux.services, so renaming a key or adding an alias carries its edges.
  await sql`
    create table divinux.service_edges (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references core.organizations (id) on delete cascade,
      service_id uuid not null references divinux.services (id) on delete cascade,
      depends_on_id uuid not null references divinux.services (id) on delete cascade,
      created_by uuid references core.users (id) on delete set null,
      created_at timestamptz not null default now(),
      unique (service_id, depends_on_id),
      check (service_id <> depends_on_id)
    )`.execute(db)
  await sql`create index service_edges_organization_idx on divinux.service_edges (organization_id)`.execute(db)
  await sql`create index service_edges_depends_on_idx on divinux.service_edges (depends_on_id)`.execute(db)

  // Every name of the old map that no service answers to becomes a service: its key the name as a
  // slug, the name itself (lower-cased) an alias when the slug differs, so alerts carrying it still
  // find it, and its name as written. Names that slug alike become one service.
  await sql`
    create temporary table legacy_names as
    select distinct d.organization_id, btrim(n.name) as original, lower(btrim(n.name)) as name,
      coalesce(nullif(left(btrim(regexp_replace(lower(btrim(n.name)), '[^a-z0-9._-]+', '-', 'g'), '-._'), 63), ''),
        'service-' || left(md5(n.name), 8)) as key
    from divinux.service_dependencies d
    cross join lateral (values (d.service), (d.depends_on)) n(name)
    where not exists (
      select 1 from divinux.services s
      where s.organization_id = d.organization_id and (s.key = lower(btrim(n.name)) or lower(btrim(n.name)) = any(s.aliases)))`.execute(db)
  await sql`
    insert into divinux.services (organization_id, key, name)
    select distinct on (organization_id, key) organization_id, key, original from legacy_names
    order by organization_id, key, original
    on conflict (organization_id, key) do nothing`.execute(db)
  await sql`
    update divinux.services s set aliases = s.aliases || array(
      select distinct n.name from legacy_names n
      where n.organization_id = s.organization_id and n.key = s.key and n.name <> s.key and not n.name = any(s.aliases))
    where exists (select 1 from legacy_names n where n.organization_id = s.organization_id and n.key = s.key and n.name <> s.key)`.execute(
    db,
  )
  await sql`
    insert into divinux.service_edges (organization_id, service_id, depends_on_id, created_by, created_at)
    select d.organization_id, a.id, b.id, d.created_by, d.created_at
    from divinux.service_dependencies d
    join divinux.services a on a.organization_id = d.organization_id
      and (a.key = lower(btrim(d.service)) or lower(btrim(d.service)) = any(a.aliases))
    join divinux.services b on b.organization_id = d.organization_id
      and (b.key = lower(btrim(d.depends_on)) or lower(btrim(d.depends_on)) = any(b.aliases))
    where a.id <> b.id
    on conflict (service_id, depends_on_id) do nothing`.execute(db)
  await sql`drop table legacy_names`.execute(db)
  await sql`drop table divinux.service_dependencies`.execute(db)

  // The catalog answers to names whatever their case; correlation's dependency rule looks up open
  // links by the lower-cased service their alert carried.
  await sql`
    create index incident_alerts_open_lower_service_idx on divinux.incident_alerts (organization_id, lower(service), linked_at desc)
    where open`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists divinux.incident_alerts_open_lower_service_idx`.execute(db)
  await sql`
    create table divinux.service_dependencies (
      id uuid primary key default gen_random_uuid(),
      organization_id uuid not null references core.organizations(id) on delete cascade,
      service text not null,
      depends_on text not null,
      created_by uuid references core.users(id) on delete set null,
      created_at timestamptz not null default now(),
      unique (organization_id, service, depends_on),
      check (service <> depends_on)
    )`.execute(db)
  await sql`create index service_dependencies_depends_on_idx on divinux.service_dependencies (organization_id, depends_on)`.execute(db)
  await sql`
    insert into divinux.service_dependencies (organization_id, service, depends_on, created_by, created_at)
    select e.organization_id, a.key, b.key, e.created_by, e.created_at
    from divinux.service_edges e join divinux.services a on a.id = e.service_id join divinux.services b on b.id = e.depends_on_id`.execute(
    db,
  )
  await sql`drop table divinux.service_edges`.execute(db)
}
