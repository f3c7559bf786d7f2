import { readFile } from 'node:fs/promises'
import { answered } from './api.js'
import type { Context } from './kind.js'

/**
 * `import-backstage <catalog-info.yaml>`: the file's Components and Systems become services of
 * the catalog, through the API (`POST …/services/import/backstage`), which keeps importing
 * idempotent; what it created, changed and warned of is printed.
 */
export async function importBackstage({ connection: { api, orgId }, say }: Context, file: string): Promise<void> {
  const catalog = await readFile(file, 'utf8')
  const result = await answered(
    api.POST('/api/v1/organizations/{orgId}/services/import/backstage', {
      params: { path: { orgId } },
      body: catalog,
      bodySerializer: (body: string) => body,
      headers: { 'content-type': 'application/yaml' },
    }),
    `importing ${file}`,
  )
  for (const key of result.created) say(`created service ${key}`)
  for (const key of result.updated) say(`changed service ${key}`)
  for (const warning of result.warnings) say(`warning: ${warning}`)
  say(`${result.created.length} created, ${result.updated.length} changed, ${result.unchanged.length} unchanged`)
}
