// Drives `musewire acp` with the official ACP TypeScript SDK (@agentclientprotocol/sdk 2.x)
// and prints what it observed as one JSON object; drivers/cli/tests/acp_sdk/ asserts on it.
// Usage: node acp-client.mjs SDK_DIR PROGRAM [ARGS…]  (the ACP agent to run, e.g.
// `musewire acp` or `musewire acp -- omp --mode rpc`). ACP_SCENARIO picks the prompts:
// `bundled` (default: the bundled agent's script) or `omp` (the live model server's markers);
// ACP_CWD is the sessions' cwd (default: the temp dir). Three more scenarios (ACP-06, OUT-*):
// `load-create` (a plan and usage in a new session; prints its id; `omp-load-create` the
// same over omp's scripted model, a text turn), `load-resume` (loads
// ACP_SESSION after a restart of the bridge, then /status) and `output` (a large bash output
// read back page by page through _muse/readOutput into ACP_OUT_FILE, then refused reads).
// Two more (ACP-08, ACP-09): `ask` (the bundled agent's `ask` confirm answered yes, then no)
// and `omp-approval` (omp with --approval-mode always-ask: a bash call allowed once, rejected
// once, allowed always, then run again unasked; then `/session`, a builtin omp answers itself,
// and a model turn after it); their permission requests are answered by option kind, so the
// same scenario runs against omp's own ACP mode. With ACP_CANCELS=1, between the rejected call
// and the one allowed always: an approval answered `cancelled`, one the editor leaves open and
// cancels the turn under, and a text turn after them (ACP-08). `config` (ACP-24): the model
// and thinking options, set to ACP_MODEL and `high`, a refused value, a turn (ACP_PROMPT) and
// /status.
// One more (ACP-14..19): `content` (a prompt of text ACP_CONTENT_TEXT, two images, embedded
// text, a resource link and audio; 21 images, refused; a turn after it; then the prompts
// ACP_CARD_PROMPTS, a JSON list, one turn each, for their tool cards). `queue` (ACP-27): a
// prompt sent while ACP_QUEUE_LONG (a tool call that takes a while) runs, then one queued behind
// a second long turn that is cancelled, then a turn after; every update and answer in `log`.
// `sessions` (ACP-25, ACP-26; needs --session-dir): two sessions with a turn each (prompts
// ACP_PROMPT_A and ACP_PROMPT_B, default `hello from a`/`b`) and one never prompted, listed,
// one closed (then prompted and closed again), the other resumed, prompted, loaded while open,
// and a list with a cursor not of this list. `elicit` (ACP-09, ACP-36; ACP_FORMS=1 advertises
// form elicitation): the bundled agent's `ask` as an input (answered with ACP_TEXT), a select
// of three (answered with its second option), a confirm answered yes and one answered no (by
// form or by permission request, whichever the bridge asks).
// `provider-error` (ACP-11, ACP-42): ACP_PROMPT, a prompt the model server fails (its updates in
// `failedUpdates`), then a turn after it (ACP_AFTER).
// `auth` (ACP-40, ACP-41): initialize as an editor offering terminal sign-in and url and form
// elicitation, `authenticate` with `agent`, then with ACP_LOGIN_METHOD when set (its sign-in
// page answered ACP_URL_ACTION, default decline).
// `omp-model` (ACP-10, ACP-24): omp's `/model ACP_MODEL` builtin, a local turn that switches
// the model, then a turn after it (ACP_AFTER).
// `turns` (ACP-05, ACP-33): the prompts in the file ACP_PROMPTS_FILE, a JSON list, one turn each in
// one session, in `turns` (a prompt answered with an error: `{error}`; an entry `{"kill": true}`
// kills the agent's process group between turns: `{killed}`). `cancel-next` (ACP-28): ACP_LONG (a tool call that takes a while) is cancelled
// once its tool card shows, and the next prompt (ACP_NEXT) is sent right after the cancel,
// before the cancelled answer, as codecompanion.nvim does; then a turn after (ACP_AFTER);
// every update and answer in `log`.
// `modes` (ACP-34, ACP-35): the modes session/new offers; a gated prompt (ACP_GATED) in Ask,
// then in Accept edits (set by session/set_mode) an edit prompt (ACP_EDIT, when given) and
// the gated one, then in Allow all (set by the `mode` config option) the gated one, then in
// Ask again; a mode not offered; /status. Each turn counts the permission requests it made.
// `review` (ACP-38, ACP-39): an editor offering fs.writeTextFile; the prompts ACP_PROMPTS (a
// JSON list), one turn each, each turn's `log` its tool card updates and the
// `fs/write_text_file` requests in the order they came; ACP_REFUSE_WRITES=1 answers every
// write with an error.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import path from "node:path";
import os from "node:os";

