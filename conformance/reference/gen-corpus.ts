// Writes the FRAME differential corpus: agent stdout byte streams that
// drivers/cli/tests/differential_reference.rs feeds to both `musewire decode` and
// conformance/reference/decode.ts.
//
//   bun conformance/reference/gen-corpus.ts small OUT_DIR   # the committed corpus
//                                                           # (conformance/corpus/frame)
//   bun conformance/reference/gen-corpus.ts large OUT_DIR   # multi-MB streams, generated at
//                                                           # test time, never committed
//
// Deterministic: the same bytes on every run. File names start with the rule the case is
// about (frame05-… … frame13-…, valid-…). Valid chunked streams need a reassembled payload of at
// least 1,048,576 bytes (FRAME-07), so every case that completes a sequence is in the large set.

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
	MAX_RPC_FRAME_BYTES,
	RpcFrameEncoder,
} from "../peers/node_modules/@oh-my-pi/pi-coding-agent/src/modes/rpc/rpc-frame.ts";

const [set, outDir] = process.argv.slice(2);
if ((set !== "small" && set !== "large") || !outDir) {
	console.error("usage: bun gen-corpus.ts small|large OUT_DIR");
	process.exit(2);
}
mkdirSync(outDir, { recursive: true });

const enc = new TextEncoder();
type Part = string | Uint8Array;
function bytesOf(parts: Part[]): Uint8Array {
	return Buffer.concat(parts.map(p => (typeof p === "string" ? Buffer.from(enc.encode(p)) : Buffer.from(p))));
}
let written = 0;
function write(name: string, parts: Part[]) {
	writeFileSync(join(outDir, `${name}.stream`), bytesOf(parts));
	written++;
}

const READY =
	'{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1,2],"maxFrameBytes":1048576,"maxReassembledFrameBytes":67108864}\n';
const NEG = '{"id":"neg-1","type":"response","command":"negotiate_protocol","success":true,"data":{"protocolVersion":2}}\n';
const V2 = READY + NEG; // a stream prefix after which protocol v2 is active (FRAME-05)
const EVENT = '{"type":"agent_start"}\n';
const AFTER = '{"type":"after_error","note":"must not be printed after a fatal error"}\n';

/** One rpc_chunk line from raw field text (so any JSON, even invalid types, can be written). */
function chunkLine(fields: Record<string, string | undefined>): string {
	const f: Record<string, string | undefined> = {
		type: '"rpc_chunk"',
		chunkId: '"c1"',
		index: "0",
		count: "4",
		byteLength: "1048576",
		data: '"AAAA"',
		...fields,
	};
	const body = Object.entries(f)
		.filter(([, v]) => v !== undefined)
		.map(([k, v]) => `"${k}":${v}`)
		.join(",");
	return `{${body}}\n`;
}

/** Canonical base64 of `bytes` split into chunk lines (real metadata). */
function chunkLines(payload: Uint8Array, opts: { chunkId?: string; sizes?: number[] } = {}): string[] {
	const chunkId = opts.chunkId ?? "rpc-1";
	const sizes: number[] = opts.sizes ?? [];
	if (!opts.sizes) for (let off = 0; off < payload.length; off += 262144) sizes.push(Math.min(262144, payload.length - off));
	const lines: string[] = [];
	let off = 0;
	for (let index = 0; index < sizes.length; index++) {
		const data = Buffer.from(payload.subarray(off, off + sizes[index])).toString("base64");
		off += sizes[index];
		lines.push(
			`${JSON.stringify({ type: "rpc_chunk", chunkId, index, count: sizes.length, byteLength: payload.length, data })}\n`,
		);
	}
	return lines;
}

/**
 * A JSON object text of exactly `n` UTF-8 bytes, with a 2-byte character straddling the first
 * chunk boundary (262,144) and a 4-byte one straddling the second (524,288) when n allows.
 */
function objectPayload(n: number, tag = "big"): Uint8Array {
	const head = `{"type":"${tag}","text":"`;
	const tail = '"}';
	const out = Buffer.alloc(n, 0x61); // 'a'
	out.write(head, 0, "utf8");
	out.write(tail, n - tail.length, "utf8");
	// vary the filler so base64 has '+' and '/' in it
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ?>~";
	for (let i = head.length; i < n - tail.length; i++) out[i] = alphabet.charCodeAt((i * 7919) % alphabet.length);
	if (n > 262144 + 16) out.write("é", 262143, "utf8");
	if (n > 524288 + 16) out.write("😀", 524286, "utf8");
	if (n > 600000) out.write("\\n\\\"\\u2028\\ud83d\\ude00", 600000, "utf8");
	return out;
}

