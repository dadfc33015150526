#!/usr/bin/env bash
# ACP bench: the same scripted-model turns through four ACP agents, one after the other in the
# same run, and a table of musewire's figures as ratios to its peer's:
#   omp-acp       omp 18.2.3's own `omp --mode acp` (under bun 1.4.5)
#   musewire-omp  `musewire acp -- omp --mode rpc` (target/release/musewire)
#   pi-acp        pi-acp 0.0.34 (node) over pi 1.6.0 (`PI_ACP_PI_COMMAND`, under bun where
#                 node is older than 22.19)
#   musewire-pi   `musewire acp -- pi --mode rpc` (pi 1.6.0, the same runtime)
#   omp-rpc, pi-rpc  the agent alone over its own RPC, no bridge (a process a session): the
#                 baseline for the agent's own CPU and for the delay a bridge adds
# Turns (conformance/bench/acp-editor.mjs, a raw JSON-RPC editor): `long`, one answer of WORDS
# words (default 2000) streamed a word a chunk, PACE_MS (default 1) before each chunk; `tool`,
# a bash call whose output is a 1 MB file (`cat`, 10,486 lines of 100 bytes); `sessions`,
# SESSIONS (default 20) sessions each streaming SESSION_WORDS (default 200) words at once
# (pi-acp keeps one session a process, so there it is SESSIONS pi-acp processes; the others
# hold every session in one). Each session has a warm-up turn first. The model is
# conformance/live's scripted server (`model-server`), which logs each chunk's send time.
# Per turn and side: wall time, CPU of the bridge process and, apart, of everything under it
# (the agents and their tools; omp-acp is bridge and agent in one process), bridge peak RSS
# (VmHWM), session/update count, and the delay from the model server's send of each word to
# the editor's receipt of the update carrying it (p50/p99/max). Targets (issue 24): the bridge
# adds <= 5% to the agent's own CPU, <= 1 ms p50 an update, and its CPU an update <= 0.25x
# pi-acp's. A bench, not a test: nothing asserts; it prints what it measured.
#
#   bash conformance/bench/acp.sh             # RUNS=1, every side
#   RUNS=2 bash conformance/bench/acp.sh
# Environment: RUNS, WORDS, SESSION_WORDS, SESSIONS, PACE_MS, SIDES (default "omp-rpc omp-acp
# musewire-omp pi-rpc pi-acp musewire-pi"), NO_BUILD=1 to use the binaries already built,
# CARGO_TARGET_DIR as usual, MUSEWIRE=PATH to bench another musewire binary (an A/B). Raw JSON lines in bench-out/acp.jsonl, the agents' stderr in the
# scratch folder it names.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
runs=${RUNS:-1}
sides=${SIDES:-omp-rpc omp-acp musewire-omp pi-rpc pi-acp musewire-pi}
peers="$root/conformance/peers/node_modules"
bun="$peers/.bin/bun"
omp_cli="$peers/@oh-my-pi/pi-coding-agent/dist/cli.js"
pi_cli="$peers/@earendil-works/pi-coding-agent/dist/bundle/cli.js"
pi_acp="$peers/pi-acp/dist/index.js"
for f in "$bun" "$omp_cli" "$pi_cli" "$pi_acp"; do
  [ -e "$f" ] || { echo "acp.sh: $f missing: run bash conformance/peers/install.sh" >&2; exit 1; }
done
# pi 1.6 needs node >= 22.19, else it runs under the pinned bun (conformance/live/src/peers.rs).
if node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>22||(a==22&&b>=19)?0:1)'; then
  pi_runtime=$(command -v node)
else
  pi_runtime=$bun
fi

if [ "${NO_BUILD:-0}" != 1 ]; then
  echo "building musewire and the model server (release)…" >&2
  cargo build --release -q -p musewire
  cargo build --release -q -p musewire-live --bin model-server
fi
target="${CARGO_TARGET_DIR:-$root/target}/release"
musewire="${MUSEWIRE:-$target/musewire}"
model_server="$target/model-server"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/musewire-acp-bench.XXXXXX")
sendlog="$scratch/sends.tsv"
: > "$sendlog"
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true; }
trap cleanup EXIT
MUSEWIRE_MODEL_SERVER_LOG="$sendlog" "$model_server" > "$scratch/url" &
server_pid=$!
for _ in $(seq 100); do [ -s "$scratch/url" ] && break; sleep 0.1; done
base_url=$(head -1 "$scratch/url")
[ -n "$base_url" ] || { echo "acp.sh: the model server did not start" >&2; exit 1; }

# The 1 MB tool output: 10,486 lines of 99 bytes and a newline, no spaces (the model's next
# answer echoes what the agent passed back of it).
big="$scratch/big.txt"
line=$(printf 'x%.0s' $(seq 99))
{ yes "$line" || true; } | head -c 1048576 > "$big"