const [sdkDir, program, ...args] = process.argv.slice(2);
const scenario = process.env.ACP_SCENARIO ?? "bundled";
// How long to wait for something a real agent does (a tool call seen, a note queued): long
// enough for a loaded 2-core machine.
const WAIT_MS = 90_000;
const cwd = process.env.ACP_CWD ?? os.tmpdir();
const prompts = {
  bundled: {
    echo: "hello from the sdk",
    think: "think about it",
    bash: "bash echo hi",
    todo: "todo A; B",
    long: "bash sleep 5",
  },
  omp: {
    echo: "[[text hello from the sdk]]",
    think: "[[think about it]] done",
    bash: '[[tool bash {"command":"echo hi"}]]',
    todo: null,
    long: '[[tool bash {"command":"sleep 5"}]]',
  },
}[scenario];
const acp = await import(pathToFileURL(path.join(sdkDir, "dist/v1/stable/acp.js")).href);

const bridge = spawn(program, args, { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(bridge.stdin), Readable.toWeb(bridge.stdout));

let updates = [];
const out = {};
// ACP-38: the `review` scenario's turn log: card updates and editor writes, in order.
let reviewLog = [];
// The permission answer of the dialog scenarios: the kind of option to pick (`yes`/`no` pick
// by id), or null for `cancelled`; undefined keeps the default (allow once).
let choose;
// The options of the last `config_option_update` (ACP-24: an agent slow to list its models
// gets its model option by one after `session/new`).
let latestOptions;
// The session's options: `session/new`'s, or, when those have no model option yet, the
// first update that does (within WAIT_MS).
const optionsOf = async session => {
  const hasModel = options => (options ?? []).some(o => o.id === "model");
  if (hasModel(session.configOptions)) return session.configOptions;
  await until(() => hasModel(latestOptions), WAIT_MS);
  return latestOptions;
};
// The answer of a held permission request (`choose = "hold"`), once released.
let release = () => {};

const prompt = async (ctx, sessionId, text) => {
  updates = [];
  const response = await ctx.request("session/prompt", {
    sessionId,
    prompt: [{ type: "text", text }],
  });
  return { stopReason: response.stopReason, updates };
};

const errorOf = async promise => {
  try {
    return { result: await promise };
  } catch (e) {
    return { code: e.code, message: e.message, data: e.data };
  }
};

const until = async (check, ms) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise(r => setTimeout(r, 20));
  }
};

// As `until`, for a check that asks the bridge.
const untilAsync = async (check, ms) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise(r => setTimeout(r, 20));
  }
};

// A step the scenario depends on (initialize, session/new, session/load): a failure ends the
// run here, naming the step, with its error (the bridge's stderr, and so the agent's tail in
// its errors, is this process's stderr), never later on a session that is not there.
const step = async (name, promise) => {
  try {
    return await promise;
  } catch (e) {
    console.error(`acp-client: ${name} failed: ${JSON.stringify({ code: e.code, message: e.message, data: e.data })}`);
    bridge.kill();
    process.exit(2);
  }
};

