#!/usr/bin/env bash
# Peak RSS and wall time of `musewire agent` under large inputs (AGENT-04):
# a valid 60 MB prompt (v1, and v2 as hosts negotiate it), `read /dev/zero` and `bash yes`
# (each killed by its pid after 3 s). Usage: conformance/bench/agent-memory.sh [MUSEWIRE]
# (default: target/release/musewire). Needs GNU time (/usr/bin/time) and python3.
set -uo pipefail
B=${1:-target/release/musewire}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -c "
import json
words = ('lorem ipsum dolor sit amet ' * (60_000_000 // 27 + 1))[:60_000_000]
open('$work/prompt60.jsonl', 'w').write(json.dumps({'id': 'p', 'type': 'prompt', 'message': words}) + '\n')
"
NEG='{"id":"n","type":"negotiate_protocol","protocolVersion":2}'
rss() { grep -E "Maximum resident|Elapsed" | sed 's/^\s*//; s/Elapsed (wall clock) time (h:mm:ss or m:ss)/wall/; s/Maximum resident set size (kbytes)/peak RSS kB/' | tr '\n' ' '; echo; }
echo -n "60 MB prompt, v1: "; /usr/bin/time -v "$B" agent --mode rpc <"$work/prompt60.jsonl" 2>&1 >/dev/null | rss
echo -n "60 MB prompt, v2: "; (echo "$NEG"; cat "$work/prompt60.jsonl") | /usr/bin/time -v "$B" agent --mode rpc 2>&1 >/dev/null | rss
# A run that does not end by itself: the agent is killed by its pid after 3 s.
forever() {
  ( echo "$NEG"; echo "{\"id\":\"p\",\"type\":\"prompt\",\"message\":\"$1\"}"; sleep 4 ) |
    /usr/bin/time -v "$B" agent --mode rpc 2>"$work/time.txt" >/dev/null &
  local tpid=$!
  sleep 0.3
  local apid
  apid=$(pgrep -P "$(pgrep -P $$ -f "^/usr/bin/time -v" | head -1)" | head -1)
  sleep 2.7
  [ -n "$apid" ] && kill -TERM "$apid" 2>/dev/null
  wait "$tpid" 2>/dev/null
  rss <"$work/time.txt"
}
echo -n "read /dev/zero, 3 s: "; forever "read /dev/zero"
echo -n "bash yes, 3 s: "; forever "bash yes"