mkdir -p "$root/bench-out"
out="$root/bench-out/acp.jsonl"
: > "$out"

# One side, in its own HOME and agent dir (fresh each run), with the isolated environment of
# the live tests: PATH, HOME, a dummy key, NO_COLOR, and the agent dir.
side() {
  local name=$1 run=$2 dir="$scratch/$1-$2"
  mkdir -p "$dir/work" "$dir/home/.omp/agent" "$dir/home/.pi/agent" "$dir/bin"
  cat > "$dir/home/.omp/agent/models.yml" <<EOF
providers:
  fake:
    baseUrl: $base_url
    api: openai-completions
    apiKey: sk-fake
    compat: {supportsUsageInStreaming: true, supportsDeveloperRole: false, supportsStore: false}
    models:
      - {id: fake-model, name: Fake Model, reasoning: false, contextWindow: 1000000, maxTokens: 4096}
EOF
  cat > "$dir/home/.pi/agent/models.json" <<EOF
{"providers": {"fake": {"baseUrl": "$base_url", "api": "openai-completions", "apiKey": "sk-fake",
  "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false, "supportsUsageInStreaming": true},
  "models": [{"id": "fake-model", "name": "Fake Model", "reasoning": false, "contextWindow": 1000000, "maxTokens": 4096}]}}}
EOF
  # pi-acp: no startup banner (it would run `pi --version` from PATH for it).
  echo '{"quietStartup": true}' > "$dir/home/.pi/agent/settings.json"
  # pi-acp starts `$PI_ACP_PI_COMMAND --mode rpc --no-themes [--session FILE]`, one command
  # without arguments: this wrapper execs the pinned pi on the fake provider.
  printf '#!/bin/sh\nexec "%s" "%s" "$@" --provider fake --model fake-model\n' "$pi_runtime" "$pi_cli" > "$dir/bin/pi"
  chmod +x "$dir/bin/pi"
  local omp_args=(--model fake/fake-model --no-title)
  local pi_args=(--mode rpc --no-themes --provider fake --model fake-model)
  # Twenty agents starting at once on a loaded 2-core machine can take more than the 30 s
  # musewire acp allows an agent to say its first word by default.
  local mw_args=(--ready-timeout 300)
  local agent_dir="$dir/home/.omp/agent" flags=() cmd
  case $name in
    omp-rpc) cmd=("$bun" "$omp_cli" --mode rpc "${omp_args[@]}"); flags=(--rpc) ;;
    omp-acp) cmd=("$bun" "$omp_cli" --mode acp "${omp_args[@]}") ;;
    musewire-omp) cmd=("$musewire" acp "${mw_args[@]}" -- "$bun" "$omp_cli" --mode rpc "${omp_args[@]}") ;;
    pi-rpc) cmd=("$pi_runtime" "$pi_cli" "${pi_args[@]}"); flags=(--rpc); agent_dir="$dir/home/.pi/agent" ;;
    pi-acp) cmd=(node "$pi_acp"); flags=(--per-session-process); agent_dir="$dir/home/.pi/agent" ;;
    musewire-pi) cmd=("$musewire" acp "${mw_args[@]}" -- "$pi_runtime" "$pi_cli" "${pi_args[@]}"); agent_dir="$dir/home/.pi/agent" ;;
    *) echo "acp.sh: unknown side $name" >&2; exit 2 ;;
  esac
  echo "run $run: $name…" >&2
  env -i PATH="$PATH" HOME="$dir/home" OPENAI_API_KEY=sk-dummy NO_COLOR=1 \
    PI_CODING_AGENT_DIR="$agent_dir" PI_ACP_PI_COMMAND="$dir/bin/pi" CLK_TCK="$(getconf CLK_TCK)" \
    ACP_WORK="$dir/work" ACP_FILE="$big" ACP_RUN="$run" ACP_WORDS="${WORDS:-2000}" \
    ACP_SESSION_WORDS="${SESSION_WORDS:-200}" ACP_SESSIONS="${SESSIONS:-20}" ACP_PACE_MS="${PACE_MS:-1}" \
    node "$root/conformance/bench/acp-editor.mjs" run "$name" "$sendlog" "${flags[@]}" -- "${cmd[@]}" >> "$out" ||
    echo "acp.sh: $name failed in run $run (its stderr: $dir/*.stderr)" >&2
}

echo "load before: $(uptime)" >&2
for run in $(seq "$runs"); do
  for s in $sides; do side "$s" "$run"; done
done
echo "load after:  $(uptime)" >&2
echo "scratch (agents' stderr): $scratch" >&2
node "$root/conformance/bench/acp-editor.mjs" report "$out"