// ACP-33: kills the bridge's agent between turns: the bridge's one child that leads a process
// group of its own (ACP-12), SIGKILL to that group; resolves once the agent is reaped and the
// bridge has taken its exit in (an open session's `session/resume`, answered at once, is
// refused as one whose agent has exited), as `{pid, group, gone, exitTakenIn}`.
const killAgent = async (ctx, sessionId) => {
  const { readdirSync, readFileSync } = await import("node:fs");
  const stat = pid => {
    try {
      const text = readFileSync(`/proc/${pid}/stat`, "utf8");
      const [state, ppid, pgrp] = text.slice(text.lastIndexOf(")") + 2).split(" ");
      return { state, ppid: Number(ppid), pgrp: Number(pgrp) };
    } catch {
      return null;
    }
  };
  const agents = readdirSync("/proc")
    .filter(name => /^[0-9]+$/.test(name))
    .map(Number)
    .filter(pid => {
      const s = stat(pid);
      return s && s.ppid === bridge.pid && s.pgrp === pid && s.state !== "Z";
    });
  if (agents.length !== 1) return { agents };
  const [pid] = agents;
  process.kill(-pid, "SIGKILL");
  let gone = false;
  try {
    await until(() => stat(pid) === null, WAIT_MS);
    gone = true;
  } catch {}
  let exitTakenIn = false;
  try {
    await untilAsync(async () => {
      const probe = await errorOf(ctx.request("session/resume", { sessionId, cwd, mcpServers: [] }));
      return probe.data === "the session's agent has exited";
    }, WAIT_MS);
    exitTakenIn = true;
  } catch {}
  return { pid, group: pid, gone, exitTakenIn };
};

// When the `command` scenario's prompt went out (ACP-30).
let commandStarted = Date.now();

// The whole run's bound, generous: real agents on a loaded 2-core machine are slow
// (ACP_WATCHDOG_MS overrides it).
const watchdog = setTimeout(() => {
  console.error("acp-client: watchdog fired");
  bridge.kill();
  process.exit(3);
}, Number(process.env.ACP_WATCHDOG_MS ?? 300_000));

await acp
  .client({ name: "musewire-acp-test" })
  .onNotification("session/update", ctx => {
    // Commands are session state, not part of a turn: kept apart.
    if (ctx.params.update.sessionUpdate === "available_commands_update") {
      out.commands = ctx.params.update.availableCommands.map(c => c.name);
    } else {
      updates.push(ctx.params.update);
      const u = ctx.params.update;
      if (u.sessionUpdate === "config_option_update") latestOptions = u.configOptions;
      if (scenario === "review" && (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update")) {
        reviewLog.push({ card: u.toolCallId, status: u.status ?? null });
      }
      if (scenario === "queue" || scenario === "cancel-next") out.log.push({ update: u.sessionUpdate, text: u.content?.text ?? null });
      // ACP-30: the command's card updates, each with its arrival time.
      if (scenario === "command") out.log.push({ ms: Date.now() - commandStarted, update: u });
    }
  })
  // omp's own ACP mode asks before it runs a tool: allowed once, as an editor user would, so
  // that the long turn's `sleep` runs until the cancel (unanswered, the tool failed at once
  // and the turn could end before the cancel arrived).
  .onRequest("session/request_permission", ctx => {
    out.permissions = (out.permissions ?? 0) + 1;
    const options = ctx.params.options ?? [];
    if (choose === "hold") {
      out.held = ctx.params;
      return new Promise(resolve => {
        release = () => resolve({ outcome: { outcome: "cancelled" } });
      });
    }
    if (choose !== undefined) {
      (out.permissionRequests ??= []).push(ctx.params);
      const picked = choose === null ? null : options.find(o => o.kind === choose || o.optionId === choose);
      return picked
        ? { outcome: { outcome: "selected", optionId: picked.optionId } }
        : { outcome: { outcome: "cancelled" } };
    }
    const allow = options.find(o => o.kind === "allow_once") ?? options.find(o => o.kind?.startsWith("allow"));
    return allow
      ? { outcome: { outcome: "selected", optionId: allow.optionId } }
      : { outcome: { outcome: "cancelled" } };
  })
  .onRequest("fs/write_text_file", ctx => {
    reviewLog.push({ write: ctx.params.path, content: ctx.params.content, sessionId: ctx.params.sessionId });
    if (process.env.ACP_REFUSE_WRITES === "1") throw new Error("refused by the test editor");
    return {};
  })
  // ACP-09, ACP-36: a form's one field `value`: a one-of (a confirm's yes/no, a select's
  // choices) answered with the option `choose` names (by its const; else the first), `null`
  // cancels and "decline" declines; a text field with ACP_TEXT.
  .onRequest("elicitation/create", ctx => {
    (out.elicitations ??= []).push(ctx.params);
    // ACP-41: a sign-in page is answered ACP_URL_ACTION (default: decline, which cancels
    // the sign-in before the agent reaches any network).
    if (ctx.params.mode === "url") return { action: process.env.ACP_URL_ACTION ?? "decline" };
    if (choose === null) return { action: "cancel" };
    if (choose === "decline") return { action: "decline" };
    const field = ctx.params.requestedSchema?.properties?.value ?? {};
    if (Array.isArray(field.oneOf) && field.oneOf.length > 0) {
      const picked = field.oneOf.find(o => o.const === choose) ?? field.oneOf[0];
      return { action: "accept", content: { value: picked.const } };
    }
    return { action: "accept", content: { value: process.env.ACP_TEXT ?? "" } };
  })
  .connectWith(stream, async ctx => {
    if (["load-create", "omp-load-create", "load-resume", "output", "ask", "omp-approval", "config", "content", "queue", "sessions", "elicit", "provider-error", "omp-model", "mcp", "turns", "cancel-next", "command", "fork", "modes", "auth", "review"].includes(scenario)) {
      await extraScenario(ctx);
      return;
    }
    out.initialize = await step("initialize", ctx.request("initialize", {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: "musewire-acp-test", version: "1" },
    }));
    const session = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    out.sessionId = session.sessionId;
    out.echo = await prompt(ctx, session.sessionId, prompts.echo);
    out.think = await prompt(ctx, session.sessionId, prompts.think);
    out.bash = await prompt(ctx, session.sessionId, prompts.bash);
    if (prompts.todo) out.todo = await prompt(ctx, session.sessionId, prompts.todo);
    if (scenario === "bundled") {
      out.status = await prompt(ctx, session.sessionId, "/status bash echo not-run");
    }
    out.unknown = await errorOf(ctx.request("session/frobnicate", { sessionId: session.sessionId }));
    // A long turn, cancelled once its tool call is visible.
    const cancelled = prompt(ctx, session.sessionId, prompts.long);
    await until(() => updates.some(u => u.sessionUpdate === "tool_call"), WAIT_MS);
    const started = Date.now();
    await ctx.notify("session/cancel", { sessionId: session.sessionId });
    out.cancel = await cancelled;
    out.cancel.ms = Date.now() - started;
  });

