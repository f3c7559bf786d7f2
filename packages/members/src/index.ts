export { addMember, type MemberOrigin, type NewMember } from './add-member.js'
export {
  acceptInvitation,
  hashInvitationToken,
  inviteMember,
  resendInvitation,
  ResendLimitReached,
  revokeInvitation,
  type Accepted,
  type InvitationSender,
  type SentInvitation,
} from './invitations.js'
export { findInvitation, invitationStatuses, listInvitations, type InvitationRow, type InvitationStatus } from './invitation-queries.js'
export {
  countOwners,
  deleteMember,
  findMember,
  findMemberByUser,
  findMemberWithProductRoles,
  insertMember,
  listMembers,
  lockOrganization,
  membersOf,
  productRolesOfMembers,
  replaceProductRoles,
  setMemberRole,
  userForEmail,
  type MemberFilter,
  type ProductRoles,
} from './queries.js'
export {
  inviteRefusal,
  ownProductRolesRefusal,
  productRolesRefusal,
  removalRefusal,
  roleChangeRefusal,
  type AdministeredProducts,
} from './role-policy.js'
export { ProductRoles as ProductRolesSchema } from './schemas.js'
export {
  Invitation,
  InvitationStatus as InvitationStatusSchema,
  SentInvitationResponse,
  invitationBody,
  sentInvitationBody,
} from './invitation-schemas.js'
export { invitationSenderOf, sendInvitation, sentInvitationAnswer, type InvitationOptions } from './invitation-sender.js'
