import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify'
import type { Bindings, ChildLoggerOptions, LogFn } from 'pino'

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'
type ParentLogger = FastifyBaseLogger & { isLevelEnabled(level: string): boolean }

/**
 * A request's logger that becomes pino's child (the request id bound) the first time the request
 * logs at a level that writes, or asks for a child or a level of its own.
 *
 * Fastify gives every request a child logger. pino builds one in about 5 µs (its bindings
 * serialized, its level methods bound): 7 % of the CPU of an authenticated `GET /users/me` in a
 * profile under `pnpm bench`, paid by requests that never log. At info, the one line per request
 * (`OneLinePerRequest`) builds it anyway; at warn or above, most requests build none. Our own,
 * because neither pino nor Fastify offers a lazy child.
 */
class RequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined

  constructor(
    private readonly parent: ParentLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get real(): FastifyBaseLogger {
    this.#child ??= this.parent.child(this.bindings, this.options)
    return this.#child
  }

  /** Writes through the child, built only when the line would be written. */
  private logAt(level: Level, args: Parameters<LogFn>): void {
    if (this.#child === undefined && !this.parent.isLevelEnabled(level)) return
    const real = this.real
    ;(real[level] as LogFn).apply(real, args)
  }

  get level(): string {
    return this.#child?.level ?? this.parent.level
  }

  set level(level: string) {
    this.real.level = level
  }

  fatal(...args: Parameters<LogFn>): void {
    this.logAt('fatal', args)
  }
  error(...args: Parameters<LogFn>): void {
    this.logAt('error', args)
  }
  warn(...args: Parameters<LogFn>): void {
    this.logAt('warn', args)
  }
  info(...args: Parameters<LogFn>): void {
    this.logAt('info', args)
  }
  debug(...args: Parameters<LogFn>): void {
    this.logAt('debug', args)
  }
  trace(...args: Parameters<LogFn>): void {
    this.logAt('trace', args)
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real.child(bindings, options)
  }
}

/** Fastify's `childLoggerFactory`: a route with a log level of its own gets pino's child at once. */
export const lazyRequestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = function lazyRequestLogger(
  logger,
  bindings,
  options,
) {
  if (options.level !== undefined) return logger.child(bindings, options)
  return new RequestLogger(logger as ParentLogger, bindings, options)
}
