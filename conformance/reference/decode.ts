// Reference side of the `musewire decode` differential test and benchmark.
//
// Run with the pinned bun: conformance/peers/node_modules/.bin/bun conformance/reference/decode.ts
//
// Reads an agent's stdout byte stream on stdin and emulates the reference client
// (oh-my-pi 18.2.3, src/modes/rpc/rpc-client.ts) using its real `RpcFrameDecoder`, imported
// from the installed package (never copied). Output, one line each:
//   - every logical frame as `JSON.stringify(frame)`;
//   - every protocol error as `{"musewire_error":{"rule":"FRAME-NN","message":"..."}}`.
// After a fatal error nothing more is printed and the exit status is 1.
//
// Where the real client differs from musewire's rules (conformance/RULES.md, FRAME), OUR rules
// are emulated:
//   - FRAME-01: split on LF only, strip one CR before LF, skip whitespace-only lines, a last
//     line without LF at EOF is a frame (Bun.JSONL does the same for these).
//   - FRAME-02: a physical line longer than maxFrameBytes (1,048,576 bytes including its LF) is
//     reported `{"rule":"FRAME-02","message":"rpc frame line exceeds maxFrameBytes"}` and
//     skipped; decoding goes on (the real client has no cap).
//   - FRAME-13: a line that is not JSON is reported `{"rule":"FRAME-13","message":"rpc frame is
//     not valid JSON"}` and skipped; decoding goes on (the real client's Bun.JSONL throws).
// Plain lines are decoded from UTF-8 lossily (invalid bytes become U+FFFD), as Bun.JSONL does.
//
// `--summary` decodes the way the real client does, for speed (the benchmark's reference side):
// `readJsonl` over Bun's stdin stream + `RpcFrameDecoder`; prints {"frames":N,"bytes":N,"errors":N}.

import { readJsonl } from "../peers/node_modules/@oh-my-pi/pi-utils/src/stream.ts";
import { isRecord } from "../peers/node_modules/@oh-my-pi/pi-utils/src/type-guards.ts";
import {
	MAX_RPC_FRAME_BYTES,
	RpcFrameDecoder,
} from "../peers/node_modules/@oh-my-pi/pi-coding-agent/src/modes/rpc/rpc-frame.ts";

const LF = 0x0a;
const CR = 0x0d;

/** Maps an error thrown by the reference decoder to musewire's rule ID and message. */
function classify(err: unknown): { rule: string; message: string } {
	if (err instanceof TypeError && /encoded data was not valid|not valid for encoding|utf-8/i.test(err.message))
		return { rule: "FRAME-10", message: "rpc frame is not valid UTF-8" };
	if (err instanceof SyntaxError) return { rule: "FRAME-10", message: "rpc frame is not valid JSON" };
	const message = err instanceof Error ? err.message : String(err);
	switch (message) {
		case "RPC chunk received before protocol negotiation":
			return { rule: "FRAME-05", message };
		case "invalid rpc chunk metadata":
			return { rule: "FRAME-07", message };
		case "invalid rpc chunk data":
		case "rpc chunk payload exceeds the transport limit":
			return { rule: "FRAME-08", message };
		case "rpc chunk sequence must start at index 0":
		case "rpc chunk sequence mismatch":
		case "rpc chunk sequence exceeds declared length":
		case "rpc chunk sequence length mismatch":
		case "rpc chunk sequence interrupted":
			return { rule: "FRAME-09", message };
		case "rpc frame must be an object":
			return { rule: "FRAME-10", message };
	}
	throw err; // a harness bug, not a protocol error: crash loudly
}

/** The client adopts v2 after exactly this response (rpc-client.ts, start()). */
function isV2NegotiationSuccess(frame: unknown): boolean {
	return (
		isRecord(frame) &&
		frame.type === "response" &&
		frame.command === "negotiate_protocol" &&
		frame.success === true &&
		isRecord(frame.data) &&
		frame.data.protocolVersion === 2
	);
}

