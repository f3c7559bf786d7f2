declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route needs no credentials (the global JWT rule skips it). */
    public?: boolean
  }
}

export {}
