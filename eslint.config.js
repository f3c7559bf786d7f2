import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import regexp from 'eslint-plugin-regexp'

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
)
