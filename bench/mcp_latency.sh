#!/usr/bin/env bash
# MCP round trip of execute(echo hi) from the official SDK client, against
# posix_spawn + waitpid of /bin/echo, measured in the same run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
baseline=$("$build/bench/spawn_baseline_bench" 500)
cd "$here/../tests/e2e"
AGENTTY_BIN="$build/agentty" BASELINE="$baseline" node "$here/mcp_latency.mjs"
