import { randomBytes } from 'node:crypto'
import type { Executor } from '@svc/db'

/** A screenshot an attempt of a run took, to store with the run. */
export interface Screenshot {
  runId: string
  organizationId: string
  attempt: number
  png: Buffer
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
