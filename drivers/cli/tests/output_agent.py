#!/usr/bin/env python3
"""A stand-in agent serving one stored output with `read_output` (OUT-10, ours), for the host
side's `read_output` / `fetch-output` tests. v1 only, newline-delimited JSON on stdio.

  output_agent.py MODE FILE [SESSION_ID]

MODE:
  serve     the ready frame offers readOutput; FILE is stored output `out-0a1b2c3d4e5f6071`
            of item `call-1` in session SESSION_ID (default `s-1`). Pages are served as
            base64 (mediaType application/octet-stream), each a few bytes shorter than asked
            (down to 1) so that a reader must advance by the returned byteLen (OUT-04).
            `switch_session {sessionPath}` takes an existing `*.jsonl` file and makes its
            stem the session (as the bundled agent's AGENT-05 files); anything else fails. A `prompt` runs one `bash`
            tool call whose result names the stored output in details.storedOutput (OUT-02).
  nooffer   the same, without readOutput in the ready frame (as omp and pi).
  liar      serves; the second page starts one byte past where it was asked (OUT-09).
"""

import base64
import json
import os
import sys

MODE = sys.argv[1]
FILE = sys.argv[2]
SESSION = sys.argv[3] if len(sys.argv) > 3 else "s-1"
ITEM = "call-1"
REF = "out-0a1b2c3d4e5f6071"
MAX = 1048576


def send(frame):
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()


def answer(command, **members):
    """The response to `command`: `data=` for a success, `error=` (and `code=`) a failure."""
    frame = {"type": "response", "command": command.get("type", "")}
    if "id" in command:
        frame["id"] = command["id"]
    frame["success"] = "error" not in members
    frame.update({k: v for k, v in members.items() if v is not None})
    send(frame)


def respond(command, data=None):
    answer(command, data=data)


def fail(command, error, code=None):
    answer(command, error=error, code=code)


def stored():
    return {
        "sessionId": SESSION,
        "itemId": ITEM,
        "outputRef": REF,
        "byteLen": os.path.getsize(FILE),
        "mediaType": "application/octet-stream",
        "availability": "available",
    }


pages = 0


def read_output(command):
    global pages
    if command.get("sessionId") != SESSION or command.get("itemId") != ITEM:
        return fail(command, "the output reference belongs to another session or item", "foreign")
    if command.get("outputRef") != REF:
        return fail(command, "unknown output reference", "unknown")
    size = os.path.getsize(FILE)
    offset = command.get("offsetBytes")
    length = command.get("lengthBytes", 65536)
    if not (offset == 0 or 0 <= offset < size):
        return fail(command, f"offset {offset} is out of range for an output of {size} bytes",
                    "offset_out_of_range")
    pages += 1
    # Shorter than asked, by 0 to 3 bytes, never empty (OUT-04: advance by byteLen).
    length = max(1, length - pages % 4)
    with open(FILE, "rb") as f:
        f.seek(offset)
        data = f.read(length)
    if MODE == "liar" and pages == 2:
        offset += 1
    respond(command, {
        "sessionId": SESSION, "itemId": ITEM, "outputRef": REF,
        "content": base64.b64encode(data).decode(), "encoding": "base64",
        "mediaType": "application/octet-stream", "offsetBytes": offset,
        "byteLen": len(data), "eof": offset + len(data) >= size,
    })


def prompt(command):
    respond(command)
    send({"type": "agent_start"})
    send({"type": "tool_execution_start", "toolCallId": ITEM, "toolName": "bash",
          "args": {"command": "cat big"}})
    send({"type": "tool_execution_end", "toolCallId": ITEM, "toolName": "bash",
          "result": {"content": [{"type": "text", "text": "head…(Omitted N bytes.)…tail"}],
                     "details": {"exitCode": 0, "storedOutput": stored()}}})
    send({"type": "agent_end", "messages": []})


ready = {"type": "ready", "protocolVersion": 1, "supportedProtocolVersions": [1],
         "maxFrameBytes": 1048576}
if MODE != "nooffer":
    ready["readOutput"] = {"version": 1, "maxLengthBytes": MAX}
send(ready)

for line in sys.stdin:
    try:
        command = json.loads(line)
    except ValueError:
        fail({"type": "parse"}, "not JSON")
        continue
    kind = command.get("type")
    if kind == "get_state":
        respond(command, {"isStreaming": False, "sessionId": SESSION})
    elif kind == "switch_session":
        path = command.get("sessionPath", "")
        if path.endswith(".jsonl") and os.path.isfile(path):
            SESSION = os.path.basename(path)[: -len(".jsonl")]
            respond(command, {"cancelled": False})
        else:
            fail(command, f"not a session file: {path}")
    elif kind == "read_output" and MODE != "nooffer":
        read_output(command)
    elif kind == "prompt":
        prompt(command)
    else:
        fail(command, f"Unknown command: {kind}")
