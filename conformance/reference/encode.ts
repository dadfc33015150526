// Reference side of `musewire encode`: reads logical frames (JSONL, one JSON object per line,
// any size) on stdin and writes the physical stream the reference agent writes, using the real
// `RpcFrameEncoder` of oh-my-pi 18.2.3 (imported from the installed package, never copied).
//
//   bun conformance/reference/encode.ts [--protocol 1|2]      (default 1)
//
// With --protocol 2 the encoder is in v2 from the first frame (the ready frame and the
// negotiate_protocol response are small, so they are written the same in v1 and v2).

import { RpcFrameEncoder } from "../peers/node_modules/@oh-my-pi/pi-coding-agent/src/modes/rpc/rpc-frame.ts";

const args = process.argv.slice(2);
let protocol = 1;
for (let i = 0; i < args.length; i++) {
	if (args[i] === "--protocol" && (args[i + 1] === "1" || args[i + 1] === "2")) protocol = Number(args[++i]);
	else {
		console.error("usage: bun encode.ts [--protocol 1|2]");
		process.exit(2);
	}
}

const encoder = new RpcFrameEncoder();
encoder.setProtocolVersion(protocol);
const writer = Bun.stdout.writer();
const input = Buffer.from(await Bun.stdin.arrayBuffer());
let start = 0;
while (start < input.length) {
	let end = input.indexOf(0x0a, start);
	if (end === -1) end = input.length;
	const line = input.toString("utf8", start, end);
	start = end + 1;
	if (line.trim() === "") continue;
	for (const physical of encoder.encodeFrames(JSON.parse(line))) {
		writer.write(physical);
		await writer.flush();
	}
}
await writer.end();
