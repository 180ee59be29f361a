#!/usr/bin/env bash
# MCP round trip of execute(echo hi) from the official SDK client, against
# posix_spawn + waitpid of `/bin/echo hi` and of `bash -c 'echo hi'` (what
# execute runs), interleaved in batches in the same run so that load changes
# hit all three alike.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
cd "$here/../tests/e2e"
AGENTTY_BIN="$build/agentty" BASELINE_BIN="$build/bench/spawn_baseline_bench" node "$here/mcp_latency.mjs"
