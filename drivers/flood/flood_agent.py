#!/usr/bin/env python3
"""A fake agent for the drivers' backpressure tests (bounded queues). The first argument picks
the behaviour:

  flood N   writes its ready frame, then N bytes of event frames (4 KiB each); answers every
            command with an empty success at once, between two of them (one writer, so an
            answer never waits behind more than one frame); the bytes written so far go to
            the file named by FAKE_PROGRESS every 256 KiB
  sink      writes its ready frame, then never reads stdin
  lockstep  writes its ready frame, then event frames for ever, reading stdin (and
            dropping it) only between two of them: while its stdout is not read, it reads
            nothing

  stream    an ACP session's endless turn: answers each command at once; after a prompt,
            streams assistant messages (message_start, a 4 KiB text delta, message_end)
            for ever, until an `abort` ends the turn (agent_end). With FAKE_PROGRESS set
            (a folder), the bytes written so far go to FAKE_PROGRESS/<pid> every 16 KiB (finer
            than a pipe's 64 KiB, so an agent held back after a pipe's worth is seen), and
            FAKE_PROGRESS/<pid>.aborted is made as soon as an `abort` is read

With FAKE_HOST_TOOL set, a host_tool_call to the tool of that name (id "h1") follows the
ready frame.
"""

import json
import os
import queue
import sys
import threading
import time

MODE = sys.argv[1]
out = sys.stdout.buffer


def send(frame):
    out.write(json.dumps(frame).encode() + b"\n")
    out.flush()


send({"type": "ready", "protocolVersion": 1, "supportedProtocolVersions": [1]})
if os.environ.get("FAKE_HOST_TOOL"):
    send({"type": "host_tool_call", "id": "h1", "toolCallId": "c1",
          "toolName": os.environ["FAKE_HOST_TOOL"], "arguments": {}})

if MODE == "sink":
    while True:
        time.sleep(60)

if MODE == "stream":
    lock = threading.Lock()
    turn = threading.Event()
    aborted = threading.Event()
    folder = os.environ.get("FAKE_PROGRESS")

    def note(name, text):
        if folder:
            path = os.path.join(folder, name)
            with open(path + ".tmp", "w") as f:
                f.write(text)
            os.replace(path + ".tmp", path)

    def answer(command):
        reply = {"type": "response", "command": command["type"], "success": True}
        if "id" in command:
            reply["id"] = command["id"]
        with lock:
            send(reply)

    def commands_in():
        for line in sys.stdin.buffer:
            command = json.loads(line)
            if command["type"] == "abort":
                note("%d.aborted" % os.getpid(), "1")
                aborted.set()
            answer(command)
            if command["type"] == "prompt":
                with lock:
                    send({"type": "agent_start"})
                turn.set()
        os._exit(0)

    threading.Thread(target=commands_in, daemon=True).start()
    empty = {"role": "assistant", "content": [], "stopReason": "stop"}
    burst = b"".join(
        json.dumps(frame).encode() + b"\n"
        for frame in [
            {"type": "message_start", "message": empty},
            {"type": "message_update", "message": empty,
             "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0,
                                       "delta": "x" * 4096}},
            {"type": "message_end", "message": empty},
        ]
    )
    written = 0
    while True:
        turn.wait()
        while not aborted.is_set():
            with lock:
                out.write(burst)
                out.flush()
            written += len(burst)
            if written % (16 * 1024) < len(burst):
                note(str(os.getpid()), str(written))
        with lock:
            send({"type": "agent_end", "messages": []})
        turn.clear()
        aborted.clear()

if MODE == "lockstep":
    import select

    frame = (json.dumps({"type": "flood", "pad": "x" * 4000}) + "\n").encode()
    while True:
        ready, _, _ = select.select([0], [], [], 0)
        if ready and not os.read(0, 65536):
            sys.exit(0)
        out.write(frame)
        out.flush()

commands = queue.Queue()


def read():
    for line in sys.stdin.buffer:
        commands.put(json.loads(line))
    commands.put(None)


threading.Thread(target=read, daemon=True).start()
total = int(sys.argv[2])
progress = os.environ.get("FAKE_PROGRESS")
frame = (json.dumps({"type": "flood", "pad": "x" * 4000}) + "\n").encode()
written = 0
while written < total:
    while not commands.empty():
        command = commands.get()
        if command is None:
            sys.exit(0)
        answer = {"type": "response", "command": command["type"], "success": True}
        if "id" in command:
            answer["id"] = command["id"]
        send(answer)
    out.write(frame)
    out.flush()
    written += len(frame)
    if progress and written % (256 * 1024) < len(frame):
        with open(progress + ".tmp", "w") as f:
            f.write(str(written))
        os.replace(progress + ".tmp", progress)
while True:
    command = commands.get()
    if command is None:
        break
    answer = {"type": "response", "command": command["type"], "success": True}
    if "id" in command:
        answer["id"] = command["id"]
    send(answer)
