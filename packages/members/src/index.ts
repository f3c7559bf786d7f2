export { addMember, type MemberOrigin, type NewMember } from './add-member.js'
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
