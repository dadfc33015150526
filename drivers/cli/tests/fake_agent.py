#!/usr/bin/env python3
"""A small misbehaving agent for the CLI's fault tests (`faults_cli.rs`). It speaks just
enough of the RPC protocol (newline-delimited JSON on stdio) to drive `musewire prompt` and
`musewire messages` into each fault. The first argument picks the behaviour:

  v1            no ready frame (a v1 agent, FRAME-03); answers a prompt with one text delta
  garbage       a line that is not JSON before its ready frame, then like v1
  mute          like v1, but never answers get_state (so the start-up probe, FRAME-03, goes
                unanswered and the host waits its ready timeout)
  escapes       terminal escapes in its text, a notify dialog and its stderr; an unmatched
                response and a line over FRAME-02's limit on the way; dies mid-turn (exit 3)
  flood N       answers the prompt, then streams N bytes of text deltas; the bytes written so
                far go to the file named by FAKE_PROGRESS after each frame
  pages         negotiates v2, then pages forever: a fresh cursor and 100 messages a page,
                totalMessages 5 (PAGE-09)
  bigtool       v1 with maxFrameBytes 1048576; calls host tool `big`, drops any stdin line over
                that limit (as an agent does) and ends the turn with what the host answered
  group FILE    writes its pid and a child `sleep`'s pid to FILE, then never answers
  stall         acknowledges the prompt, starts the run, then neither reads nor writes
"""

import json
import os
import subprocess
import sys
import time

MODE = sys.argv[1]
LIMIT = 1048576


def send(frame):
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()


def delta(text):
    return {
        "type": "message_update",
        "assistantMessageEvent": {"type": "text_delta", "delta": text},
    }


def respond(command, data=None):
    frame = {"type": "response", "command": command["type"], "success": True}
    if "id" in command:
        frame["id"] = command["id"]
    if data is not None:
        frame["data"] = data
    send(frame)


def lines():
    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline()
        if not line:
            return
        if len(line) > LIMIT:
            continue
        try:
            yield json.loads(line)
        except ValueError:
            continue


if MODE == "group":
    child = subprocess.Popen(["sleep", "300"])
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {child.pid}\n")
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    for _ in lines():
        pass
    child.wait()
    sys.exit(0)

if MODE == "garbage":
    sys.stdout.write("garbage before ready\n")
    send({"type": "ready", "protocolVersion": 1, "supportedProtocolVersions": [1]})
elif MODE in ("escapes", "flood", "stall"):
    send({"type": "ready", "protocolVersion": 1, "supportedProtocolVersions": [1]})
elif MODE == "bigtool":
    send(
        {
            "type": "ready",
            "protocolVersion": 1,
            "supportedProtocolVersions": [1],
            "maxFrameBytes": LIMIT,
            "maxReassembledFrameBytes": 67108864,
        }
    )
elif MODE == "pages":
    send(
        {
            "type": "ready",
            "protocolVersion": 1,
            "supportedProtocolVersions": [1, 2],
            "maxFrameBytes": LIMIT,
            "maxReassembledFrameBytes": 67108864,
        }
    )

page = 0
for command in lines():
    kind = command.get("type")
    if MODE == "mute" and kind == "get_state":
        continue
    if kind == "negotiate_protocol":
        respond(command, {"protocolVersion": 2})
    elif kind == "get_messages_page":
        page += 1
        messages = [{"role": "user", "content": f"page {page} message {i}"} for i in range(100)]
        respond(
            command,
            {"messages": messages, "nextCursor": f"cursor-{page}", "totalMessages": 5},
        )
    elif kind == "set_host_tools":
        respond(command, {"toolNames": [t["name"] for t in command.get("tools", [])]})
    elif kind == "prompt":
        respond(command)
        send({"type": "agent_start"})
        if MODE == "stall":
            time.sleep(300)
        if MODE == "escapes":
            send({"type": "response", "id": "nobody", "command": "x", "success": True})
            sys.stdout.write('{"type":"x","pad":"' + "p" * (LIMIT + 10) + '"}\n')
            send(
                {
                    "type": "extension_ui_request",
                    "id": "ui-1",
                    "method": "notify",
                    "message": "note\x1b]0;pwned\x07\x1b[2J",
                }
            )
            sys.stderr.write("stderr \x1b[31mred\x1b[0m\n")
            sys.stderr.flush()
            send(delta("text \x1b[2J\x1b]0;title\x07\rover\x9b31m"))
            # Dies mid-turn, so that its stderr tail is shown.
            sys.exit(3)
        elif MODE == "flood":
            total = int(sys.argv[2])
            chunk = "f" * 262144
            written = 0
            progress = os.environ.get("FAKE_PROGRESS")
            while written < total:
                send(delta(chunk))
                written += len(chunk)
                if progress:
                    with open(progress + ".tmp", "w") as f:
                        f.write(str(written))
                    os.rename(progress + ".tmp", progress)
        elif MODE == "bigtool":
            send(
                {
                    "type": "host_tool_call",
                    "id": "host-tool-1",
                    "toolCallId": "tc-1",
                    "toolName": "big",
                    "arguments": {},
                }
            )
            for answer in lines():
                if answer.get("type") == "host_tool_result" and answer.get("id") == "host-tool-1":
                    text = answer["result"]["content"][0]["text"]
                    error = " (error)" if answer.get("isError") else ""
                    send(delta(f"the host answered{error}: {text[:200]}"))
                    break
        else:
            send(delta(f"{MODE} answer"))
        send({"type": "agent_end", "messages": []})
    elif "id" in command:
        respond(command, {})
