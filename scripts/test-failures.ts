// The failures of one tap pass, by file and test, for the end of `pnpm test`'s output.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { sourcePathOf } from '@svc/testkit'

export interface Failure {
  file: string
  pass: string
  tests: string[]
}

/**
 * What failed in one pass, read back from tap's per-file results (`.tap/test-results`), so the end
 * of the run names it: CI keeps only the tail of a long log, and the next pass overwrites the files.
 */
export async function failuresOf(output: string, pass: string, resultsFolder: string): Promise<Failure[]> {
  const failures: Failure[] = []
  for (const [, built = ''] of output.matchAll(/^not ok \d+ - (\S+)/gm)) {
    const results = await readFile(path.join(resultsFolder, `${built}.tap`), 'utf8').catch(() => '')
    const open: string[] = []
    const failed: Array<{ name: string; at?: string }> = []
    let fileName: string | undefined
    for (const line of results.split('\n')) {
      const subtest = /^( *)# Subtest: (.*)$/.exec(line)
      if (subtest?.[1] !== undefined && subtest[2] !== undefined) open.splice(subtest[1].length / 4, Infinity, subtest[2])
      const notOk = /^( *)not ok \d+ - (.*?)(?: # time=.*)?$/.exec(line)
      if (notOk?.[1] !== undefined && notOk[2] !== undefined) {
        const depth = notOk[1].length / 4
        // A failed subtest's own line repeats the name its `# Subtest:` line gave.
        const name = open[depth] === notOk[2] ? open.slice(0, depth + 1) : [...open.slice(0, depth), notOk[2]]
        failed.push({ name: name.join(' › ') })
        fileName = undefined
        continue
      }
      // The failure's YAML block says where: `at: { fileName, lineNumber }`.
      const last = failed.at(-1)
      const at = /^ +(fileName|lineNumber): (.*)$/.exec(line)
      if (!last || last.at || !at) continue
      if (at[1] === 'fileName') fileName = at[2]
      else if (fileName) last.at = `${fileName}:${at[2]}`
    }
    // A subtest fails because of what failed inside it: name the innermost failures only.
    const tests = failed
      .filter(({ name }) => !failed.some((other) => other.name.startsWith(`${name} › `)))
      .map(({ name, at }) => (at ? `${name} (${at})` : name))
    failures.push({ file: sourcePathOf(built), pass, tests })
  }
  return failures
}
