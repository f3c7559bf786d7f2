import { readFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { workspaceRoot } from '@svc/testkit'
import { fileSchema, kinds } from '../src/index.js'

// The JSON Schemas the package publishes (packages/cli/schemas, for editors) are what the CLI
// checks files against; `pnpm cli schemas packages/cli/schemas` writes them again.
t.test('the published schemas are the files’ schemas', async (t) => {
  for (const kind of kinds) {
    const published = await readFile(path.join(workspaceRoot(), 'packages/cli/schemas', `${kind.key}.json`), 'utf8')
    t.same(JSON.parse(published), fileSchema(kind), `${kind.key}.json: run \`pnpm cli schemas packages/cli/schemas\` when this fails`)
  }
})

t.test('a field with a default may be left out of a file', async (t) => {
  const teams = fileSchema(kinds.find((kind) => kind.key === 'teams')!) as {
    required?: string[]
    properties: { teams: { items: { required: string[] } } }
  }
  t.equal(teams.required, undefined)
  t.same(teams.properties.teams.items.required, ['name'])
})
