import { Type } from 'typebox'
import { productRoles } from '@svc/auth'

const ProductRole = Type.Enum(productRoles)

/** One role per product; a product left out has no role. */
export const ProductRoles = Type.Object(
  {
    statuspages: Type.Optional(ProductRole),
    alerting: Type.Optional(ProductRole),
    synthetics: Type.Optional(ProductRole),
    insights: Type.Optional(ProductRole),
  },
  { additionalProperties: false, description: 'Product key → role, e.g. {"alerting": "manager"}' },
)
