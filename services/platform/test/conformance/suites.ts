import { readFileSync } from 'node:fs'

/**
 * The public SCIM conformance suites identity providers certify against, copied unchanged from
 * the specification's `conformance/scim` folder (sources in SOURCES.md beside this file), so a
 * clean clone replays them.
 */
export function readSuite<T>(file: 'okta-scim-spec-test.json' | 'azure-scim-reference-postman.json'): T {
  return JSON.parse(readFileSync(new URL(file, import.meta.url), 'utf8')) as T
}
