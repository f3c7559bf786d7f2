import { createProductClient, type ProductClient } from '@svc/client'

/** The server said no: its status and message, and what was being done. */
export class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

interface Answer<T> {
  data?: T
  error?: unknown
  response: Response
}

/** The answer's body, or a Refusal carrying the server's own message. */
export async function answered<T>(call: Promise<Answer<T>>, doing: string): Promise<T> {
  const { data, error, response } = await call
  if (response.ok) return data as T
  const said = typeof error === 'object' && error !== null && 'message' in error ? String(error.message) : response.statusText
  throw new Refusal(response.status, `${doing}: ${response.status} ${said}`)
}

/** Every row of a paged list (`{data, meta: {total}}`), a hundred at a time. */
export async function everyPage<T>(
  read: (page: number) => Promise<Answer<{ data: T[]; meta: { total: number } }>>,
  doing: string,
): Promise<T[]> {
  const rows: T[] = []
  for (let page = 1; ; page++) {
    const { data, meta } = await answered(read(page), doing)
    rows.push(...data)
    if (data.length === 0 || rows.length >= meta.total) return rows
  }
}

export const PAGE = 100

/** Where the CLI works: the product API of one organization, with an API token (or an ID token). */
export interface Connection {
  api: ProductClient
  orgId: string
}

export function connect(options: { url: string; token: string; orgId: string }): Connection {
  let url = options.url
  while (url.endsWith('/')) url = url.slice(0, -1)
  return { api: createProductClient(url, { token: options.token }), orgId: options.orgId }
}
