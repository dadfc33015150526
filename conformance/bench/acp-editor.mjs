// The editor side of conformance/bench/acp.sh: a raw ACP (JSON-RPC 2.0, one JSON object a
// line) client that drives one ACP agent through the bench's scripted-model turns and measures
// each. Not a test: run by acp.sh, by hand.
//
//   node acp-editor.mjs run SIDE SENDLOG [--per-session-process | --rpc] -- PROGRAM ARGS…
//   node acp-editor.mjs report RESULTS.jsonl
//
// `run` starts PROGRAM (the bridge: `musewire acp -- …`, `omp --mode acp`, pi-acp) with this
// process's environment, in ACP_WORK (the sessions' cwd), then: initialize; one session and a
// warm-up turn; the `long` turn (ACP_WORDS words streamed, ACP_PACE_MS between chunks); the
// `tool` turn (bash `cat ACP_FILE`, a 1 MB file); then ACP_SESSIONS more sessions, a warm-up turn
// each, and the `sessions` turn (all at once, ACP_SESSION_WORDS words each). With
// `--per-session-process` every session of the `sessions` turn gets its own PROGRAM (pi-acp
// keeps one session a process: its session/new closes the others). Permission requests are
// answered allow-once. With `--rpc` PROGRAM is the agent itself (`omp --mode rpc`, `pi --mode
// rpc`) driven over its own RPC, a process a session, no bridge: the baseline of the agent's
// own CPU and delay (its `message_update` text deltas stand for the updates). One JSON line
// per turn goes to stdout.
//
// Per turn: wall time (first prompt sent → last answer), CPU (utime+stime from
// /proc/PID/stat, in ms) of the bridge process(es) and, apart, of every process below them
// plus what they reaped (the agents and their tools), the bridge's peak RSS (VmHWM, reset by
// `clear_refs` 5 before the turn; summed over bridges), the session/update count, and the
// delay of each streamed word: the model server's CLOCK_MONOTONIC send time (its send log,
// SENDLOG) to this process's receipt of the session/update carrying it (process.hrtime, the
// same clock), p50/p99/max in ms.
import { spawn } from "node:child_process";
import fs from "node:fs";

const TICK_MS = 1000 / Number(process.env.CLK_TCK ?? 100);
const env = (k, d) => process.env[k] ?? d;

if (process.argv[2] === "report") {
  report(process.argv[3]);
  process.exit(0);
}

const [, , mode, side, sendLog, ...rest] = process.argv;
if (mode !== "run") {
  console.error("usage: acp-editor.mjs run SIDE SENDLOG [--per-session-process] -- PROGRAM ARGS… | report FILE");
  process.exit(2);
}
let perSessionProcess = false;
let rpc = false;
while (rest[0] !== "--") {
  const flag = rest.shift();
  if (flag === "--per-session-process") perSessionProcess = true;
  else if (flag === "--rpc") rpc = perSessionProcess = true;
  else throw new Error(`unknown flag ${flag}`);
}
rest.shift();
const [program, ...args] = rest;
const work = env("ACP_WORK", process.cwd());
const words = Number(env("ACP_WORDS", 2000));
const sessionWords = Number(env("ACP_SESSION_WORDS", 200));
const sessions = Number(env("ACP_SESSIONS", 20));
const pace = Number(env("ACP_PACE_MS", 1));
const file = env("ACP_FILE", "");
const turnTimeout = Number(env("ACP_TURN_TIMEOUT_S", 300)) * 1000;
const run = env("ACP_RUN", "1");

