#!/bin/sh
# The container's entrypoint: runs one service's compiled build with node as PID 1 (exec), so
# SIGTERM reaches it directly and its graceful close (close-with-grace) handles it.
set -eu
here=$(dirname "$0")
case "${1:-}" in
  platform | product) exec node "$here/$1/dist/server.js" ;;
  # A synthetics relay (private location): RELAY_URL and RELAY_KEY from the environment.
  relay) exec node "$here/relay/dist/main.js" ;;
  *)
    echo "usage: <image> platform|product|relay" >&2
    exit 64
    ;;
esac
