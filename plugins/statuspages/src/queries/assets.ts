import { sql } from 'kysely'
import type { Executor } from '@svc/db'
import type { AssetKind, CheckedAsset } from '../branding/assets.js'

/** Sets the page's logo or favicon, replacing the one it had. */
export async function putAsset(
  db: Executor,
  page: { id: string; organizationId: string },
  kind: AssetKind,
  asset: CheckedAsset,
  bytes: Buffer,
) {
  const values = { contentType: asset.contentType, bytes, sha256: asset.sha256, width: asset.width, height: asset.height }
  await db
    .insertInto('divinux.statusPageAssets')
    .values({ pageId: page.id, organizationId: page.organizationId, kind, ...values })
    .onConflict((conflict) => conflict.columns(['pageId', 'kind']).doUpdateSet({ ...values, createdAt: sql<Date>`now()` }))
    .execute()
}

export async function deleteAsset(db: Executor, pageId: string, kind: AssetKind): Promise<boolean> {
  const removed = await db
    .deleteFrom('divinux.statusPageAssets')
    .where('pageId', '=', pageId)
    .where('kind', '=', kind)
    .returning('id')
    .execute()
  return removed.length > 0
}

/** The page's asset whose hash starts with `prefix` (its file name), with its bytes. */
export async function assetByHash(db: Executor, pageId: string, prefix: string) {
  return db
    .selectFrom('divinux.statusPageAssets')
    .select(['contentType', 'bytes', 'sha256'])
    .where('pageId', '=', pageId)
    .where(sql<boolean>`left(sha256, ${prefix.length}) = ${prefix}`)
    .executeTakeFirst()
}