/// One bridge process and its JSON-RPC connection.
class Conn {
  constructor(name) {
    const stderr = fs.openSync(`${work}/../${side}-${name}.stderr`, "a");
    this.child = spawn(program, args, { cwd: work, stdio: ["pipe", "pipe", stderr] });
    this.pid = this.child.pid;
    this.nextId = 1;
    this.bytes = 0;
    this.pending = new Map();
    this.onUpdate = () => {};
    this.exited = new Promise(resolve => this.child.on("exit", resolve));
    let buf = "";
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", data => {
      const t = process.hrtime.bigint();
      this.bytes += data.length;
      buf += data;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim()) this.handle(JSON.parse(line), t);
      }
    });
    this.child.on("exit", code => {
      for (const [, p] of this.pending) p.reject(new Error(`${side}: the bridge exited (${code})`));
    });
  }
  send(message) {
    this.child.stdin.write(JSON.stringify(rpc ? message : { jsonrpc: "2.0", ...message }) + "\n");
  }
  /// A prompt; resolves with its answer (ACP) or at `agent_end` (RPC), and the time it came.
  prompt(sessionId, text) {
    if (!rpc) return this.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
    const id = `p${this.nextId++}`;
    this.send({ id, type: "prompt", message: text });
    return new Promise((resolve, reject) => {
      this.turnEnd = { resolve, reject };
      this.pending.set(id, { resolve: () => {}, reject });
    });
  }
  /// The agent's own RPC (`--rpc`): answers by `id`, `agent_end` ends a prompt, a
  /// `message_update`'s text delta stands for an `agent_message_chunk`.
  handleRpc(m, t) {
    if (m.type === "response") {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (!p) return;
      if (m.success === false) p.reject(new Error(`${side}: ${JSON.stringify(m)}`));
      else p.resolve({ result: m.data, t });
      return;
    }
    if (m.type === "ready") return;
    if (m.type === "agent_end" && m.willContinue !== true && this.turnEnd) {
      const end = this.turnEnd;
      this.turnEnd = null;
      return end.resolve({ result: { stopReason: "agent_end" }, t });
    }
    const e = m.assistantMessageEvent;
    const update = e?.type === "text_delta" ? { sessionUpdate: "agent_message_chunk", content: { type: "text", text: e.delta } } : { sessionUpdate: m.type };
    this.onUpdate({ update }, t);
  }
  request(method, params) {
    const id = this.nextId++;
    this.send({ id, method, params });
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }
  handle(m, t) {
    if (rpc) return this.handleRpc(m, t);
    if (m.method === "session/update") return this.onUpdate(m.params, t);
    if (m.method && m.id !== undefined) {
      if (m.method === "session/request_permission") {
        const options = m.params.options ?? [];
        const pick = options.find(o => o.kind === "allow_once") ?? options.find(o => o.kind?.startsWith("allow")) ?? options[0];
        return this.send({ id: m.id, result: { outcome: pick ? { outcome: "selected", optionId: pick.optionId } : { outcome: "cancelled" } } });
      }
      return this.send({ id: m.id, error: { code: -32601, message: `not offered: ${m.method}` } });
    }
    if (m.method) return;
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (m.error) p.reject(new Error(`${side}: ${JSON.stringify(m.error)}`));
    else p.resolve({ result: m.result, t });
  }
  async open() {
    if (rpc) {
      const id = `s${this.nextId++}`;
      this.send({ id, type: "get_state" });
      return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    }
    await this.request("initialize", {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    });
  }
  async newSession() {
    if (rpc) return "rpc";
    const { result } = await this.request("session/new", { cwd: work, mcpServers: [] });
    return result.sessionId;
  }
  async close() {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGTERM"), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}

const withTimeout = (promise, what) =>
  Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error(`${side}: ${what} timed out`)), turnTimeout).unref())]);