/** `n` bytes: `prefix`, filler, `suffix` (for payloads that are not objects). */
function rawPayload(n: number, prefix: Part, suffix: Part, fill = 0x20): Uint8Array {
	const p = bytesOf([prefix]);
	const s = bytesOf([suffix]);
	const out = Buffer.alloc(n, fill);
	out.set(p, 0);
	out.set(s, n - s.length);
	return out;
}

const MIB = 1048576;

if (set === "small") {
	// ---------------------------------------------------------------- FRAME-01 (valid, v1)
	write("frame01-crlf", ['{"type":"a","n":1}\r\n', '{"type":"b","s":"x\\r"}\r\n']);
	write("frame01-empty-and-blank-lines", ["\n", '{"type":"a"}\n', "\n\n", "   \n", "\t\n", "\r\n", '{"type":"b"}\n', "\n"]);
	write("frame01-final-line-without-lf", ['{"type":"a"}\n', '{"type":"b","last":true}']);
	write("frame01-final-line-without-lf-crlf-before", ['{"type":"a"}\r\n', '{"type":"b"}\r']);
	write("frame01-u2028-u2029-in-strings", ['{"type":"a","text":"line\u2028sep\u2029para"}\n', '{"type":"b"}\n']);
	write("frame01-non-ascii", ['{"type":"ünïcødé","text":"日本語 — 😀 \u00a0 ﬁ","k":"Ωμέγα"}\n']);
	write("frame01-escapes", [
		'{"type":"a","t":"\\"quoted\\" \\\\ back \\/ slash \\b\\f\\n\\r\\t \\u0000 \\u00e9 \\ud83d\\ude00 \\u2028"}\n',
	]);
	write("frame01-whitespace-inside-json", ['  {  "type" :\t"a" ,\r"n" : [ 1 , 2 ] ,"o":{ } }  \n', ' \t{"type":"b"}\t \n']);
	write("frame01-duplicate-keys", ['{"type":"a","k":1,"k":2,"type":"b"}\n']);
	write("frame01-numbers", [
		'{"type":"n","a":0,"b":-0,"c":1.0,"d":1e3,"e":-1.5e-7,"f":9007199254740993,"g":1.7976931348623157e308,"h":123456789012345678}\n',
	]);
	write("frame01-deep-nesting", [`{"type":"deep","v":${"[".repeat(100)}1${"]".repeat(100)}}\n`]);
	write("frame01-nested-rpc-chunk-type-is-not-a-chunk", [
		'{"type":"event","inner":{"type":"rpc_chunk","chunkId":"x","index":9}}\n',
		'{"type":"rpc_chunk ","chunkId":"x"}\n',
		'{"type":"RPC_CHUNK"}\n',
		'{"kind":"rpc_chunk"}\n',
	]);
	write("frame01-ready-and-v1-events", [READY, EVENT, '{"type":"message_update","message":{"role":"assistant"}}\n']);
	write("frame01-no-ready-v1-only", ['{"type":"response","command":"get_state","success":true,"data":{}}\n']);
	write("frame01-v2-plain-frames-after-negotiation", [V2, EVENT, '{"type":"agent_end","messages":[]}\n']);
	write("frame01-v2-crlf-and-blank-lines", [READY, "\r\n", NEG.replace("\n", "\r\n"), "\n\n", EVENT.replace("\n", "\r\n")]);

	// ---------------------------------------------------------------- FRAME-05
	write("frame05-chunk-before-anything", [chunkLine({}), AFTER]);
	write("frame05-chunk-after-ready-before-negotiation", [READY, chunkLine({}), AFTER]);
	write("frame05-negotiation-failed", [
		READY,
		'{"id":"n","type":"response","command":"negotiate_protocol","success":false,"error":"no"}\n',
		chunkLine({}),
		AFTER,
	]);
	write("frame05-negotiated-version-1", [
		READY,
		'{"id":"n","type":"response","command":"negotiate_protocol","success":true,"data":{"protocolVersion":1}}\n',
		chunkLine({}),
	]);
	write("frame05-negotiated-version-string", [
		READY,
		'{"id":"n","type":"response","command":"negotiate_protocol","success":true,"data":{"protocolVersion":"2"}}\n',
		chunkLine({}),
	]);
	write("frame05-negotiation-wrong-command", [
		READY,
		'{"id":"n","type":"response","command":"get_state","success":true,"data":{"protocolVersion":2}}\n',
		chunkLine({}),
	]);
	write("frame05-negotiation-not-a-response", [
		READY,
		'{"id":"n","type":"event","command":"negotiate_protocol","success":true,"data":{"protocolVersion":2}}\n',
		chunkLine({}),
	]);
	write("frame05-escaped-type-before-negotiation", [READY, '{"type":"\\u0072pc_chunk","chunkId":"c1"}\n']);
	write("frame05-duplicate-type-last-wins", [READY, '{"type":"event","type":"rpc_chunk"}\n']);
	write("frame05-invalid-metadata-before-negotiation", [READY, chunkLine({ index: '"x"', data: "5" })]);
	// negotiation success spelled differently: still adopts v2 (JS semantics)
	write("frame05-negotiation-reordered-and-extra-fields", [
		READY,
		'{"data":{"extra":[1],"protocolVersion":2},"success":true,"command":"negotiate_protocol","type":"response","id":"n","x":null}\n',
		chunkLine({}),
	]);
	write("frame05-negotiation-version-2-point-0", [
		READY,
		'{"id":"n","type":"response","command":"negotiate_protocol","success":true,"data":{"protocolVersion":2.0}}\n',
		chunkLine({}),
	]);
	write("frame05-negotiation-escaped-strings", [
		READY,
		'{"id":"n","type":"r\\u0065sponse","command":"negotiate\\u005fprotocol","success":true,"data":{"protocolVersion":2}}\n',
		chunkLine({}),
	]);
	write("frame05-negotiation-duplicate-keys", [
		READY,
		'{"id":"n","type":"response","command":"negotiate_protocol","success":false,"success":true,"data":{"protocolVersion":1,"protocolVersion":2}}\n',
		chunkLine({}),
	]);

	// ---------------------------------------------------------------- FRAME-07
	const meta: [string, Record<string, string | undefined>][] = [
		["chunkid-missing", { chunkId: undefined }],
		["chunkid-null", { chunkId: "null" }],
		["chunkid-number", { chunkId: "5" }],
		["chunkid-array", { chunkId: '["c1"]' }],
		["chunkid-empty", { chunkId: '""' }],
		["chunkid-129-chars", { chunkId: JSON.stringify("c".repeat(129)) }],
		// JS counts UTF-16 code units: 65 emoji are 130 units (> 128) though only 65 chars
		["chunkid-65-emoji-130-utf16-units", { chunkId: JSON.stringify("😀".repeat(65)) }],
		["index-missing", { index: undefined }],
		["index-string", { index: '"0"' }],
		["index-null", { index: "null" }],
		["index-bool", { index: "true" }],
		["index-negative", { index: "-1" }],
		["index-equals-count", { index: "4" }],
		["index-fraction", { index: "0.5" }],
		["index-unsafe-integer", { index: "9007199254740992" }],
		["index-huge-exponent", { index: "1e300" }],
		["count-missing", { count: undefined }],
		["count-string", { count: '"4"' }],
		["count-1", { count: "1" }],
		["count-0", { count: "0" }],
		["count-257", { count: "257" }],
		["count-negative", { count: "-4" }],
		["count-fraction", { count: "4.5" }],
		["count-unsafe-integer", { count: "9007199254740993" }],
		["bytelength-missing", { byteLength: undefined }],
		["bytelength-string", { byteLength: '"1048576"' }],
		["bytelength-1048575", { byteLength: "1048575" }],
		["bytelength-67108865", { byteLength: "67108865" }],
		["bytelength-fraction", { byteLength: "1048576.5" }],
		["bytelength-unsafe-integer", { byteLength: "9007199254740992" }],
		["bytelength-negative", { byteLength: "-1048576" }],
		["bytelength-array", { byteLength: "[1048576]" }],
		// metadata is checked before data
		["and-bad-data", { count: "1", data: '"!!"' }],
	];
	for (const [name, fields] of meta) write(`frame07-${name}`, [V2, chunkLine(fields), AFTER]);

	// ---------------------------------------------------------------- FRAME-07 accepted edges
	// (a valid first chunk, then EOF: FRAME-09 truncated, so acceptance is visible)
	const metaOk: [string, Record<string, string | undefined>][] = [
		["chunkid-128-chars", { chunkId: JSON.stringify("c".repeat(128)) }],
		["chunkid-128-two-byte-chars", { chunkId: JSON.stringify("é".repeat(128)) }],
		["chunkid-64-emoji-128-utf16-units", { chunkId: JSON.stringify("😀".repeat(64)) }],
		["chunkid-escaped", { chunkId: '"\\u0063\\n1"' }],
		["index-0-point-0", { index: "0.0" }],
		["index-minus-0", { index: "-0" }],
		["index-0e5", { index: "0e5" }],
		["count-2", { count: "2" }],
		["count-256", { count: "256" }],
		["count-4-point-0", { count: "4.0" }],
		["count-exponent", { count: "4e0" }],
		["bytelength-exponent", { byteLength: "1.048576e6" }],
		["bytelength-1048576-point-0", { byteLength: "1048576.00" }],
		["bytelength-67108864", { byteLength: "67108864", count: "256" }],
	];
	for (const [name, fields] of metaOk) write(`frame07-accepts-${name}`, [V2, chunkLine(fields)]);
	write("frame07-accepts-reordered-extra-fields-then-truncated", [
		V2,
		'{"data":"AAAA","byteLength":1048576,"extra":{"a":[1,2]},"count":4,"index":0,"chunkId":"c1","type":"rpc_chunk"}\n',
	]);
	write("frame07-duplicate-index-last-wins", [
		V2,
		'{"type":"rpc_chunk","index":3,"chunkId":"c1","index":0,"count":4,"byteLength":1048576,"data":"AAAA"}\n',
	]);

	// ---------------------------------------------------------------- FRAME-08
	const data: [string, string | undefined][] = [
		["missing", undefined],
		["null", "null"],
		["number", "1234"],
		["array", '["AAAA"]'],
		["empty", '""'],
		["no-padding", '"AAA"'],
		["no-padding-2", '"AA"'],
		["one-char", '"A"'],
		["non-canonical-trailing-bits-1", '"AAB="'],
		["non-canonical-trailing-bits-2", '"AB=="'],
		["padding-too-much", '"A==="'],
		["padding-extra", '"AAAA="'],
		["padding-inside", '"AA==AAAA"'],
		["padding-at-start", '"=AAA"'],
		["padding-short", '"AA="'],
		["url-safe-alphabet", '"AA-_"'],
		["space", '"AA AA"'],
		["escaped-newline", '"AAAA\\nAAAA"'],
		["non-ascii", '"AAé="'],
		["escaped-nul", '"AAA\\u0000"'],
	];
	for (const [name, value] of data) write(`frame08-data-${name}`, [V2, chunkLine({ data: value }), AFTER]);
	const dataOk: [string, string][] = [
		["escaped-slash", '"\\/\\/\\/\\/"'],
		["unicode-escape", '"\\u0041AAA"'],
		["pad-1", '"AAA="'],
		["pad-2", '"AA=="'],
		["plus-slash", '"+/+/"'],
	];
	for (const [name, value] of dataOk) write(`frame08-accepts-data-${name}`, [V2, chunkLine({ data: value })]);

	// ---------------------------------------------------------------- FRAME-09
	const c = (index: number, f: Record<string, string | undefined> = {}) => chunkLine({ index: String(index), ...f });
	write("frame09-first-index-1", [V2, c(1), AFTER]);
	write("frame09-first-index-3", [V2, c(3), AFTER]);
	write("frame09-mismatch-chunkid", [V2, c(0), c(1, { chunkId: '"c2"' }), AFTER]);
	write("frame09-mismatch-count", [V2, c(0), c(1, { count: "5" }), AFTER]);
	write("frame09-mismatch-bytelength", [V2, c(0), c(1, { byteLength: "1048577" }), AFTER]);
	write("frame09-mismatch-index-skipped", [V2, c(0), c(2), AFTER]);
	write("frame09-mismatch-index-repeated", [V2, c(0), c(0), AFTER]);
	write("frame09-mismatch-index-restart-new-id", [V2, c(0), c(1), c(0, { chunkId: '"c2"' }), AFTER]);
	write("frame09-length-mismatch-short", [V2, c(0, { count: "2" }), c(1, { count: "2" }), AFTER]);
	write("frame09-length-mismatch-256-chunks", [
		V2,
		...Array.from({ length: 256 }, (_, i) => c(i, { count: "256", byteLength: "67108864" })),
		AFTER,
	]);
	write("frame09-interrupted-by-plain-frame", [V2, c(0), EVENT, AFTER]);
	write("frame09-interrupted-by-response", [V2, c(0), c(1), NEG, AFTER]);
	write("frame09-interrupted-by-non-object-json", [V2, c(0), "[1,2]\n", AFTER]);
	write("frame09-interrupted-by-rpc-chunk-lookalike", [V2, c(0), '{"type":"rpc_chunk\\u0020"}\n', AFTER]);
	// not JSON inside a sequence: FRAME-13 record, the sequence stays open
	write("frame09-non-json-line-inside-sequence", [V2, c(0, { count: "2" }), "not json\n", c(1, { count: "2" }), AFTER]);
	write("frame09-blank-lines-inside-sequence", [V2, c(0, { count: "2" }), "\n\r\n  \n", c(1, { count: "2" }), AFTER]);
	write("frame09-truncated-after-first-chunk", [V2, c(0)]);
	write("frame09-truncated-after-three-chunks", [V2, c(0), c(1), c(2)]);
	write("frame09-truncated-last-line-without-lf", [V2, c(0), c(1).trimEnd()]);
	write("frame09-truncated-then-blank-lines", [V2, c(0), "\n\n"]);
	// after a fatal error nothing more: an invalid chunk after the mismatch is not reported
	write("frame09-nothing-after-fatal", [V2, c(0), c(2), chunkLine({ index: '"bad"' }), "nope\n"]);

	// ---------------------------------------------------------------- FRAME-10 (plain lines)
	for (const [name, line] of [
		["array", "[1,2]"],
		["null", "null"],
		["number", "42"],
		["string", '"text"'],
		["true", "true"],
		["empty-array", "[]"],
	])
		write(`frame10-plain-line-${name}`, [READY, `${line}\n`, AFTER]);
	write("frame10-plain-line-array-in-v2", [V2, "[]\n", AFTER]);

	// ---------------------------------------------------------------- FRAME-13 (not JSON, non-fatal)
	write("frame13-not-json-lines", [
		READY,
		"not json\n",
		'{"type":"a"\n',
		'{"type":"a"}}\n',
		'{"type":"a"} {"type":"b"}\n',
		"{'type':'a'}\n",
		'{"type":"a",}\n',
		"{\"type\":\"a\u0001\"}\n",
		'{"type":"a"}x\n',
		"NaN\n",
		'{"n":01}\n',
		'{"t":"\\x41"}\n',
		EVENT,
	]);
	// A lone surrogate escape is valid JSON text: JSON.parse accepts it (not a FRAME-13 error).
	write("frame13-accepts-lone-surrogate-escape", [READY, '{"type":"a","t":"\\ud83d"}\n', EVENT]);
	write("frame13-not-json-in-v2", [V2, "garbage\n", EVENT, "}{\n", '{"type":"rpc_chunk"\n', EVENT]);
	write("frame13-bom-at-line-start", ["\uFEFF" + READY, EVENT, "\uFEFF{}\n"]);
	write("frame13-not-json-final-line-without-lf", [EVENT, "{\"type\":"]);
	// Plain lines are read as Bun.JSONL reads them: invalid UTF-8 becomes U+FFFD.
	write("frame13-plain-line-invalid-utf8-in-string", [
		READY,
		Uint8Array.from([...enc.encode('{"type":"a","t":"'), 0xff, 0xc3, 0x28, ...enc.encode('"}\n')]),
		EVENT,
	]);
}

