import type { Executor } from '@svc/db'

export interface ProfileChanges {
  displayName?: string | null
  timeZone?: string | null
}

export async function profileFields(db: Executor, userId: string) {
  return db.selectFrom('core.users').select(['displayName', 'timeZone']).where('id', '=', userId).executeTakeFirst()
}

export async function updateProfile(db: Executor, userId: string, changes: ProfileChanges) {
  return db
    .updateTable('core.users')
    .set({ ...changes, updatedAt: new Date() })
    .where('id', '=', userId)
    .returning(['displayName', 'name', 'givenName', 'familyName', 'timeZone', 'isEmployee', 'platformRole'])
    .executeTakeFirstOrThrow()
}
