import { randomBytes } from 'node:crypto'

/** A URL-friendly slug from a name: "Acme Corp." becomes "acme-corp". */
export function slugFromName(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|(?<!-)-+$/g, '')
    .slice(0, 40)
    .replace(/(?<!-)-+$/, '')
  return slug || 'organization'
}

/** The same slug made unique with a short random suffix. */
export function withSuffix(slug: string): string {
  return `${slug}-${randomBytes(3).toString('hex')}`
}
