#!/usr/bin/env bash
# ACP-20 flood bench: the peak RSS of `musewire acp` while its agents stream endlessly and
# the editor reads nothing (the bridge's memory is to be bounded whatever the editor and the
# agents do). Each session's agent is drivers/flood/flood_agent.py in `stream` mode
# (after a prompt, assistant messages for ever until an abort); the editor (python3, below)
# opens the sessions, prompts each, then stops reading for $SECONDS_HELD seconds while
# /proc/PID/status is sampled; then it cancels every session, reads everything, and checks
# each prompt ends `cancelled`. Prints, for 1 and 20 sessions: the bridge's peak RSS
# (VmHWM), what the agents wrote while the editor did not read, the time for the queued
# updates and the answers to arrive once it read again. Target: peak < 150 MB.
#
#   bash conformance/bench/acp-flood.sh [MUSEWIRE]   (default target/release/musewire,
#                                                     else target/debug/musewire)
# Environment: SECONDS_HELD (default 10), SESSIONS (default "1 20"), BENCH_STRICT=1 to exit 1
# when the target is missed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-}
if [ -z "$bin" ]; then
  bin="$root/target/release/musewire"
  [ -x "$bin" ] || bin="$root/target/debug/musewire"
fi
[ -x "$bin" ] || { echo "acp-flood.sh: $bin missing: cargo build -p musewire" >&2; exit 1; }
held=${SECONDS_HELD:-10}
missed=0
for n in ${SESSIONS:-1 20}; do
  work=$(mktemp -d)
  if ! python3 - "$bin" "$root/drivers/flood/flood_agent.py" "$work" "$n" "$held" <<'PY'
import json, os, subprocess, sys, threading, time
bin, agent, work, n, held = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
LIMIT = 150 * 1024 * 1024
bridge = subprocess.Popen([bin, "acp", "--", "python3", agent, "stream"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, env=dict(os.environ, FAKE_PROGRESS=work))
def send(m):
    bridge.stdin.write(json.dumps(dict(m, jsonrpc="2.0")).encode() + b"\n"); bridge.stdin.flush()
def until(pred):
    while True:
        line = bridge.stdout.readline()
        if not line: sys.exit("the bridge ended")
        m = json.loads(line)
        if pred(m): return m
def status(field):
    for l in open(f"/proc/{bridge.pid}/status"):
        if l.startswith(field): return int(l.split()[1]) * 1024
    return 0
def written():
    return sum(int(open(os.path.join(work, f)).read() or 0) for f in os.listdir(work) if f.isdigit())
send({"id": 1, "method": "initialize", "params": {"protocolVersion": 1}}); until(lambda m: m.get("id") == 1)
ids = []
for i in range(n):
    send({"id": 100 + i, "method": "session/new", "params": {"cwd": work, "mcpServers": []}})
    ids.append(until(lambda m: m.get("id") == 100 + i and "method" not in m)["result"]["sessionId"])
for i, s in enumerate(ids):
    send({"id": 200 + i, "method": "session/prompt", "params": {"sessionId": s, "prompt": [{"type": "text", "text": "flood"}]}})
start = time.time(); peak = 0
while time.time() - start < held:
    peak = max(peak, status("VmHWM:"))
    if status("VmRSS:") > 4 * LIMIT:
        bridge.kill(); print(f"{n:>2} session(s): over {4 * LIMIT >> 20} MB after {time.time() - start:.1f}s: stopped"); sys.exit(1)
    time.sleep(0.05)
flooded = written()
for s in ids:
    send({"method": "session/cancel", "params": {"sessionId": s}})
t = time.time(); answered = 0; read = 0
while answered < n:
    line = bridge.stdout.readline(); read += len(line)
    if not line: sys.exit("the bridge ended")
    m = json.loads(line)
    if "method" not in m and isinstance(m.get("id"), int) and m["id"] >= 200:
        assert m["result"]["stopReason"] == "cancelled", m; answered += 1
drained = time.time() - t
peak = max(peak, status("VmHWM:"))
bridge.stdin.close(); bridge.wait(timeout=10)
ok = "ok" if peak < LIMIT else "MISSED"
print(f"{n:>2} session(s): peak RSS {peak / 2**20:.1f} MB (target < 150: {ok}); agents wrote "
      f"{flooded / 2**20:.1f} MB in {held:.0f}s with the editor not reading; {read / 2**20:.1f} MB "
      f"and every answer ({answered}, cancelled) read in {drained:.2f}s once it read again")
sys.exit(0 if peak < LIMIT else 1)
PY
  then missed=1; fi
  rm -rf "$work"
done
if [ "$missed" = 1 ] && [ "${BENCH_STRICT:-0}" = 1 ]; then exit 1; fi
