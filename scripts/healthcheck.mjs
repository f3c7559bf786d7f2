/* global process, fetch, AbortSignal */
// The image's HEALTHCHECK: healthy when the service in this container answers its liveness
// probe. One image runs either service, so both ports are tried (only one listens).
const ports = [process.env.PLATFORM_PORT || '3004', process.env.PRODUCT_PORT || '3003']
const answers = await Promise.all(
  ports.map((port) =>
    fetch(`http://127.0.0.1:${port}/api/v1/health/live`, { signal: AbortSignal.timeout(2_000) }).then(
      (response) => response.ok,
      () => false,
    ),
  ),
)
process.exit(answers.some(Boolean) ? 0 : 1)
