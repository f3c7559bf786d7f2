// Regenerates packages/client/src/generated/{platform,product}.ts from the services' OpenAPI
// documents, or with --check fails when a checked-in file differs from what the routes produce.
import { readFile, writeFile } from 'node:fs/promises'
import { documentOf, generatedFile, services, typesOf, type ServiceName } from '../packages/client/codegen/generate.js'

const check = process.argv.includes('--check')
for (const service of Object.keys(services) as ServiceName[]) {
  const source = await typesOf(await documentOf(service))
  const file = generatedFile(service)
  if (check) {
    if ((await readFile(file, 'utf8').catch(() => '')) !== source) {
      console.error(`${file} is stale: run \`pnpm client:generate\` and commit the result`)
      process.exitCode = 1
    }
  } else {
    await writeFile(file, source)
    console.log(`wrote ${file}`)
  }
}
