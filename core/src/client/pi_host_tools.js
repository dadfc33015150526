// musewire's host tools for pi (RULES.md HOST-10). pi has no `set_host_tools`; loaded with
// `pi -e THIS_FILE --mode rpc`, this extension carries the RPC host's tools over pi's own
// extension protocol. musewire writes this file; it is not meant to be edited.
//
// - It announces itself as pi starts: `setStatus` with key "musewire:host_tools".
// - The host sets its tools with the command `/musewire-host-tools JSON` (a `prompt`, which
//   pi runs at once, even during a run): JSON is the `tools` array of `set_host_tools`. The
//   set replaces the previous one: tools of the last set not in this one are deactivated.
// - A call of one asks the host with an `input` dialog titled "musewire:host_tool_call"
//   whose placeholder is `{toolCallId, toolName, arguments}` as JSON; the host's answer is the
//   dialog's value, the tool result `{content, details?, isError?}` as JSON.
// - An aborted call says so with `setStatus` key "musewire:host_tool_cancel" and the
//   toolCallId, and fails.
const COMMAND = "musewire-host-tools";
const ANNOUNCE = "musewire:host_tools";
const CALL = "musewire:host_tool_call";
const CANCEL = "musewire:host_tool_cancel";

export default function musewireHostTools(pi) {
  let mine = [];
  pi.on("session_start", (_event, ctx) => {
    ctx.ui.setStatus(ANNOUNCE, "1");
  });
  pi.registerCommand(COMMAND, {
    description: "musewire: the host's tools (sent by the host, not typed)",
    handler: async (args) => {
      const tools = JSON.parse(args);
      const names = [];
      for (const tool of tools) {
        names.push(tool.name);
        pi.registerTool({
          name: tool.name,
          label: tool.label || tool.name,
          description: tool.description,
          parameters: tool.parameters,
          async execute(toolCallId, params, signal, _onUpdate, ctx) {
            const request = JSON.stringify({ toolCallId, toolName: tool.name, arguments: params ?? {} });
            const answer = await ctx.ui.input(CALL, request, { signal });
            if (signal && signal.aborted) {
              ctx.ui.setStatus(CANCEL, toolCallId);
              throw new Error("The host tool call was cancelled");
            }
            if (typeof answer !== "string") throw new Error("The host gave no result");
            const result = JSON.parse(answer);
            const content = Array.isArray(result.content) ? result.content : [];
            if (result.isError) {
              const text = content.filter((b) => b && b.type === "text").map((b) => b.text).join("\n");
              throw new Error(text || `Host tool ${tool.name} failed`);
            }
            return { content, details: result.details ?? {} };
          },
        });
      }
      const active = pi.getActiveTools().filter((name) => !mine.includes(name) || names.includes(name));
      for (const name of names) if (!active.includes(name)) active.push(name);
      pi.setActiveTools(active);
      mine = names;
    },
  });
}
