import { randomBytes } from 'node:crypto'
import type { AttemptResult } from '@svc/check-runner'
import type { Executor } from '@svc/db'

/** A screenshot an attempt of a run took, to store with the run. */
export interface Screenshot {
  runId: string
  organizationId: string
  attempt: number
  png: Buffer
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/**
 * The screenshots the attempts of recorded runs carry, each run's organization known. Only PNGs:
 * the link serves them as `image/png`, and a relay's upload is bytes until looked at.
 */
export function screenshotsOf(
  results: ReadonlyArray<{ runId: string; attempts: readonly AttemptResult[] }>,
  organizationOfRun: ReadonlyMap<string, string>,
): Screenshot[] {
  return results.flatMap(({ runId, attempts }) => {
    const organizationId = organizationOfRun.get(runId)
    if (!organizationId) return []
    return attempts.flatMap((attempt, index) => {
      const png = attempt.screenshot ? Buffer.from(attempt.screenshot, 'base64') : undefined
      return png?.subarray(0, 8).equals(PNG_SIGNATURE) ? [{ runId, organizationId, attempt: index, png }] : []
    })
  })
}

/** Stores screenshots, each with the key its links are signed with (a run recorded twice keeps its first). */
export async function insertScreenshots(db: Executor, screenshots: readonly Screenshot[]): Promise<void> {
  if (screenshots.length === 0) return
  await db
    .insertInto('divinux.syntheticScreenshots')
    .values(screenshots.map((screenshot) => ({ ...screenshot, linkKey: randomBytes(32) })))
    .onConflict((conflict) => conflict.columns(['runId', 'attempt']).doNothing())
    .execute()
}

/** The screenshots of these runs (not the images): what their links are made of. */
export async function screenshotsOfRuns(db: Executor, organizationId: string, runIds: readonly string[]) {
  if (runIds.length === 0) return []
  return db
    .selectFrom('divinux.syntheticScreenshots')
    .select(['id', 'runId', 'attempt', 'linkKey'])
    .where('organizationId', '=', organizationId)
    .where('runId', 'in', runIds)
    .execute()
}

/** A screenshot by id alone: its signed link is what authorises reading it. */
export async function screenshotById(db: Executor, id: string) {
  return db.selectFrom('divinux.syntheticScreenshots').select(['png', 'linkKey']).where('id', '=', id).executeTakeFirst()
}