// ACP-08 (`omp-approval` with ACP_CANCELS=1): an approval answered `cancelled`, one the editor
// leaves open and cancels the turn under, then a text turn after them (`afterCancels`).
async function approvalCancels(ctx, sessionId) {
  const bash = command => `[[tool bash {"command":"${command}"}]]`;
  choose = null;
  out.cancelledOutcome = await errorOf(prompt(ctx, sessionId, bash("echo never")));
  choose = "hold";
  const held = errorOf(prompt(ctx, sessionId, bash("echo held")));
  await until(() => out.held !== undefined, WAIT_MS);
  await ctx.notify("session/cancel", { sessionId });
  out.cancelledWhileAsked = await held;
  release();
  choose = undefined;
  out.afterCancels = await errorOf(prompt(ctx, sessionId, "[[text still here after the cancels]]"));
}

async function extraScenario(ctx) {
  const meta = scenario === "output" ? { "muse/output": 1 } : { "muse/usage": 1 };
  // ACP-30: an editor that opts into terminal output, as Zed does.
  if (process.env.ACP_TERMINAL === "1") meta.terminal_output = true;
  const forms = process.env.ACP_FORMS === "1" ? { elicitation: { form: {} } } : {};
  // ACP-40, ACP-41: an editor that offers terminal sign-in and url and form elicitation.
  if (scenario === "auth") Object.assign(forms, { auth: { terminal: true }, elicitation: { url: {}, form: {} } });
  const writeTextFile = scenario === "review";
  out.initialize = await step("initialize", ctx.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile }, terminal: false, _meta: meta, ...forms },
    clientInfo: { name: "musewire-acp-test", version: "1" },
  }));
  if (scenario === "content") {
    const session = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    const blocks = async blocks => {
      updates = [];
      const response = await ctx.request("session/prompt", { sessionId: session.sessionId, prompt: blocks });
      return { stopReason: response.stopReason, updates };
    };
    // A 1x1 PNG, and two bytes as a JPEG blob.
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    out.content = await blocks([
      { type: "text", text: process.env.ACP_CONTENT_TEXT },
      { type: "image", data: png, mimeType: "image/png" },
      { type: "resource", resource: { uri: "file:///work/a.jpg", blob: "aGk=", mimeType: "image/jpeg" } },
      { type: "resource", resource: { uri: "file:///work/notes.md", text: "remember the milk", mimeType: "text/markdown" } },
      { type: "resource_link", name: "lib.rs", uri: "file:///work/lib.rs", title: "Library", size: 42 },
      { type: "audio", data: "aGk=", mimeType: "audio/wav" },
    ]);
    const image = { type: "image", data: "aGk=", mimeType: "image/png" };
    out.tooMany = await errorOf(blocks(Array.from({ length: 21 }, () => image)));
    out.after = await blocks([{ type: "text", text: process.env.ACP_CONTENT_TEXT }]);
    out.cards = [];
    for (const text of JSON.parse(process.env.ACP_CARD_PROMPTS ?? "[]")) {
      out.cards.push(await prompt(ctx, session.sessionId, text));
    }
    return;
  }
  if (scenario === "review") {
    const session = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    out.sessionId = session.sessionId;
    out.turns = [];
    for (const text of JSON.parse(process.env.ACP_PROMPTS)) {
      reviewLog = [];
      const turn = await errorOf(prompt(ctx, session.sessionId, text));
      out.turns.push({ ...(turn.result ?? { error: turn }), log: reviewLog });
    }
    return;
  }
  if (scenario === "mcp") {
    // MCP-01..05: the editor's MCP servers (ACP_MCP_SERVERS, JSON) for the session, and a
    // prompt (ACP_PROMPT) whose turn calls one of their tools.
    const session = await step("session/new", ctx.request("session/new", { cwd, mcpServers: JSON.parse(process.env.ACP_MCP_SERVERS) }));
    out.turn = await errorOf(prompt(ctx, session.sessionId, process.env.ACP_PROMPT));
    return;
  }
  if (scenario === "omp-model") {
    const session = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    out.configOptions = await optionsOf(session);
    out.switch = await errorOf(prompt(ctx, session.sessionId, `/model ${process.env.ACP_MODEL}`));
    out.after = await errorOf(prompt(ctx, session.sessionId, process.env.ACP_AFTER));
    return;
  }
  if (scenario === "auth") {
    out.agentMethod = await errorOf(ctx.request("authenticate", { methodId: "agent" }));
    if (process.env.ACP_LOGIN_METHOD) {
      out.login = await errorOf(ctx.request("authenticate", { methodId: process.env.ACP_LOGIN_METHOD }));
    }
    return;
  }
  if (scenario === "provider-error") {
    const session = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    out.failed = await errorOf(prompt(ctx, session.sessionId, process.env.ACP_PROMPT));
    // ACP-42: what the failed turn showed, whether its prompt was answered or failed.
    out.failedUpdates = updates;
    out.after = await errorOf(prompt(ctx, session.sessionId, process.env.ACP_AFTER));
    return;
  }
  if (scenario === "elicit") {
    const session = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    choose = undefined;
    out.input = await prompt(ctx, session.sessionId, 'call ask {"question":"Your name?","kind":"input"}');
    (out.permissionRequests ??= []);
    choose = "choice-1";
    out.select = await prompt(ctx, session.sessionId, 'call ask {"question":"Pick one","kind":"select","options":["red","green","blue"]}');
    choose = "yes";
    out.confirm = await prompt(ctx, session.sessionId, "ask Proceed?");
    choose = "no";
    out.refuse = await prompt(ctx, session.sessionId, "ask Really?");
    return;
  }
  if (scenario === "sessions") {
    const a = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    const b = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    // A session opened and never prompted: not listed (ACP-26).
    const idle = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    out.a = a.sessionId;
    out.b = b.sessionId;
    out.idle = idle.sessionId;
    out.promptA = await prompt(ctx, a.sessionId, process.env.ACP_PROMPT_A ?? "hello from a");
    out.promptB = await prompt(ctx, b.sessionId, process.env.ACP_PROMPT_B ?? "hello from b");
    out.list = await errorOf(ctx.request("session/list", { cwd }));
    out.listElsewhere = await errorOf(ctx.request("session/list", { cwd: "/nowhere/else" }));
    out.close = await errorOf(ctx.request("session/close", { sessionId: b.sessionId }));
    out.promptClosed = await errorOf(prompt(ctx, b.sessionId, "anyone?"));
    out.closeAgain = await errorOf(ctx.request("session/close", { sessionId: b.sessionId }));
    updates = [];
    out.resume = await errorOf(ctx.request("session/resume", { sessionId: a.sessionId, cwd, mcpServers: [] }));
    out.resumeUpdates = updates;
    out.afterResume = await prompt(ctx, a.sessionId, "after resume");
    updates = [];
    out.reload = await errorOf(ctx.request("session/load", { sessionId: a.sessionId, cwd, mcpServers: [] }));
    out.reloadUpdates = updates;
    out.afterReload = await prompt(ctx, a.sessionId, "after reload");
    out.badCursor = await errorOf(ctx.request("session/list", { cwd, cursor: "not-a-cursor" }));
    return;
  }
  if (scenario === "command") {
    // ACP-30: one prompt running a command that prints, sleeps, prints; every update with
    // its arrival time (ms since the prompt was sent), and when the prompt was answered.
    const session = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    out.log = [];
    commandStarted = Date.now();
    const answer = await ctx.request("session/prompt", {
      sessionId: session.sessionId, prompt: [{ type: "text", text: process.env.ACP_COMMAND }] });
    out.stopReason = answer.stopReason;
    out.answeredMs = Date.now() - commandStarted;
    return;
  }
  if (scenario === "fork") {
    // ACP-31, ACP-32: A in the original, a fork, B in the fork, C in the original; each
    // loaded back (its replay is its history); the fork deleted, then listed and loaded.
    const said = list => list.filter(u => u.sessionUpdate === "user_message_chunk").map(u => u.content?.text ?? "");
    const original = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    out.original = original.sessionId;
    out.promptA = await prompt(ctx, original.sessionId, process.env.ACP_PROMPT_A ?? "alpha in the original");
    out.fork = await errorOf(ctx.request("session/fork", { sessionId: original.sessionId, cwd, mcpServers: [] }));
    const fork = out.fork.result?.sessionId;
    if (!fork) return;
    out.promptB = await prompt(ctx, fork, process.env.ACP_PROMPT_B ?? "beta in the fork");
    out.promptC = await prompt(ctx, original.sessionId, process.env.ACP_PROMPT_C ?? "gamma in the original");
    updates = [];
    out.loadFork = await errorOf(ctx.request("session/load", { sessionId: fork, cwd, mcpServers: [] }));
    out.forkSaid = said(updates);
    updates = [];
    out.loadOriginal = await errorOf(ctx.request("session/load", { sessionId: original.sessionId, cwd, mcpServers: [] }));
    out.originalSaid = said(updates);
    out.listBefore = await errorOf(ctx.request("session/list", { cwd }));
    out.delete = await errorOf(ctx.request("session/delete", { sessionId: fork }));
    out.listAfter = await errorOf(ctx.request("session/list", { cwd }));
    out.loadDeleted = await errorOf(ctx.request("session/load", { sessionId: fork, cwd, mcpServers: [] }));
    out.deleteAgain = await errorOf(ctx.request("session/delete", { sessionId: fork }));
    out.afterDelete = await prompt(ctx, original.sessionId, "still here");
    return;
  }
  if (scenario === "queue") {
    const session = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    const ask = (name, text) =>
      ctx.request("session/prompt", { sessionId: session.sessionId, prompt: [{ type: "text", text }] }).then(
        r => out.log.push({ answer: name, stopReason: r.stopReason }),
        e => out.log.push({ answer: name, error: e.message }),
      );
    const toolSeen = () => out.log.filter(e => e.update === "tool_call").length;
    out.log = [];
    const long = process.env.ACP_QUEUE_LONG;
    const first = ask("first", long);
    await until(() => toolSeen() >= 1, WAIT_MS);
    const queued = ask("queued", process.env.ACP_QUEUE_TEXT ?? "hello queued");
    await Promise.all([first, queued]);
    const cancelled = ask("cancelled", long);
    await until(() => toolSeen() >= 2, WAIT_MS);
    const behind = ask("behind", "never said");
    await until(() => out.log.filter(e => e.text?.startsWith("Queued:")).length >= 2, WAIT_MS);
    await ctx.notify("session/cancel", { sessionId: session.sessionId });
    await Promise.all([cancelled, behind]);
    await ask("after", process.env.ACP_QUEUE_AFTER ?? "still here");
    return;
  }
  if (scenario === "turns") {
    const session = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    out.sessionId = session.sessionId;
    out.turns = [];
    const { readFileSync } = await import("node:fs");
    for (const text of JSON.parse(readFileSync(process.env.ACP_PROMPTS_FILE, "utf8"))) {
      // `{"kill": true}` (ACP-33): the agent killed between turns, in `turns` as `{killed}`.
      if (text?.kill) {
        out.turns.push({ killed: await killAgent(ctx, session.sessionId) });
        continue;
      }
      // A prompt answered with an error is a turn too (ACP-33: the agent died in it).
      const turn = await errorOf(prompt(ctx, session.sessionId, text));
      out.turns.push(turn.result ?? { error: turn });
    }
    return;
  }
  if (scenario === "cancel-next") {
    const session = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    const ask = (name, text) =>
      ctx.request("session/prompt", { sessionId: session.sessionId, prompt: [{ type: "text", text }] }).then(
        r => out.log.push({ answer: name, stopReason: r.stopReason }),
        e => out.log.push({ answer: name, error: e.message }),
      );
    out.log = [];
    const cancelled = ask("cancelled", process.env.ACP_LONG);
    await until(() => out.log.some(e => e.update === "tool_call"), WAIT_MS);
    // codecompanion.nvim: the cancel, then at once the next prompt, not waiting for the
    // cancelled prompt's answer.
    await ctx.notify("session/cancel", { sessionId: session.sessionId });
    out.log.push({ sent: "next" });
    const next = ask("next", process.env.ACP_NEXT);
    await Promise.all([cancelled, next]);
    await ask("after", process.env.ACP_AFTER ?? "still here");
    return;
  }
  if (scenario === "load-create") {
    const session = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    out.sessionId = session.sessionId;
    out.todo = await prompt(ctx, session.sessionId, "todo A; B");
    out.echo = await prompt(ctx, session.sessionId, "hello again");
    return;
  }
  if (scenario === "ask") {
    const session = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    choose = "yes";
    out.yes = await prompt(ctx, session.sessionId, "ask Proceed?");
    choose = "no";
    out.no = await prompt(ctx, session.sessionId, "ask Again?");
    return;
  }
  if (scenario === "modes") {
    const session = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    out.modes = session.modes;
    out.configOptions = session.configOptions;
    const turn = async text => {
      choose = "allow_once";
      const before = out.permissions ?? 0;
      const result = await errorOf(prompt(ctx, session.sessionId, text));
      return { ...(result.result ?? { error: result }), asked: (out.permissions ?? 0) - before };
    };
    const setting = async request => {
      updates = [];
      const answer = await errorOf(request);
      return { ...answer, updates };
    };
    const setMode = modeId => setting(ctx.request("session/set_mode", { sessionId: session.sessionId, modeId }));
    out.ask = await turn(process.env.ACP_GATED);
    out.setAcceptEdits = await setMode("acceptEdits");
    if (process.env.ACP_EDIT) out.acceptEdit = await turn(process.env.ACP_EDIT);
    out.acceptGated = await turn(process.env.ACP_GATED);
    out.setAllowAll = await setting(
      ctx.request("session/set_config_option", { sessionId: session.sessionId, configId: "mode", value: "bypassPermissions" }),
    );
    out.allowAll = await turn(process.env.ACP_GATED);
    out.status = await turn("/status");
    out.setAsk = await setMode("default");
    out.back = await turn(process.env.ACP_GATED);
    out.setPlan = await setMode("plan");
    return;
  }
  if (scenario === "omp-approval") {
    const session = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    const bash = command => `[[tool bash {"command":"${command}"}]]`;
    const turn = async (kind, command) => {
      choose = kind;
      const before = out.permissions ?? 0;
      const result = await prompt(ctx, session.sessionId, bash(command));
      result.asked = (out.permissions ?? 0) - before;
      return result;
    };
    out.allow = await turn("allow_once", "echo allowed");
    out.reject = await turn("reject_once", "echo rejected");
    if (process.env.ACP_CANCELS === "1") {
      // Before `always`, which would let the next bash calls run unasked.
      const asked = out.permissionRequests;
      out.permissionRequests = [];
      await approvalCancels(ctx, session.sessionId);
      out.cancelRequests = out.permissionRequests;
      out.permissionRequests = asked;
    }
    out.always = await turn("allow_always", "echo always");
    out.remembered = await turn("reject_once", "echo remembered");
    // ACP-10: a builtin command omp answers itself (local-only), then a model turn again.
    out.local = await prompt(ctx, session.sessionId, "/session");
    out.after = await errorOf(prompt(ctx, session.sessionId, "[[text still here]]"));
    return;
  }
  if (scenario === "config") {
    // ACP-24: the options session/new gives, a model and a level set, a value not offered,
    // then a turn (ACP_PROMPT) on the model set (ACP_MODEL) and /status.
    const session = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    out.configOptions = await optionsOf(session);
    const setOption = (configId, value) =>
      errorOf(ctx.request("session/set_config_option", { sessionId: session.sessionId, configId, value }));
    out.setModel = await setOption("model", process.env.ACP_MODEL);
    out.setThought = await setOption("thought_level", "high");
    out.bad = await setOption("model", "no/such-model");
    out.turn = await prompt(ctx, session.sessionId, process.env.ACP_PROMPT);
    out.status = await prompt(ctx, session.sessionId, "/status");
    return;
  }
  if (scenario === "omp-load-create") {
    const session = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
    out.sessionId = session.sessionId;
    out.echo = await prompt(ctx, session.sessionId, "[[text hello from the sdk]]");
    return;
  }
  if (scenario === "load-resume") {
    updates = [];
    out.load = {
      result: await step(
        "session/load",
        ctx.request("session/load", { sessionId: process.env.ACP_SESSION, cwd, mcpServers: [] }),
      ),
    };
    out.loadUpdates = updates;
    out.status = await prompt(ctx, process.env.ACP_SESSION, "/status");
    return;
  }
  // output: a large bash output, read back page by page (advancing by the returned byteLen).
  const session = await step("session/new", ctx.request("session/new", { cwd, mcpServers: [] }));
  out.sessionId = session.sessionId;
  out.bash = await prompt(ctx, session.sessionId, process.env.ACP_OUTPUT_PROMPT);
  const card = out.bash.updates.find(u => u._meta?.["muse/output"]);
  out.handle = card?._meta["muse/output"] ?? null;
  out.bash.updates = out.bash.updates.map(u => ({ ...u, content: undefined }));
  if (!out.handle) return;
  const { sessionId, itemId, outputRef } = out.handle;
  const read = params => errorOf(ctx.request("_muse/readOutput", { sessionId, itemId, outputRef, ...params }));
  const chunks = [];
  out.pages = [];
  let offset = 0;
  for (;;) {
    const page = await read({ offsetBytes: offset, lengthBytes: 1048576 });
    if (!page.result) {
      out.pageError = page;
      break;
    }
    const r = page.result;
    chunks.push(Buffer.from(r.content, r.encoding === "base64" ? "base64" : "utf8"));
    out.pages.push({ offsetBytes: r.offsetBytes, byteLen: r.byteLen, eof: r.eof, encoding: r.encoding });
    offset += r.byteLen;
    if (r.eof || r.byteLen === 0) break;
  }
  const { writeFileSync } = await import("node:fs");
  writeFileSync(process.env.ACP_OUT_FILE, Buffer.concat(chunks));
  out.badParams = await read({ offsetBytes: 0, lengthBytes: 0 });
  out.foreign = await read({ offsetBytes: 0, itemId: "another-item" });
  out.path = await errorOf(
    ctx.request("_muse/readOutput", { sessionId, itemId, outputRef: "/etc/passwd", offsetBytes: 0 }),
  );
}

clearTimeout(watchdog);
bridge.stdin.end();
const code = await new Promise(r => bridge.on("exit", c => r(c)));
out.bridgeExit = code;
process.stdout.write(JSON.stringify(out) + "\n");
