export { changedFields } from './changes.js'
export {
  auditContextOf,
  auditProducts,
  type AuditActor,
  type AuditChange,
  type AuditContext,
  type AuditProduct,
  type Fields,
} from './entry.js'
export { recordAudit, recordAudits } from './record.js'
