/** The one thing the kit needs of a tap test: somewhere to hang cleanup. */
export interface TestContext {
  teardown(fn: () => unknown): void
}
