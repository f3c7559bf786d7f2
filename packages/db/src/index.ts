export { dumpEmbedded, openDatabase, type Database, type DatabaseOptions } from './connect.js'
export { migrateToLatest } from './migrate.js'
export { keptPrepared } from './kept-statements.js'
export {
  ChangeNotices,
  CHANGES_CHANNEL,
  keptAnswers,
  type ChangeScope,
  type KeptAnswers,
  type KeptAnswersOptions,
} from './change-notices.js'
export { DueNotices, DUE_CHANNEL, type DueHandler } from './due-notices.js'
export { PGlitePool, STATEMENTS_KEPT, type SqlExecutor } from './pglite-pool.js'
export type { Executor } from './executor.js'
// Every generated table type, so declarations that infer row types can name them.
export type * from './generated.js'
export { containing, escapeLike, pageOf, paged, type Page } from './paging.js'
export { jsonb, jsonColumn } from './json.js'
export { lockUntilCommit } from './lock.js'
export { createGroupCommit, type GroupCommitOptions } from './group-commit.js'
export { deleteInBatches, PRUNE_BATCH } from './prune.js'
export { dropMonthlyPartitionsBefore, ensureMonthlyPartitions, monthlyPartitions, type PartitionedTable } from './partitions.js'
