#!/usr/bin/env bash
# Scale benchmark: N `musewire agent` sessions driven from one host process by the smol
# driver, by the mio driver, and by the reference RpcClient under bun, one after the other in
# the same run; prints a table and the ratios to the reference.
#
#   bash conformance/bench/scale.sh            # N=200
#   SESSIONS=50 bash conformance/bench/scale.sh
#
# Each client: N sessions of `target/release/musewire agent --mode rpc`, one get_state each
# (then RSS per idle session), CALLS (default 50) sequential get_state per session, all
# sessions at once (round trips p50/p99/max, per second, host CPU), then one WORDS-word
# (default 64) prompt per session echoed back word by word (host CPU, acknowledgement p50,
# agent_end p50). Host CPU is getrusage(RUSAGE_SELF) of the host process only. The Rust side
# is conformance/live/examples/scale.rs, the reference conformance/bench/scale.ts.
# Clients: reference, smol (the sessions' tasks beside the drivers' on smol's global
# executor), smol-local (the sessions' tasks on the main thread, `--tasks local`), mio (every
# call made from one thread, `submit_to`), mio-threads (a thread per session making blocking
# calls, `--tasks threads`).
# Environment: SESSIONS, CALLS, WORDS, CLIENTS (default "reference smol smol-local mio mio-threads"),
# NO_BUILD=1 to use the binaries already built, CARGO_TARGET_DIR as usual. The raw JSON lines are kept in bench-out/scale-N.jsonl.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
n=${SESSIONS:-200}
calls=${CALLS:-50}
words=${WORDS:-64}
clients=${CLIENTS:-reference smol smol-local mio mio-threads}
bun="$root/conformance/peers/node_modules/.bin/bun"
[ -x "$bun" ] || { echo "scale.sh: $bun missing: run bash conformance/peers/install.sh" >&2; exit 1; }

if [ "${NO_BUILD:-0}" != 1 ]; then
  echo "building musewire and the scale example (release)…" >&2
  cargo build --release -q -p musewire
  cargo build --release -q -p musewire-live --example scale
fi
target="${CARGO_TARGET_DIR:-$root/target}/release"
musewire="$target/musewire"
scale="$target/examples/scale"

# Each session is a process, with pipes: make room for them.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

mkdir -p "$root/bench-out"
out="$root/bench-out/scale-$n.jsonl"
: > "$out"
echo "load before: $(uptime)" >&2
for c in $clients; do
  echo "running $c, $n sessions…" >&2
  case $c in
    reference) "$bun" "$root/conformance/bench/scale.ts" "$musewire" "$n" "$calls" "$words" >> "$out" ;;
    smol | mio) "$scale" --driver "$c" --sessions "$n" --calls "$calls" --words "$words" --agent "$musewire" >> "$out" ;;
    smol-local) "$scale" --driver smol --tasks local --sessions "$n" --calls "$calls" --words "$words" --agent "$musewire" >> "$out" ;;
    mio-threads) "$scale" --driver mio --tasks threads --sessions "$n" --calls "$calls" --words "$words" --agent "$musewire" >> "$out" ;;
    *) echo "scale.sh: unknown client $c" >&2; exit 2 ;;
  esac
done
echo "load after:  $(uptime)" >&2

# The table: one column per client, the ratio client / reference beside each (lower is better
# for every row but round trips per second).
jq -rs --arg calls "$calls" --arg words "$words" '
  def r(x; d): (x * pow(10; d) | round) / pow(10; d);
  (map(select(.client == "reference")) | first) as $ref
  | [ ["host CPU, round trips (s)", "rt_cpu_s", 3],
      ["  of which user (s)", "rt_user_s", 3],
      ["  of which system (s)", "rt_sys_s", 3],
      ["round trips per second", "rt_per_s", 0],
      ["round trip p50 (ms)", "rt_p50_ms", 2],
      ["round trip p99 (ms)", "rt_p99_ms", 2],
      ["round trip max (ms)", "rt_max_ms", 2],
      ["host CPU, streamed turns (s)", "turn_cpu_s", 3],
      ["  of which user (s)", "turn_user_s", 3],
      ["  of which system (s)", "turn_sys_s", 3],
      ["prompt acknowledged p50 (ms)", "ack_p50_ms", 1],
      ["agent_end p50 (ms)", "end_p50_ms", 1],
      ["agent_end max (ms)", "end_max_ms", 1],
      ["host RSS per idle session (KB)", "idle_kb_per_session", 1] ] as $rows
  | "\(.[0].sessions) sessions, \($calls) get_state each, one \($words)-word turn each",
    ( ["metric"] + map(.client + (if .client == "reference" or $ref == null then "" else " (x ref)" end)) | join(" | ") ),
    ( $rows[] as [$name, $key, $d]
      | [$name] + map(
          (r(.[$key]; $d) | tostring)
          + (if .client == "reference" or $ref == null or $ref[$key] == 0 then ""
             else " (\(r(.[$key] / $ref[$key]; 2))x)" end))
      | join(" | ") )
' "$out" | column -t -s '|'
