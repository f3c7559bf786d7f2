import { ESLint } from 'eslint'
import t from 'tap'
import { workspaceRoot } from '@svc/testkit'

// The alerting modules' order is kept by the lint configuration (eslint.config.js): these are the
// imports it must refuse and the ones it must let through, linted as files of those modules.
const eslint = new ESLint({ cwd: workspaceRoot() })

async function problemsOf(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: `plugins/alerting/src/${file}` })
  return (result?.messages ?? []).filter((message) => message.ruleId === 'no-restricted-imports').map((message) => message.message)
}

t.test('a module that imports one above it is refused, naming the order', async (t) => {
  t.match(await problemsOf('alerts/fire.ts', "import { REOPEN_MINUTES } from '../incidents/correlation/rules.js'\nvoid REOPEN_MINUTES\n"), [
    /alerts sits below incidents/,
  ])
  t.match(
    await problemsOf('oncall/policies/routes.ts', "import { configUsingPolicy } from '../../intake/index.js'\nvoid configUsingPolicy\n"),
    [/oncall sits below intake/],
  )
})

t.test('a module that reaches past a lower one’s door is refused', async (t) => {
  t.match(await problemsOf('paging/page.ts', "import { findAlert } from '../alerts/queries.js'\nvoid findAlert\n"), [
    /through its door, alerts\/index.js/,
  ])
})

t.test('the alerting root composes the modules through their doors', async (t) => {
  t.match(await problemsOf('index.ts', "import { alertRoutes } from './alerts/routes.js'\nvoid alertRoutes\n"), [
    /through its door, alerts\/index.js/,
  ])
  t.same(await problemsOf('index.ts', "import { alertsModule } from './alerts/index.js'\nvoid alertsModule\n"), [])
})

t.test('imports through a lower door, and within a module, pass', async (t) => {
  t.same(
    await problemsOf(
      'paging/page.ts',
      "import { findAlert } from '../alerts/index.js'\nimport { CHAT_QUEUE } from './queues.js'\nvoid findAlert\nvoid CHAT_QUEUE\n",
    ),
    [],
  )
})
