#!/usr/bin/env bash
# Per-command overhead of execute(session=) against bash under tmux
# (see session_overhead.mjs). Usage: bench/session_overhead.sh [BUILD_DIR] [N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
cd "$here/../tests/e2e"
AGENTTY_BIN="$build/agentty" node "$here/session_overhead.mjs" "${2:-1000}"
