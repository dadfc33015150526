// Reference side of the single-session host-path benchmark.
//
//   cat STREAM | conformance/peers/node_modules/.bin/bun conformance/bench/host-stream.ts
//
// The reference agent's own client, `RpcClient` (oh-my-pi 18.2.3,
// src/modes/rpc/rpc-client.ts, imported from the installed package, never copied), reads an
// agent's stdout from a pipe: its `spawn` option (the custom-transport hook) hands it this
// process's stdin as the agent's stdout, and a stdin sink that drops what it writes. It
// reads the stream exactly as it reads a live agent: readJsonl + RpcFrameDecoder, a
// `negotiate_protocol` of its own when the ready frame offers v2 (nobody answers it; the
// stream's own negotiation response `req-0` and the `get_messages` responses are unmatched),
// every `message_update` to its `onEvent` listeners. At the end of the stream the client
// reaps its "agent" (start() rejects with "exited with code 0", expected) and this prints one
// JSON line: bytes read and events counted, the counterpart of `host_stream`'s.

import { RpcClient } from "../peers/node_modules/@oh-my-pi/pi-coding-agent/src/modes/rpc/rpc-client.ts";

const started = performance.now();
let bytes = 0;
let resolveExit: (code: number) => void = () => {};
const exited = new Promise<number>(resolve => {
	resolveExit = resolve;
});
const input = Bun.stdin.stream().getReader();
// The agent's stdout: stdin, passed through chunk by chunk (one pull per read), closing and
// "exiting" with 0 at the end of the stream so the client reaps it at once.
const stdout = new ReadableStream<Uint8Array>({
	async pull(controller) {
		const { done, value } = await input.read();
		if (done) {
			controller.close();
			resolveExit(0);
			return;
		}
		bytes += value.byteLength;
		controller.enqueue(value);
	},
});

const client = new RpcClient({
	spawn: () => ({
		stdin: { write: () => undefined },
		stdout,
		peekStderr: () => "",
		kill: () => resolveExit(0),
		exited,
	}),
});
let messageUpdates = 0;
let otherEvents = 0;
client.onEvent(event => {
	if (event.type === "message_update") messageUpdates++;
	else otherEvents++;
});
let endError = "";
try {
	await client.start();
	endError = "start() resolved: the negotiation was answered";
} catch (error) {
	endError = error instanceof Error ? error.message : String(error);
}
await exited;
console.log(
	JSON.stringify({
		bytes,
		message_updates: messageUpdates,
		other_events: otherEvents,
		end: endError,
		seconds: Number(((performance.now() - started) / 1000).toFixed(4)),
	}),
);
