import { sql } from 'kysely'
import type { Executor } from '@svc/db'

const secretColumns = ['id', 'name', 'createdAt', 'updatedAt'] as const

export async function listSecrets(db: Executor, organizationId: string) {
  return db
    .selectFrom('divinux.syntheticSecrets')
    .select(secretColumns)
    .where('organizationId', '=', organizationId)
    .orderBy('name')
    .execute()
}

/** Creates the secret, or replaces its value when the name exists; answers whether it was new. */
export async function putSecret(db: Executor, organizationId: string, name: string, sealed: Buffer, createdBy: string) {
  return db
    .insertInto('divinux.syntheticSecrets')
    .values({ organizationId, name, sealed, createdBy })
    .onConflict((conflict) => conflict.columns(['organizationId', 'name']).doUpdateSet({ sealed, updatedAt: sql<Date>`now()` }))
    .returning([...secretColumns, sql<boolean>`xmax = 0`.as('created')])
    .executeTakeFirstOrThrow()
}

export async function deleteSecret(db: Executor, organizationId: string, name: string) {
  const result = await db
    .deleteFrom('divinux.syntheticSecrets')
    .where('organizationId', '=', organizationId)
    .where('name', '=', name)
    .executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** The sealed values of the named secrets of an organization. */
export async function sealedSecrets(db: Executor, organizationId: string, names: readonly string[]) {
  if (names.length === 0) return []
  return db
    .selectFrom('divinux.syntheticSecrets')
    .select(['name', 'sealed'])
    .where('organizationId', '=', organizationId)
    .where('name', 'in', names)
    .execute()
}
