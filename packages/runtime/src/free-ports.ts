import { createServer } from 'node:net'

/** A port the system will listen on, and the variable that moves it. */
export interface NamedPort {
  port: number
  variable: string
}

/** Whether something else listens on the port at this host already. */
function inUse(port: number, host: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(true) : reject(error)))
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(false)))
  })
}

/**
 * The ports that are taken, said in one line that names each and the variable that moves it;
 * undefined when all are free. Asked before the database is opened, so a second copy of the
 * system is told at once, not after its migrations, and not with a stack trace.
 */
export async function busyPortsMessage(ports: NamedPort[], host: string): Promise<string | undefined> {
  const busy: NamedPort[] = []
  for (const named of ports) if (named.port !== 0 && (await inUse(named.port, host))) busy.push(named)
  if (busy.length === 0) return undefined
  const list = busy.map(({ port, variable }) => `${port} (${variable})`).join(', ')
  return `${busy.length === 1 ? 'port' : 'ports'} ${list} already in use on ${host}: another copy may be running (stop it), or set ${busy.map(({ variable }) => variable).join(', ')} to free ports`
}
