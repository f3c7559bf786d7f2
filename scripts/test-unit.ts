// `pnpm test:unit [tap options] [test files…]`: the test build (scripts/test-build.ts), then tap on
// the built files. A test named by its TypeScript path runs as its build; with no file, tap runs
// every built test. The database is PGlite unless TEST_DATABASE_URL names a server.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { builtPathOf } from '@svc/testkit'
import { buildForTests } from './test-build.js'

const root = process.cwd()
await buildForTests(root)
const args = process.argv.slice(2).map((arg) => (arg.endsWith('.ts') ? builtPathOf(path.relative(root, path.resolve(arg))) : arg))
const tap = spawn('tap', args, { stdio: 'inherit' })
tap.once('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
