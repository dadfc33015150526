"""Drives an omp stand-in with contraagent's unmodified omp RPC backend (`OmpRpcBackend`), one
launch per prompt, and prints each launch's result as one JSON line.

Usage: python drive.py BINARY CWD TIMEOUT_S PROMPT...

BINARY is launched the way contraagent launches omp (`BINARY --mode rpc --no-session
--thinking ... --max-time N`); `BINARY --version` gives the CLI version it records.
"""

import json
import sys
import time
from pathlib import Path

from contraagent.backends import Launch, OmpRpcBackend
from contraagent._internal.backends.launch import Limits


def main() -> None:
    binary, cwd, timeout_s, *prompts = sys.argv[1:]
    backend = OmpRpcBackend(binary=binary)
    for i, prompt in enumerate(prompts):
        launch = Launch(prompt=prompt, label=f"p{i + 1}", cwd=Path(cwd), limits=Limits(timeout_s=float(timeout_s)))
        t0 = time.monotonic()
        result = backend.run(launch)
        print(
            json.dumps(
                {
                    "ok": result.ok,
                    "stop": result.stop.value,
                    "result_text": result.result_text,
                    "session_id": result.session_id,
                    "cli_version": result.cli_version,
                    "argv": [str(a) for a in result.argv],
                    "tool_uses": result.tool_uses,
                    "output_tokens": result.usage.output_total,
                    "context_window": result.context_window,
                    "stderr_tail": result.stderr_tail,
                    "seconds": time.monotonic() - t0,
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
