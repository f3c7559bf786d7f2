import { sql } from 'kysely'
import type { Executor } from '@svc/db'

const ssoColumns = [
  'idpEntityId',
  'idpSsoUrl',
  'idpCertificate',
  'idpCertificateExpiresAt',
  'allowedDomains',
  'createdAt',
  'updatedAt',
] as const

export type SsoConfigRow = NonNullable<Awaited<ReturnType<typeof findSsoConfig>>>

export async function findSsoConfig(db: Executor, organizationId: string) {
  return db.selectFrom('core.ssoConfigs').select(ssoColumns).where('organizationId', '=', organizationId).executeTakeFirst()
}

export interface SsoConfigValues {
  idpEntityId: string
  idpSsoUrl: string
  idpCertificate: string
  idpCertificateExpiresAt: Date
  idpMetadataXml: string | null
  allowedDomains: string[]
}

/** Creates or replaces the organization's one SSO configuration. */
export async function saveSsoConfig(db: Executor, organizationId: string, createdBy: string, values: SsoConfigValues) {
  return db
    .insertInto('core.ssoConfigs')
    .values({ organizationId, createdBy, ...values })
    .onConflict((oc) => oc.column('organizationId').doUpdateSet({ ...values, updatedAt: sql<Date>`now()` }))
    .returning(ssoColumns)
    .executeTakeFirstOrThrow()
}

export async function deleteSsoConfig(db: Executor, organizationId: string) {
  return db.deleteFrom('core.ssoConfigs').where('organizationId', '=', organizationId).returning(['idpEntityId']).executeTakeFirst()
}

export async function organizationExists(db: Executor, organizationId: string): Promise<boolean> {
  return (await db.selectFrom('core.organizations').select('id').where('id', '=', organizationId).executeTakeFirst()) !== undefined
}
