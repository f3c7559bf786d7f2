#!/bin/sh
# The container's entrypoint: runs one service, as PID 1, so SIGTERM reaches it directly.
set -eu
case "${1:-}" in
  platform | product) exec node --import tsx "services/$1/src/server.ts" ;;
  *)
    echo "usage: <image> platform|product" >&2
    exit 64
    ;;
esac
