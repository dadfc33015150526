// Reference side of the scale benchmark: N `musewire agent` sessions driven from this one bun
// process by the reference agent's own client, `RpcClient` (oh-my-pi 18.2.3,
// src/modes/rpc/rpc-client.ts, imported from the installed package, never copied).
//
//   bun conformance/bench/scale.ts MUSEWIRE_BIN [SESSIONS=200] [CALLS=50] [WORDS=64]
//
// The same phases and output as the Rust side (`cargo run --release -p musewire-live
// --example scale`): N clients started (`MUSEWIRE_BIN agent --mode rpc`, v2 negotiated by the
// client itself) and one getState() each, RSS per idle session; CALLS sequential getState()
// per session, all at once; one WORDS-word prompt per session, acknowledged, then its events
// to `agent_end`. Host CPU is process.resourceUsage() (getrusage(RUSAGE_SELF): this process
// only, not the agents). Prints one flat JSON line.

import { RpcClient } from "../peers/node_modules/@oh-my-pi/pi-coding-agent/src/modes/rpc/rpc-client.ts";

const [bin, sessionsArg, callsArg, wordsArg] = process.argv.slice(2);
if (!bin) {
	console.error("usage: scale.ts MUSEWIRE_BIN [SESSIONS] [CALLS] [WORDS]");
	process.exit(2);
}
const sessions = Number(sessionsArg ?? 200);
const calls = Number(callsArg ?? 50);
const words = Number(wordsArg ?? 64);
const prompt = Array.from({ length: words }, (_, i) => `word${i}`).join(" ");

/** This process's [user, system] CPU seconds so far. */
const cpuSeconds = () => {
	const u = process.resourceUsage();
	return [u.userCPUTime / 1e6, u.systemCPUTime / 1e6] as const;
};
const rssKb = () => Math.round(process.memoryUsage().rss / 1024);
const meter = () => {
	const wall = performance.now();
	const cpu = cpuSeconds();
	return () => {
		const [user, sys] = cpuSeconds();
		return { wall: (performance.now() - wall) / 1000, user: user - cpu[0], sys: sys - cpu[1] };
	};
};
/** Nearest-rank quantile of sorted milliseconds. */
const quantile = (v: number[], q: number) => v[Math.min(v.length, Math.max(1, Math.ceil(q * v.length))) - 1];
const sorted = (v: number[]) => [...v].sort((a, b) => a - b);

const rssBefore = rssKb();
const clients = Array.from({ length: sessions }, () => new RpcClient({ command: [bin, "agent"] }));
await Promise.all(clients.map(c => c.start()));
await Promise.all(clients.map(c => c.getState()));
const rssIdle = rssKb();

let stop = meter();
const roundTrips = (
	await Promise.all(
		clients.map(async c => {
			const times: number[] = [];
			for (let i = 0; i < calls; i++) {
				const t = performance.now();
				await c.getState();
				times.push(performance.now() - t);
			}
			return times;
		}),
	)
).flat();
const rt = stop();

stop = meter();
const turns = await Promise.all(
	clients.map(async c => {
		const t = performance.now();
		const end = new Promise<number>(resolve => {
			const off = c.onEvent(event => {
				if (event.type === "agent_end") {
					off();
					resolve(performance.now() - t);
				}
			});
		});
		await c.prompt(prompt);
		const ack = performance.now() - t;
		return { ack, end: await end };
	}),
);
const turn = stop();
await Promise.all(clients.map(c => c.stop()));

const rtts = sorted(roundTrips);
const acks = sorted(turns.map(t => t.ack));
const ends = sorted(turns.map(t => t.end));
const f = (x: number, d: number) => Number(x.toFixed(d));
console.log(
	JSON.stringify({
		client: "reference",
		sessions,
		round_trips: rtts.length,
		rt_wall_s: f(rt.wall, 4),
		rt_cpu_s: f(rt.user + rt.sys, 4),
		rt_user_s: f(rt.user, 4),
		rt_sys_s: f(rt.sys, 4),
		rt_per_s: f(rtts.length / rt.wall, 1),
		rt_p50_ms: f(quantile(rtts, 0.5), 3),
		rt_p99_ms: f(quantile(rtts, 0.99), 3),
		rt_max_ms: f(quantile(rtts, 1), 3),
		turn_wall_s: f(turn.wall, 4),
		turn_cpu_s: f(turn.user + turn.sys, 4),
		turn_user_s: f(turn.user, 4),
		turn_sys_s: f(turn.sys, 4),
		ack_p50_ms: f(quantile(acks, 0.5), 3),
		ack_max_ms: f(quantile(acks, 1), 3),
		end_p50_ms: f(quantile(ends, 0.5), 3),
		end_max_ms: f(quantile(ends, 1), 3),
		rss_before_kb: rssBefore,
		rss_idle_kb: rssIdle,
		idle_kb_per_session: f((rssIdle - rssBefore) / sessions, 1),
	}),
);
process.exit(0);