class Out {
	#parts: string[] = [];
	#size = 0;
	#writer = Bun.stdout.writer();
	line(s: string) {
		this.#parts.push(s, "\n");
		this.#size += s.length + 1;
		if (this.#size > 1 << 20) this.flush();
	}
	flush() {
		if (this.#parts.length === 0) return;
		this.#writer.write(this.#parts.join(""));
		this.#parts = [];
		this.#size = 0;
	}
	async end() {
		this.flush();
		await this.#writer.flush();
		await this.#writer.end();
	}
}

async function decodeMode(): Promise<number> {
	const out = new Out();
	const decoder = new RpcFrameDecoder();
	const utf8Lossy = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
	let v2 = false;
	let fatal = false;

	const error = (rule: string, message: string) => {
		out.line(JSON.stringify({ musewire_error: { rule, message } }));
	};

	// Handles one physical line (LF and one CR before it already stripped).
	const handleLine = (bytes: Uint8Array) => {
		const text = utf8Lossy.decode(bytes);
		if (/^[ \t\r\n]*$/.test(text)) return; // FRAME-01: empty lines are skipped
		let value: unknown;
		try {
			value = JSON.parse(text);
		} catch {
			error("FRAME-13", "rpc frame is not valid JSON");
			return;
		}
		try {
			if (isRecord(value) && value.type === "rpc_chunk" && !v2)
				throw new Error("RPC chunk received before protocol negotiation");
			const frame = decoder.push(value);
			if (frame === undefined) return;
			out.line(JSON.stringify(frame));
			if (!v2 && isV2NegotiationSuccess(frame)) v2 = true;
		} catch (err) {
			const { rule, message } = classify(err);
			error(rule, message);
			fatal = true;
		}
	};

	// Line splitter with the FRAME-02 cap. `pending` holds the current line's bytes so far.
	let pending: Uint8Array[] = [];
	let pendingLen = 0;
	let oversize = false; // current line already reported; discard up to the next LF

	const finishLine = () => {
		if (oversize) {
			oversize = false;
		} else {
			let line: Uint8Array;
			if (pending.length === 1) line = pending[0];
			else line = Buffer.concat(pending, pendingLen);
			if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1);
			handleLine(line);
		}
		pending = [];
		pendingLen = 0;
	};
	// A line of n content bytes occupies n + 1 bytes with its LF.
	const checkOversize = () => {
		if (!oversize && pendingLen + 1 > MAX_RPC_FRAME_BYTES) {
			error("FRAME-02", "rpc frame line exceeds maxFrameBytes");
			oversize = true;
			pending = [];
			pendingLen = 0;
		}
	};

	for await (const chunk of Bun.stdin.stream() as unknown as AsyncIterable<Uint8Array>) {
		let pos = 0;
		while (pos < chunk.length && !fatal) {
			const nl = chunk.indexOf(LF, pos);
			const end = nl === -1 ? chunk.length : nl;
			if (oversize) {
				// discard
			} else {
				const piece = chunk.subarray(pos, end);
				pendingLen += piece.length;
				if (pendingLen + 1 > MAX_RPC_FRAME_BYTES) checkOversize();
				else if (piece.length > 0) pending.push(nl === -1 ? new Uint8Array(piece) : piece);
			}
			if (nl === -1) break;
			finishLine();
			pos = nl + 1;
		}
		if (fatal) break;
	}
	if (!fatal && (pendingLen > 0 || oversize)) {
		// A last line without LF at EOF is still a frame (FRAME-01).
		finishLine();
	}
	if (!fatal && openSequence(decoder)) {
		error("FRAME-15", "rpc chunk sequence truncated by end of stream");
		fatal = true;
	}
	await out.end();
	return fatal ? 1 : 0;
}

/**
 * Whether the decoder holds an open chunk sequence. The reference keeps it in a private field,
 * so probe it: pushing a plain object into a decoder with an open sequence throws
 * "rpc chunk sequence interrupted". The decoder is not used afterwards.
 */
function openSequence(decoder: RpcFrameDecoder): boolean {
	try {
		decoder.push({ type: "musewire_eof_probe" });
		return false;
	} catch (err) {
		if (err instanceof Error && err.message === "rpc chunk sequence interrupted") return true;
		throw err;
	}
}

async function summaryMode(): Promise<number> {
	let bytes = 0;
	let frames = 0;
	let errors = 0;
	const counted = (Bun.stdin.stream() as ReadableStream<Uint8Array>).pipeThrough(
		new TransformStream<Uint8Array, Uint8Array>({
			transform(chunk, controller) {
				bytes += chunk.length;
				controller.enqueue(chunk);
			},
		}),
	);
	const decoder = new RpcFrameDecoder();
	let v2 = false;
	try {
		for await (const line of readJsonl<unknown>(counted)) {
			if (isRecord(line) && line.type === "rpc_chunk" && !v2)
				throw new Error("RPC chunk received before protocol negotiation");
			const frame = decoder.push(line);
			if (frame === undefined) continue;
			frames++;
			if (!v2 && isV2NegotiationSuccess(frame)) v2 = true;
		}
	} catch (err) {
		errors++;
		console.error(`reference decode --summary: ${err instanceof Error ? err.message : String(err)}`);
	}
	process.stdout.write(`${JSON.stringify({ frames, bytes, errors })}\n`);
	return errors > 0 ? 1 : 0;
}

const args = process.argv.slice(2);
for (const a of args) {
	if (a !== "--summary") {
		console.error(`usage: bun decode.ts [--summary]   (unknown argument ${a})`);
		process.exit(2);
	}
}
const code = args.includes("--summary") ? await summaryMode() : await decodeMode();
process.exit(code);
