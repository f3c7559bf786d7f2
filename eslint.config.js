import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import regexp from 'eslint-plugin-regexp'

// The alerting modules, lowest first (docs/alerting.md): each may import only those below it, and
// those only through their door (`index.js`), so none reaches up or into another's files.
const alertingModules = ['alerts', 'oncall', 'destinations', 'intake', 'incidents', 'paging', 'chat', 'workflows']
const alertingFence = alertingModules.map((module, rank) => ({
  files: [`plugins/alerting/src/${module}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          ...alertingModules.slice(rank + 1).map((higher) => ({
            group: [`**/${higher}/**`, `../${higher}`, `../../${higher}`],
            message: `${module} sits below ${higher}: pass what it needs in from the alerting root (plugins/alerting/src/index.ts)`,
          })),
          ...alertingModules.slice(0, rank).map((lower) => ({
            group: [`**/${lower}/**`, `!**/${lower}/index.js`],
            message: `import ${lower} through its door, ${lower}/index.js`,
          })),
        ],
      },
    ],
  },
}))

// The alerting root (index.ts and the published reads beside it) composes the modules through
// their doors too.
const alertingRoot = {
  files: ['plugins/alerting/src/*.ts'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: alertingModules.map((module) => ({
          group: [`**/${module}/**`, `!**/${module}/index.js`],
          message: `import ${module} through its door, ${module}/index.js`,
        })),
      },
    ],
  },
}

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/.tap/**',
      '**/coverage/**',
      '**/dist/**',
      '**/.test-build/**',
      '.data/**',
      'packages/db/src/generated.ts',
      'packages/client/src/generated/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    // Patterns run on what users send must match in linear time (issue 51: two took seconds on
    // crafted input). These two rules find quantifiers that can trade characters, and unanchored
    // patterns whose start can move across a run, in every literal pattern.
    plugins: { regexp },
    rules: {
      'regexp/no-super-linear-backtracking': 'error',
      'regexp/no-super-linear-move': 'error',
    },
  },
  ...alertingFence,
  alertingRoot,
)
