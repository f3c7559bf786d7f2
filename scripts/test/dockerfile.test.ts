import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { workspaceRoot } from '@svc/testkit'

const root = workspaceRoot()

// The image installs dependencies from the manifests alone (a cached layer), so a workspace
// package whose manifest the Dockerfile does not copy builds an image without its dependencies.
t.test('the Dockerfile copies the manifest of every workspace package before installing', async (t) => {
  const dockerfile = await readFile(path.join(root, 'Dockerfile'), 'utf8')
  const copied = new Set([...dockerfile.matchAll(/^COPY (\S+\/package\.json) /gm)].map((match) => match[1]))
  for (const group of ['packages', 'plugins', 'services']) {
    for (const name of await readdir(path.join(root, group))) t.ok(copied.has(`${group}/${name}/package.json`), `${group}/${name}`)
  }
  t.ok(copied.has('db/package.json'), 'db')
  t.ok(copied.has('bench/package.json'), 'bench')
})
