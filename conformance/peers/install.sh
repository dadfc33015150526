#!/usr/bin/env bash
# Installs the pinned real agents (omp 18.2.3 with bun 1.4.5, pi 0.73.1 and pi 1.6.0, the
# latter run under bun where node is older than 22.19), the ACP SDK 2.4.0 and the ACP command-line
# client acpx 0.19.1, the ACP adapter pi-acp 0.0.34 (benched against, conformance/bench/acp.sh), the reference MCP servers server-everything and server-filesystem 2026.8.31 into conformance/peers/node_modules, and the Python host contraagent 0.9.2 into
# conformance/peers/python (install-python.sh). Idempotent: does nothing when the pinned versions are
# already there. Retries the registry a few times. Prints the paths of the binaries.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

# Both pis name their bin `pi`: node_modules/.bin/pi is whichever npm linked, so nothing uses it;
# the tests start each pi by its package path (conformance/live/src/peers.rs, `Pi::cli`).
want_ok() {
  [ -x node_modules/.bin/bun ] &&
    [ "$(node_modules/.bin/bun --version 2>/dev/null)" = "1.4.5" ] &&
    [ -f node_modules/@oh-my-pi/pi-coding-agent/src/modes/rpc/rpc-frame.ts ] &&
    grep -q '"version": "18.2.3"' node_modules/@oh-my-pi/pi-coding-agent/package.json &&
    grep -q '"version": "0.73.1"' node_modules/@mariozechner/pi-coding-agent/package.json &&
    [ -f node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js ] &&
    grep -q '"version": "1.6.0"' node_modules/@earendil-works/pi-coding-agent/package.json &&
    [ -f node_modules/acpx/dist/cli.js ] &&
    grep -q '"version": "0.19.1"' node_modules/acpx/package.json &&
    [ -f node_modules/pi-acp/dist/index.js ] &&
    grep -q '"version": "0.0.34"' node_modules/pi-acp/package.json &&
    grep -q '"version": "2.4.0"' node_modules/@agentclientprotocol/sdk/package.json &&
    grep -q '"version": "2026.8.31"' node_modules/@modelcontextprotocol/server-everything/package.json &&
    grep -q '"version": "2026.8.31"' node_modules/@modelcontextprotocol/server-filesystem/package.json
}

if ! want_ok; then
  for attempt in 1 2 3 4; do
    if npm install --no-audit --no-fund --loglevel=error; then break; fi
    echo "install.sh: npm install failed (attempt $attempt), retrying" >&2
    sleep $((attempt * 5))
  done
fi
# The bun wrapper package falls back to a download when its postinstall did not place the
# binary; the binary ships in @oven/bun-linux-x64, so link it directly when needed.
if ! node_modules/.bin/bun --version >/dev/null 2>&1; then
  for p in node_modules/@oven/bun-linux-x64/bin/bun node_modules/@oven/bun-linux-x64-baseline/bin/bun; do
    if [ -x "$p" ]; then ln -sf "../../$p" node_modules/.bin/bun; break; fi
  done
fi
want_ok || { echo "install.sh: peers not installed as pinned" >&2; exit 1; }
echo "bun: $here/node_modules/.bin/bun"
echo "omp: $here/node_modules/@oh-my-pi/pi-coding-agent"
echo "pi:  $here/node_modules/@mariozechner/pi-coding-agent (0.73.1)"
echo "pi:  $here/node_modules/@earendil-works/pi-coding-agent (1.6.0)"
echo "acpx: $here/node_modules/acpx"
echo "pi-acp: $here/node_modules/pi-acp (0.0.34)"
echo "acp: $here/node_modules/@agentclientprotocol/sdk"
echo "mcp: $here/node_modules/@modelcontextprotocol/server-everything, server-filesystem (2026.8.31)"
bash "$here/install-python.sh"
