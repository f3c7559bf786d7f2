#!/bin/sh
# The runtime file tree of the image, built by the Dockerfile and by the test that checks it
# (scripts/test/runtime-tree.test.ts) with the same commands: every package transpiled into its
# dist (scripts/dist-build.ts: types are CI's typecheck's job), then each service deployed with its
# production dependencies only (no TypeScript, tests or dev tools).
#   usage: scripts/build-runtime.sh <output folder>
set -eu
out=${1:?usage: scripts/build-runtime.sh <output folder>}
cd "$(dirname "$0")/.."

pnpm exec tsx scripts/dist-build.ts
rm -rf "$out"
mkdir -p "$out"
# The three deploys read the same store and write apart, so they run at once.
pids=""
for service in platform product relay; do
  # --legacy: workspace packages are copied as published (their `files`: dist only), without
  # turning on injected workspace packages for development.
  pnpm --filter "@svc/$service" deploy --prod --legacy "$out/$service" >/dev/null &
  pids="$pids $!"
done
for pid in $pids; do wait "$pid"; done
cp scripts/service-entrypoint.sh scripts/healthcheck.mjs "$out/"