if (set === "large") {
	// ---------------------------------------------------------------- FRAME-02
	const line = (n: number, tag = "long") => {
		// a JSON object line of exactly n bytes before the LF
		const head = `{"type":"${tag}","pad":"`;
		return head + "x".repeat(n - head.length - 2) + '"}';
	};
	write("frame02-line-at-limit-accepted", [READY, `${line(MIB - 1)}\n`, EVENT]);
	write("frame02-line-one-over-limit", [READY, `${line(MIB)}\n`, EVENT]);
	write("frame02-crlf-line-at-limit-with-cr-counts", [READY, `${line(MIB - 1)}\r\n`, EVENT]);
	write("frame02-crlf-line-below-limit", [READY, `${line(MIB - 2)}\r\n`, EVENT]);
	write("frame02-huge-line-then-resync", [READY, `${line(3 * MIB + 17)}\n`, EVENT, `${line(MIB + 1)}\n`, EVENT]);
	write("frame02-oversize-not-json", [READY, `${"z".repeat(2 * MIB)}\n`, EVENT]);
	write("frame02-oversize-final-line-without-lf", [READY, EVENT, line(2 * MIB)]);
	write("frame02-final-line-without-lf-at-limit", [READY, EVENT, line(MIB - 1)]);
	write("frame02-oversize-inside-chunk-sequence", [
		V2,
		chunkLine({ index: "0", count: "2" }),
		`${line(MIB + 5)}\n`,
		chunkLine({ index: "1", count: "2" }),
		AFTER,
	]);

	// ---------------------------------------------------------------- valid v2 chunked frames
	const p1 = objectPayload(MIB);
	write("valid-v2-reassembled-1mib", [V2, ...chunkLines(p1), EVENT]);
	write("valid-v2-reassembled-uneven-chunks", [
		V2,
		...chunkLines(p1, { sizes: [262144, 100000, 262144, 262144, 162144] }),
		EVENT,
	]);
	write("valid-v2-reassembled-tiny-chunks", [V2, ...chunkLines(p1, { sizes: [...Array(255).fill(4096), MIB - 255 * 4096] }), EVENT]);
	write("valid-v2-reassembled-back-to-back", [V2, ...chunkLines(p1, { chunkId: "a" }), ...chunkLines(objectPayload(MIB + 3, "second"), { chunkId: "a" }), EVENT]);
	const cl = chunkLines(p1);
	write("valid-v2-chunk-keys-reordered", [
		V2,
		...cl.map(l => {
			const o = JSON.parse(l);
			return `{"data":${JSON.stringify(o.data)},"byteLength":${o.byteLength},"count":${o.count},"index":${o.index},"chunkId":"${o.chunkId}","type":"rpc_chunk"}\n`;
		}),
		EVENT,
	]);
	write("valid-v2-chunk-escaped-type-and-slashes", [
		V2,
		...cl.map(l => l.replace('"rpc_chunk"', '"\\u0072pc_chunk"').replaceAll("/", "\\/")),
		EVENT,
	]);
	write("valid-v2-chunk-escaped-keys-and-id", [
		V2,
		...cl.map(l => l.replace('"chunkId":"rpc-1"', '"\\u0063hunkId":"rpc\\u002d1"').replace('"data"', '"d\\u0061ta"')),
		EVENT,
	]);
	write("valid-v2-chunk-extra-fields", [
		V2,
		...cl.map(l => l.replace("{", '{"x":{"data":"!!","index":-1},"arr":[1,"a"],"n":null,')),
		EVENT,
	]);
	write("valid-v2-chunk-duplicate-keys-last-wins", [
		V2,
		...cl.map(l =>
			l.replace("{", '{"index":99,"data":"!","chunkId":"","count":1,"byteLength":7,"type":"other",'),
		),
		EVENT,
	]);
	write("valid-v2-chunk-whitespace", [
		V2,
		...cl.map(l => ` ${l.slice(0, -1).replaceAll(",", " ,\t").replaceAll(":", " : ").replace("{", "{ ").replace(/}$/, " }")} \n`),
		EVENT,
	]);
	write("valid-v2-chunk-numbers-as-floats", [
		V2,
		...cl.map(l => {
			const o = JSON.parse(l);
			return l
				.replace(`"index":${o.index}`, `"index":${o.index}.0`)
				.replace(`"count":${o.count}`, `"count":${o.count}e0`)
				.replace(`"byteLength":${o.byteLength}`, `"byteLength":1.048576E6`);
		}),
		EVENT,
	]);
	write("valid-v2-chunk-index-minus-zero", [V2, cl[0].replace('"index":0', '"index":-0'), ...cl.slice(1), EVENT]);
	write("valid-v2-crlf-and-blank-lines", [V2, "\n", ...cl.map(l => l.replace("\n", "\r\n\n")), EVENT.replace("\n", "\r\n")]);
	write("valid-v2-last-chunk-without-lf", [V2, ...cl.slice(0, -1), cl[cl.length - 1].trimEnd()]);
	write("valid-v2-non-json-and-oversize-lines-inside-sequence", [
		V2,
		cl[0],
		"oops\n",
		cl[1],
		`${"y".repeat(MIB + 1)}\n`,
		cl[2],
		cl[3],
		EVENT,
	]);
	write("valid-v2-reassembled-is-chunk-shaped", [
		V2,
		...chunkLines(rawPayload(MIB, '{"type":"rpc_chunk","chunkId":"inner","index":5,"count":2,"byteLength":3,"data":"!","pad":"', '"}', 0x62)),
		EVENT,
	]);
	write("valid-v2-reassembled-bom", [V2, ...chunkLines(rawPayload(MIB, "\uFEFF{\"type\":\"bom\",\"p\":\"", '"}', 0x62)), EVENT]);
	write("valid-v2-reassembled-surrounding-whitespace", [V2, ...chunkLines(rawPayload(MIB, '\n\t {"type":"ws","p":"', '"} \r\n\t', 0x62)), EVENT]);

	// ---------------------------------------------------------------- FRAME-08 payload size
	const big = objectPayload(262145);
	write("frame08-payload-262145-bytes", [V2, `${JSON.stringify({ type: "rpc_chunk", chunkId: "c1", index: 0, count: 4, byteLength: MIB, data: Buffer.from(big).toString("base64") })}\n`, AFTER]);
	write("frame08-accepts-payload-262144-bytes", [V2, `${JSON.stringify({ type: "rpc_chunk", chunkId: "c1", index: 0, count: 4, byteLength: MIB, data: Buffer.from(big.subarray(0, 262144)).toString("base64") })}\n`]);

	// ---------------------------------------------------------------- FRAME-09 exceeds declared length
	write("frame09-exceeds-declared-length", [
		V2,
		...chunkLines(objectPayload(MIB + 262144)).map(l => l.replace(`"count":5`, '"count":6').replace(`"byteLength":${MIB + 262144}`, `"byteLength":${MIB}`)),
		AFTER,
	]);
	write("frame09-length-mismatch-one-byte-short", [
		V2,
		...chunkLines(objectPayload(MIB - 1)).map(l => l.replace(`"byteLength":${MIB - 1}`, `"byteLength":${MIB}`)),
		AFTER,
	]);

	// ---------------------------------------------------------------- FRAME-10 reassembled payloads
	const pay = (name: string, payload: Uint8Array) => write(`frame10-${name}`, [V2, ...chunkLines(payload), AFTER]);
	pay("reassembled-invalid-utf8-ff", rawPayload(MIB, '{"type":"x","p":"', Uint8Array.from([0xff, 0x22, 0x7d]), 0x62));
	pay("reassembled-invalid-utf8-overlong", rawPayload(MIB, Uint8Array.from([...enc.encode('{"type":"x","p":"'), 0xc0, 0xaf]), '"}', 0x62));
	pay("reassembled-invalid-utf8-surrogate", rawPayload(MIB, Uint8Array.from([...enc.encode('{"type":"x","p":"'), 0xed, 0xa0, 0x80]), '"}', 0x62));
	pay("reassembled-invalid-utf8-truncated-at-end", rawPayload(MIB, '{"type":"x","p":"', Uint8Array.from([0x22, 0x7d, 0xe2, 0x82]), 0x62));
	pay("reassembled-invalid-utf8-lone-continuation", rawPayload(MIB, '{"type":"x","p":"', Uint8Array.from([0x80, 0x22, 0x7d]), 0x62));
	pay("reassembled-invalid-utf8-and-invalid-json", rawPayload(MIB, Uint8Array.from([0xff]), "", 0x62));
	pay("reassembled-not-json", rawPayload(MIB, "not json ", "", 0x62));
	pay("reassembled-truncated-json", rawPayload(MIB, '{"type":"x","p":"', "", 0x62));
	pay("reassembled-trailing-garbage", rawPayload(MIB, '{"type":"x"}', "x", 0x20));
	pay("reassembled-two-objects", rawPayload(MIB, '{"type":"x"}', '{"type":"y"}', 0x20));
	pay("reassembled-array", rawPayload(MIB, '["', '"]', 0x62));
	pay("reassembled-string", rawPayload(MIB, '"', '"', 0x62));
	pay("reassembled-number", rawPayload(MIB, "1", "", 0x30));
	pay("reassembled-null", rawPayload(MIB, "null", "", 0x20));
	pay("reassembled-bom-then-array", rawPayload(MIB, "\uFEFF[", "]", 0x20));
	pay("reassembled-double-bom", rawPayload(MIB, "\uFEFF\uFEFF{", "}", 0x20));
	pay("reassembled-all-whitespace", rawPayload(MIB, "", "", 0x20));

	// ---------------------------------------------------------------- real encoder streams
	const agentStream = (version: 1 | 2, frames: object[]): string => {
		const e = new RpcFrameEncoder();
		let s = e.encode(JSON.parse(READY));
		s += e.encode(JSON.parse(NEG));
		if (version === 2) e.setProtocolVersion(2);
		for (const f of frames) s += e.encode(f);
		return s;
	};
	const msgs = (n: number, len: number) =>
		Array.from({ length: n }, (_, i) => ({
			role: "toolResult",
			toolCallId: `call_${i}`,
			toolName: i % 2 ? "bash" : "read",
			content: [{ type: "text", text: `résultat ${i} — ${"ligne\n\t\"x\" ".repeat(len)}😀\u2028` }],
			isError: i % 7 === 0,
			timestamp: 1700000000000 + i,
		}));
	const frames: object[] = [
		{ type: "agent_start" },
		{ type: "message_update", message: { role: "assistant", content: [] }, assistantMessageEvent: { type: "text_delta", delta: "héllo" } },
		{ id: "req-1", type: "response", command: "get_messages", success: true, data: { messages: msgs(300, 400) } },
		{ id: "req-2", type: "response", command: "get_messages", success: true, data: { messages: msgs(5, 10) } },
		{ type: "message_end", message: { role: "assistant", content: [{ type: "text", text: "x".repeat(2 * MIB) }] } },
		{ id: "req-3", type: "response", command: "get_messages", success: true, data: { messages: msgs(3000, 100) } },
		{ type: "agent_end", messages: [] },
	];
	// Logical frames right at the chunking boundary: a line of exactly maxFrameBytes is not
	// chunked, one byte more is.
	const exact = (n: number) => {
		const f = { type: "pad", p: "" };
		f.p = "q".repeat(n - JSON.stringify(f).length);
		return f;
	};
	write("valid-v2-real-encoder", [agentStream(2, frames)]);
	write("valid-v2-real-encoder-boundary", [agentStream(2, [exact(MAX_RPC_FRAME_BYTES - 1), exact(MAX_RPC_FRAME_BYTES), exact(MAX_RPC_FRAME_BYTES + 1)])]);
	write("valid-v1-real-encoder-shrinks", [agentStream(1, frames)]);
	// Logical frames (JSONL, not a stream) for the encode round trips and the encode
	// differential test: integers only, so serde_json and JSON.stringify serialize them alike.
	writeFileSync(
		join(outDir, "roundtrip.frames.jsonl"),
		[
			JSON.parse(READY),
			JSON.parse(NEG),
			...frames.slice(0, 6),
			exact(MAX_RPC_FRAME_BYTES - 1),
			exact(MAX_RPC_FRAME_BYTES),
			{ type: "message_update", text: "ü\u2028😀\"\\\n".repeat(400000), n: [0, -1, 9007199254740991] },
			{ type: "agent_end", messages: [] },
		]
			.map(f => `${JSON.stringify(f)}\n`)
			.join(""),
	);
	// v1 stream from a v1-only agent (`pi`): no ready frame, last line without LF
	write("valid-v1-no-ready-final-line-without-lf", [EVENT, JSON.stringify({ type: "message_end", message: msgs(1, 50)[0] })]);
}

console.error(`gen-corpus: wrote ${written} ${set} streams to ${outDir}`);
