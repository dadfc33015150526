// Interop: the reference agent's own client drives `musewire agent`.
//
// Run with the pinned bun: conformance/peers/node_modules/.bin/bun conformance/reference/interop.ts MUSEWIRE_BIN
//
// `RpcClient` (oh-my-pi 18.2.3, src/modes/rpc/rpc-client.ts), imported from the installed
// package by path (never copied), starts `MUSEWIRE_BIN agent` (it appends `--mode rpc` and the
// provider, model and session-dir flags), negotiates v2 by itself when the ready frame
// advertises the reference limits, registers a host tool, prompts and collects the events to
// the end of each turn, runs `bash` (a 1.2 MB output, which only v2 chunking can carry) and
// `abortBash`, drains the history with `getMessages()` (the paged walk, over 1 MiB), and
// prints one JSON summary line. A step that throws is reported in `errors`, not fatal.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RpcClient } from "../peers/node_modules/@oh-my-pi/pi-coding-agent/src/modes/rpc/rpc-client.ts";

const bin = process.argv[2];
if (!bin) {
	console.error("usage: interop.ts MUSEWIRE_BIN");
	process.exit(2);
}

const sessionDir = mkdtempSync(join(tmpdir(), "musewire-interop-"));
const hostCalls: unknown[] = [];
// INTEROP_COMMAND (a JSON array) replaces `[MUSEWIRE_BIN, "agent"]`, e.g. to run the session
// through `musewire tap`.
const command: string[] = process.env.INTEROP_COMMAND ? JSON.parse(process.env.INTEROP_COMMAND) : [bin, "agent"];
const client = new RpcClient({
	command,
	provider: "interop-provider",
	model: "interop-model",
	sessionDir,
	env: { MUSEWIRE_AGENT_CLOCK_MS: "1700000000000" },
	customTools: [
		{
			name: "lookup",
			description: "Looks a word up",
			parameters: { type: "object", properties: { q: { type: "string" } } },
			async execute(params, context) {
				hostCalls.push(params);
				context.sendUpdate("looking");
				return `definition of ${String((params as { q?: unknown }).q)}`;
			},
		},
	],
});

const summary: Record<string, unknown> = {};
const errors: Record<string, string> = {};
const step = async (name: string, run: () => Promise<unknown>) => {
	try {
		summary[name] = await run();
	} catch (error) {
		errors[name] = error instanceof Error ? error.message : String(error);
	}
};
const eventSummary = (events: Array<{ type: string; [k: string]: unknown }>) => ({
	types: events.map(e => e.type),
	textDeltas: events
		.filter(e => e.type === "message_update")
		.map(e => e.assistantMessageEvent as { type: string; delta?: string })
		.filter(e => e.type === "text_delta")
		.map(e => e.delta),
	tools: events
		.filter(e => e.type === "tool_execution_end")
		.map(e => ({ name: e.toolName, isError: e.isError })),
});

await step("start", async () => {
	await client.start();
	return true;
});
if (!errors.start) {
	await step("state", async () => {
		const state = await client.getState();
		return { model: state.model, sessionId: state.sessionId, isStreaming: state.isStreaming };
	});
	await step("echo", async () => eventSummary(await client.promptAndWait("hello from the reference client")));
	await step("hostTool", async () => {
		const events = eventSummary(await client.promptAndWait('call lookup {"q": "musewire"}'));
		return { ...events, hostCalls, lastText: await client.getLastAssistantText() };
	});
	await step("think", async () => eventSummary(await client.promptAndWait("think it over")));
	await step("todo", async () => {
		const events = eventSummary(await client.promptAndWait("todo one; two"));
		return { ...events, todoPhases: (await client.getState()).todoPhases };
	});
	await step("bigBash", async () => {
		const result = await client.bash("head -c 1200000 /dev/zero | tr '\\0' b");
		return { outputBytes: result.output.length, exitCode: result.exitCode, cancelled: result.cancelled };
	});
	await step("abortBash", async () => {
		const running = client.bash("echo started; sleep 30");
		await Bun.sleep(300);
		const started = Date.now();
		await client.abortBash();
		const result = await running;
		return { output: result.output, cancelled: result.cancelled, exitCode: result.exitCode ?? null, fast: Date.now() - started < 10_000 };
	});
	await step("messages", async () => {
		const messages = await client.getMessages();
		const state = await client.getState();
		return {
			count: messages.length,
			messageCount: state.messageCount,
			roles: messages.map(m => m.role),
			serializedBytes: JSON.stringify(messages).length,
			largestBashOutput: Math.max(
				...messages.map(m => (m.role === "bashExecution" ? (m as { output: string }).output.length : 0)),
			),
		};
	});
	await step("page", async () => {
		const page = await client.getMessagesPage({ limit: 3 });
		return { count: page.messages.length, total: page.totalMessages, hasNext: typeof page.nextCursor === "string" };
	});
	await step("unsupported", async () => {
		try {
			await client.compact();
			return "accepted";
		} catch (error) {
			return error instanceof Error ? error.message : String(error);
		}
	});
	await step("newSession", async () => {
		const result = await client.newSession();
		const state = await client.getState();
		return { ...result, sessionId: state.sessionId, messageCount: state.messageCount };
	});
}
await client.stop();
rmSync(sessionDir, { recursive: true, force: true });
console.log(JSON.stringify({ ...summary, errors }));
