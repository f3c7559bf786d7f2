// node-postgres's parameter conversion, which @types/pg does not declare: how `pg` turns a
// JavaScript value into a query parameter (text, or a Buffer sent as binary, or null).
declare module 'pg/lib/utils' {
  const utils: { prepareValue(value: unknown): string | Buffer | null }
  export default utils
}
