// Regenerates packages/db/src/generated.ts from the migrated schema, or with --check fails
// when the checked-in file differs from what the migrations produce (CI runs the check).
import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { Kysely, PostgresDialect as KyselyPostgresDialect } from 'kysely'
import { PostgresDialect, generate } from 'kysely-codegen'
import { migrateToLatest, openDatabase } from '@svc/db'

const outFile = fileURLToPath(new URL('../packages/db/src/generated.ts', import.meta.url))
const check = process.argv.includes('--check')

const database = await openDatabase({})
try {
  await migrateToLatest(database.db)
  // Introspection wants plain snake_case names, so a Kysely without the CamelCasePlugin.
  const introspection = new Kysely<unknown>({ dialect: new KyselyPostgresDialect({ pool: database.pool }) })
  const source = await generate({
    // kysely-codegen is typed against its own copy of Kysely; the instances are compatible.
    db: introspection as unknown as Parameters<typeof generate>[0]['db'],
    dialect: new PostgresDialect(),
    camelCase: true,
    includePattern: '(core|divinux).*',
    typeMapping: { int8: 'number' },
    // A trigger fills a member's userName from their e-mail when an insert leaves it out.
    overrides: { columns: { 'core.organization_members.user_name': 'Generated<string>' } },
    print: false,
    outFile: null,
  })
  if (check) {
    const current = await readFile(outFile, 'utf8').catch(() => '')
    if (current !== source) {
      console.error('packages/db/src/generated.ts is stale: run `pnpm db:codegen` and commit the result')
      process.exitCode = 1
    } else {
      console.log('generated database types are up to date')
    }
  } else {
    await writeFile(outFile, source)
    console.log(`wrote ${outFile}`)
  }
} finally {
  await database.close()
}