// /proc accounting.
function stat(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    // After the command: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
    return { ppid: Number(f[1]), own: Number(f[11]) + Number(f[12]), reaped: Number(f[13]) + Number(f[14]) };
  } catch {
    return null;
  }
}
/// CPU ticks of the roots themselves, and of everything below them (live descendants, with
/// what they reaped, and what the roots reaped).
function cpu(roots) {
  const procs = new Map();
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const s = stat(name);
    if (s) procs.set(Number(name), s);
  }
  const children = new Map();
  for (const [pid, s] of procs) {
    if (!children.has(s.ppid)) children.set(s.ppid, []);
    children.get(s.ppid).push(pid);
  }
  let bridge = 0;
  let below = 0;
  for (const root of roots) {
    const r = procs.get(root);
    if (!r) continue;
    bridge += r.own;
    below += r.reaped;
    const stack = [...(children.get(root) ?? [])];
    while (stack.length) {
      const pid = stack.pop();
      const s = procs.get(pid);
      below += s.own + s.reaped;
      stack.push(...(children.get(pid) ?? []));
    }
  }
  return { bridge, below };
}
/// Bytes the roots read and wrote (/proc/PID/io rchar, wchar: pipes, sockets and files).
function io(roots) {
  let read = 0;
  let wrote = 0;
  for (const pid of roots) {
    try {
      const text = fs.readFileSync(`/proc/${pid}/io`, "utf8");
      read += Number(text.match(/rchar:\s+(\d+)/)[1]);
      wrote += Number(text.match(/wchar:\s+(\d+)/)[1]);
    } catch {}
  }
  return { read, wrote };
}
function resetPeak(pid) {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, "5");
  } catch {}
}
function peakKb(pid) {
  try {
    const m = fs.readFileSync(`/proc/${pid}/status`, "utf8").match(/VmHWM:\s+(\d+)/);
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/// The model server's send times, by the word they sent (trimmed).
function sendTimes() {
  const times = new Map();
  let text = "";
  try {
    text = fs.readFileSync(sendLog, "utf8");
  } catch {}
  for (const line of text.split("\n")) {
    if (!line) continue;
    const [mono, , , , content] = line.split("\t");
    const word = JSON.parse(content).trim();
    if (word && !times.has(word)) times.set(word, BigInt(mono));
  }
  return times;
}

const pct = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : null);
const tagOf = () => Math.random().toString(36).slice(2, 7).replace(/\d/g, "q");

/// Runs one turn: a prompt in each of `targets` ({conn, session, prompt, tag}) at once.
async function turn(name, targets) {
  const conns = [...new Set(targets.map(t => t.conn))];
  const roots = conns.map(c => c.pid);
  const received = new Map(); // word → receipt time
  let updates = 0;
  const pattern = /\b([a-z]+w\d{5})\b/g;
  for (const c of conns) {
    c.onUpdate = (params, t) => {
      updates++;
      const u = params.update ?? {};
      if (u.sessionUpdate === "agent_message_chunk" && u.content?.type === "text") {
        for (const m of u.content.text.matchAll(pattern)) if (!received.has(m[1])) received.set(m[1], t);
      }
    };
  }
  for (const r of roots) resetPeak(r);
  for (const c of conns) c.bytes = 0;
  const ioBefore = io(roots);
  const before = cpu(roots);
  const start = process.hrtime.bigint();
  const answers = await withTimeout(
    Promise.all(targets.map(t => t.conn.prompt(t.session, t.prompt))),
    name,
  );
  const end = answers.reduce((a, b) => (b.t > a ? b.t : a), start);
  const after = cpu(roots);
  const ioAfter = io(roots);
  const peak = roots.reduce((sum, r) => sum + peakKb(r), 0);
  for (const c of conns) c.onUpdate = () => {};
  // The server writes a stream's send times once it ends: wait for them.
  let times = sendTimes();
  const wanted = targets.reduce((n, t) => n + t.words, 0);
  for (let i = 0; i < 50 && [...received.keys()].some(w => !times.has(w)); i++) {
    await new Promise(r => setTimeout(r, 100));
    times = sendTimes();
  }
  const delays = [];
  for (const [word, t] of received) {
    const sent = times.get(word);
    if (sent !== undefined) delays.push(Number(t - sent) / 1e6);
  }
  delays.sort((a, b) => a - b);
  const out = {
    side,
    run,
    turn: name,
    sessions: targets.length,
    bridges: roots.length,
    stop: [...new Set(answers.map(a => a.result.stopReason))].join(","),
    wall_ms: Number(end - start) / 1e6,
    bridge_cpu_ms: (after.bridge - before.bridge) * TICK_MS,
    agent_cpu_ms: (after.below - before.below) * TICK_MS,
    bridge_peak_kb: peak,
    updates,
    bridge_read_bytes: ioAfter.read - ioBefore.read,
    editor_read_bytes: conns.reduce((n, c) => n + c.bytes, 0),
    words_sent: wanted,
    words_received: received.size,
    delay_p50_ms: pct(delays, 50),
    delay_p99_ms: pct(delays, 99),
    delay_max_ms: delays.length ? delays[delays.length - 1] : null,
  };
  console.log(JSON.stringify(out));
  return out;
}

const text = (tag, n) => {
  const ws = [];
  for (let i = 0; i < n; i++) ws.push(`${tag}w${String(i).padStart(5, "0")}`);
  return `[[slow ${pace}]] [[text ${ws.join(" ")}]]`;
};

async function main() {
  const first = new Conn("0");
  await withTimeout(first.open(), "initialize");
  const s0 = await withTimeout(first.newSession(), "session/new");
  await withTimeout(first.prompt(s0, "[[text warm up]]"), "warm-up");

  await turn("long", [{ conn: first, session: s0, prompt: text(tagOf(), words), words }]);
  if (file) {
    const tool = `[[tool bash ${JSON.stringify({ command: `cat ${file}` })}]]`;
    await turn("tool", [{ conn: first, session: s0, prompt: tool, words: 0 }]);
  }

  // The sessions turn: pi-acp closes a connection's other sessions on session/new, so for it
  // every session has its own process; the others take them all on one.
  if (perSessionProcess) await first.close();
  const conns = [];
  const opened = [];
  for (let i = 0; i < sessions; i++) {
    const conn = perSessionProcess ? new Conn(String(i + 1)) : first;
    if (perSessionProcess) {
      conns.push(conn);
      await withTimeout(conn.open(), "initialize");
    }
    opened.push(withTimeout(conn.newSession(), "session/new").then(session => ({ conn, session })));
  }
  const all = await Promise.all(opened);
  await withTimeout(
    Promise.all(all.map(({ conn, session }) => conn.prompt(session, "[[text warm up]]"))),
    "warm-up",
  );
  await turn(
    "sessions",
    all.map(({ conn, session }) => ({ conn, session, prompt: text(tagOf(), sessionWords), words: sessionWords })),
  );
  await Promise.all((perSessionProcess ? conns : [first]).map(c => c.close()));
}

main().then(() => process.exit(0), e => {
  console.error(`acp-editor.mjs: ${e.stack ?? e}`);
  process.exit(1);
});

/// The table: every figure per side and turn, then the ratios musewire/omp-acp and
/// musewire/pi-acp, one table per run.
function report(path) {
  const rows = fs
    .readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map(l => JSON.parse(l));
  const runs = [...new Set(rows.map(r => r.run))];
  const sides = ["omp-rpc", "omp-acp", "musewire-omp", "pi-rpc", "pi-acp", "musewire-pi"];
  const f = (v, d = 1) => (v === null || v === undefined || Number.isNaN(v) ? "-" : v.toFixed(d));
  const ratio = (a, b) => (a === null || b === null || a === undefined || b === undefined || b === 0 ? "-" : (a / b).toFixed(2) + "x");
  for (const run of runs) {
    const at = (side, turn) => rows.find(r => r.run === run && r.side === side && r.turn === turn);
    console.log(`\nrun ${run}`);
    console.log(
      "| turn | side | wall ms | bridge CPU ms | agent CPU ms | bridge/agent CPU | bridge CPU µs/update | updates | bridge peak RSS MB | bridge read MB (from agent and editor) | editor read MB | delay p50 ms | p99 ms | max ms | words seen |",
    );
    console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (const turn of ["long", "tool", "sessions"]) {
      for (const side of sides) {
        const r = at(side, turn);
        if (!r) continue;
        const total = side === "omp-acp" || side.endsWith("-rpc");
        console.log(
          `| ${turn} | ${side}${r.bridges > 1 ? ` (${r.bridges} procs)` : ""} | ${f(r.wall_ms, 0)} | ${f(r.bridge_cpu_ms, 0)}${side === "omp-acp" ? " (all omp)" : side.endsWith("-rpc") ? " (agent, no bridge)" : ""} | ${f(r.agent_cpu_ms, 0)} | ${total ? "-" : ratio(r.bridge_cpu_ms, r.agent_cpu_ms)} | ${total ? "-" : f((1000 * r.bridge_cpu_ms) / Math.max(1, r.updates), 1)} | ${r.updates} | ${f(r.bridge_peak_kb / 1024, 1)}${total ? " (agent)" : ""} | ${total ? "-" : f(r.bridge_read_bytes / 2 ** 20, 1)} | ${f(r.editor_read_bytes / 2 ** 20, 1)} | ${f(r.delay_p50_ms, 2)} | ${f(r.delay_p99_ms, 2)} | ${f(r.delay_max_ms, 1)} | ${r.words_received}/${r.words_sent} |`,
        );
      }
    }
    console.log(`\nrun ${run}: ratios (musewire / peer, same run; lower is better)`);
    console.log("| turn | figure | musewire-omp / omp-acp | musewire-pi / pi-acp |");
    console.log("|---|---|---|---|");
    for (const turn of ["long", "tool", "sessions"]) {
      const mo = at("musewire-omp", turn);
      const oa = at("omp-acp", turn);
      const mp = at("musewire-pi", turn);
      const pa = at("pi-acp", turn);
      const get = (r, fn) => (r ? fn(r) : null);
      const figures = [
        ["wall time", r => r.wall_ms],
        // omp-acp is bridge and agent in one process: its whole CPU against ours, bridge and agent.
        ["CPU, bridge + agent", r => r.bridge_cpu_ms + r.agent_cpu_ms],
        ["CPU, bridge only (omp-acp: all of it)", r => r.bridge_cpu_ms],
        ["bridge CPU per update", r => r.bridge_cpu_ms / Math.max(1, r.updates)],
        ["agent CPU (pi only: omp-acp has no agent apart)", r => r.agent_cpu_ms],
        ["bridge peak RSS", r => r.bridge_peak_kb],
        ["delay p50", r => r.delay_p50_ms],
        ["delay p99", r => r.delay_p99_ms],
      ];
      for (const [name, fn] of figures) {
        const omp = name.startsWith("agent CPU") ? "-" : ratio(get(mo, fn), get(oa, fn));
        console.log(`| ${turn} | ${name} | ${omp} | ${ratio(get(mp, fn), get(pa, fn))} |`);
      }
      // Against the agent driven over its own RPC with no bridge (omp-rpc, pi-rpc).
      const or = at("omp-rpc", turn);
      const pr = at("pi-rpc", turn);
      const own = r => (r ? r.bridge_cpu_ms + r.agent_cpu_ms : null);
      console.log(`| ${turn} | bridge CPU / the agent's CPU alone (no bridge, -rpc) | ${ratio(mo?.bridge_cpu_ms, own(or))} | ${ratio(mp?.bridge_cpu_ms, own(pr))} |`);
      console.log(`| ${turn} | agent CPU under musewire / alone | ${ratio(mo?.agent_cpu_ms, own(or))} | ${ratio(mp?.agent_cpu_ms, own(pr))} |`);
      const minus = (a, b) => (a === null || b === null || a === undefined || b === undefined ? "-" : `${(a - b).toFixed(2)} ms`);
      console.log(`| ${turn} | delay p50 added, musewire − agent alone | ${minus(mo?.delay_p50_ms, or?.delay_p50_ms)} | ${minus(mp?.delay_p50_ms, pr?.delay_p50_ms)} |`);
      console.log(`| ${turn} | delay p99 added, musewire − agent alone | ${minus(mo?.delay_p99_ms, or?.delay_p99_ms)} | ${minus(mp?.delay_p99_ms, pr?.delay_p99_ms)} |`);
    }
  }
}
