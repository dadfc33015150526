// Writes the decode benchmark stream: what the reference agent (oh-my-pi 18.2.3) writes on
// stdout for a session that pages a long history, encoded with its real `RpcFrameEncoder`
// (imported from the installed package) exactly as the agent does:
//
//   ready frame (v1), negotiate_protocol success response (v1), setProtocolVersion(2), then
//   60 `get_messages` responses of 2,500 toolResult messages each (~3 MB logical frames, so
//   chunked), interleaved with 120,000 small `message_update` events in total. ~290 MB.
//
//   bun conformance/reference/gen-stream.ts OUT_PATH [SCALE]
//
// SCALE (default 1) multiplies the number of responses and events (and, below 1/60, the
// messages per response) so tests can make a small stream. Deterministic: a seeded PRNG.

import { RpcFrameEncoder } from "../peers/node_modules/@oh-my-pi/pi-coding-agent/src/modes/rpc/rpc-frame.ts";

const [outPath, scaleArg] = process.argv.slice(2);
if (!outPath) {
	console.error("usage: bun gen-stream.ts OUT_PATH [SCALE]");
	process.exit(2);
}
const scale = scaleArg === undefined ? 1 : Number(scaleArg);
if (!(scale > 0)) {
	console.error(`gen-stream: bad scale ${scaleArg}`);
	process.exit(2);
}

const RESPONSES = Math.max(1, Math.round(60 * scale));
const MESSAGES_PER_RESPONSE = 60 * scale < 1 ? Math.max(1, Math.round(2500 * 60 * scale)) : 2500;
const UPDATES = Math.round(120000 * scale);

// mulberry32
let seed = 0x6d757365; // "muse"
function rand(): number {
	seed = (seed + 0x6d2b79f5) | 0;
	let t = seed;
	t = Math.imul(t ^ (t >>> 15), t | 1);
	t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
	return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

const WORDS = [
	"const", "let", "return", "function", "import", "export", "async", "await", "if", "else",
	"value", "frame", "decoder", "buffer", "stream", "session", "request", "response", "error",
	"résumé", "naïve", "Größe", "東京", "日本語", "данные", "λ", "→", "✓", "😀", "🚀", "≤", "—",
];
const LINE_KINDS: (() => string)[] = [
	() => `${int(1, 2000)}\t${Array.from({ length: int(2, 12) }, () => pick(WORDS)).join(" ")};`,
	() => `src/${pick(["core", "frame", "rpc", "utils"])}/${pick(WORDS)}.ts:${int(1, 900)}:${int(1, 80)}: ${pick(WORDS)} "${pick(WORDS)}"`,
	() => `    at ${pick(WORDS)} (C:\\Users\\dev\\${pick(WORDS)}.js:${int(1, 99)}:${int(1, 40)})`,
	() => `{"key": "${pick(WORDS)}", "n": ${int(0, 1e6)}, "ok": ${rand() < 0.5}}`,
	() => `$ ${pick(["ls -la", "git status", "cargo build", "bun test", "grep -rn"])} ${pick(WORDS)}`,
	() => `-rw-r--r--  1 dev dev ${int(10, 99999)} Nov ${int(1, 30)} 12:${int(10, 59)} ${pick(WORDS)}.rs`,
	() => `\x1b[32m✓\x1b[0m ${pick(WORDS)} ${pick(WORDS)} (${int(1, 999)}ms)`,
	() => "",
];
function text(): string {
	// lengths vary: mostly short results, some long ones (mean ~1.2 KB of JSON per message)
	const r = rand();
	const lines = r < 0.45 ? int(2, 11) : r < 0.85 ? int(11, 42) : r < 0.98 ? int(42, 106) : int(106, 270);
	const out: string[] = [];
	for (let i = 0; i < lines; i++) out.push(pick(LINE_KINDS)());
	return out.join("\n");
}

let messageSeq = 0;
function toolResult(): object {
	const n = messageSeq++;
	const toolName = pick(["read", "bash", "grep", "find", "edit", "write", "lsp"]);
	const message: Record<string, unknown> = {
		role: "toolResult",
		toolCallId: `toolu_${n.toString(36).padStart(8, "0")}${int(1000, 9999)}`,
		toolName,
		content: [{ type: "text", text: text() }],
		isError: rand() < 0.06,
		timestamp: 1764400000000 + n * 1371,
	};
	if (rand() < 0.2) message.details = { exitCode: int(0, 2), truncated: rand() < 0.3, path: `/work/${pick(WORDS)}` };
	return message;
}

const DELTAS = ["The ", "decoder ", "reads ", "each ", "line", ", then ", "checks ", "`rpc_chunk`", " frames.", "\n", "é", "😀", "\"quoted\"", "\\"];
function messageUpdate(i: number): object {
	const delta = Array.from({ length: int(1, 4) }, () => pick(DELTAS)).join("");
	return {
		type: "message_update",
		message: {
			role: "assistant",
			content: [{ type: "text", text: `Step ${i}: ${delta}` }],
			api: "anthropic-messages",
			provider: "anthropic",
			model: "claude-sonnet-4-5",
			stopReason: "stop",
			timestamp: 1764400000000 + i,
		},
		assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta },
	};
}

const encoder = new RpcFrameEncoder();
const writer = Bun.file(outPath).writer({ highWaterMark: 1 << 20 });
let bytes = 0;
let pendingBytes = 0;
async function emit(frame: object) {
	for (const line of encoder.encodeFrames(frame)) {
		writer.write(line);
		const n = Buffer.byteLength(line);
		bytes += n;
		pendingBytes += n;
		if (pendingBytes > 4 << 20) {
			await writer.flush();
			pendingBytes = 0;
		}
	}
}

await emit({
	type: "ready",
	protocolVersion: 1,
	supportedProtocolVersions: [1, 2],
	maxFrameBytes: 1048576,
	maxReassembledFrameBytes: 67108864,
});
await emit({ id: "req-0", type: "response", command: "negotiate_protocol", success: true, data: { protocolVersion: 2 } });
encoder.setProtocolVersion(2);

let updates = 0;
let largest = 0;
for (let r = 0; r < RESPONSES; r++) {
	const target = Math.round((UPDATES * (r + 1)) / RESPONSES);
	for (; updates < target; updates++) await emit(messageUpdate(updates));
	const messages = Array.from({ length: MESSAGES_PER_RESPONSE }, toolResult);
	const response = { id: `req-${r + 1}`, type: "response", command: "get_messages", success: true, data: { messages } };
	largest = Math.max(largest, Buffer.byteLength(JSON.stringify(response)));
	await emit(response);
}
await writer.end();
console.error(
	`gen-stream: ${outPath}: ${bytes} bytes, ${RESPONSES} responses x ${MESSAGES_PER_RESPONSE} messages, ${UPDATES} message_update events, largest logical frame ${largest} bytes`,
);
