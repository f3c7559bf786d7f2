import { Type } from 'typebox'

// Field schemas the files share. They say what a field is and fill its default; the service
// checks the finer rules (lengths, formats) and its refusal names the entry.

export const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' })
export const Email = Type.String({
  minLength: 3,
  maxLength: 320,
  pattern: '^[^@\\s]+@[^@\\s]+$',
  description: 'A member of the organization',
})
export const NullableText = (maxLength: number) => Type.Union([Type.String({ maxLength }), Type.Null()], { default: null })
export const NullableName = (description: string) =>
  Type.Union([Type.String({ minLength: 1 }), Type.Null()], { default: null, description })
export const Priority = Type.Enum(['P1', 'P2', 'P3', 'P4', 'P5'])
