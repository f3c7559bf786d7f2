#!/bin/sh
# The container's entrypoint: runs one service's compiled build with node as PID 1 (exec), so
# SIGTERM reaches it directly and its graceful close (close-with-grace) handles it.
set -eu
here=$(dirname "$0")
case "${1:-}" in
  platform | product) exec node "$here/$1/dist/server.js" ;;
  *)
    echo "usage: <image> platform|product" >&2
    exit 64
    ;;
esac
