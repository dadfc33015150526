//! Realistic samples of every frame, shaped as oh-my-pi 18.2.3 and pi 0.73.1 write them
//! (`rpc-types.ts`, `agent-session-events.ts`, pi-ai's message types). Shared by the wire
//! tests.
#![allow(dead_code)]

/// (name, frame) for every kind of frame an agent writes on stdout.
pub const AGENT_FRAMES: &[(&str, &str)] = &[
    // FRAME-03
    (
        "ready",
        r#"{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1,2],"maxFrameBytes":1048576,"maxReassembledFrameBytes":67108864}"#,
    ),
    (
        "response negotiate_protocol",
        r#"{"id":"req-0","type":"response","command":"negotiate_protocol","success":true,"data":{"protocolVersion":2}}"#,
    ),
    (
        "response negotiate_protocol failure",
        r#"{"id":"req-0","type":"response","command":"negotiate_protocol","success":false,"error":"Unsupported RPC protocol version: 3"}"#,
    ),
    (
        "response prompt",
        r#"{"id":"req-1","type":"response","command":"prompt","success":true}"#,
    ),
    (
        "response prompt local",
        r#"{"id":"req-1","type":"response","command":"prompt","success":true,"data":{"agentInvoked":false}}"#,
    ),
    (
        "response steer",
        r#"{"id":"req-2","type":"response","command":"steer","success":true}"#,
    ),
    (
        "response abort",
        r#"{"id":"req-2","type":"response","command":"abort","success":true}"#,
    ),
    (
        "response new_session",
        r#"{"id":"req-3","type":"response","command":"new_session","success":true,"data":{"cancelled":false}}"#,
    ),
    (
        "response get_state",
        r#"{"id":"req-4","type":"response","command":"get_state","success":true,"data":{"model":{"id":"claude-sonnet-4-5","name":"Claude Sonnet 4.5","api":"anthropic-messages","provider":"anthropic","baseUrl":"https://api.anthropic.com","reasoning":true,"input":["text","image"],"cost":{"input":3,"output":15,"cacheRead":0.3,"cacheWrite":3.75},"contextWindow":200000,"maxTokens":64000},"thinkingLevel":"medium","isStreaming":false,"isCompacting":false,"steeringMode":"one-at-a-time","followUpMode":"one-at-a-time","interruptMode":"immediate","sessionFile":"/home/dev/.omp/sessions/s.jsonl","sessionId":"0193f1d2-1111-7000-8000-000000000001","autoCompactionEnabled":true,"fastModeEnabled":false,"fastModeActive":false,"tokensPerSecond":null,"messageCount":12,"queuedMessageCount":0,"todoPhases":[],"contextUsage":{"tokens":5230,"contextWindow":200000,"percent":2.615}}}"#,
    ),
    (
        "response set_fast_mode",
        r#"{"id":"req-5","type":"response","command":"set_fast_mode","success":true,"data":{"enabled":true,"active":false}}"#,
    ),
    (
        "response get_available_commands",
        r#"{"id":"req-6","type":"response","command":"get_available_commands","success":true,"data":{"commands":[{"name":"compact","description":"Compact the session","source":"builtin"},{"name":"review","aliases":["r"],"input":{"hint":"<path>"},"subcommands":[{"name":"all","description":"Everything"}],"source":"skill"}]}}"#,
    ),
    (
        "response set_todos",
        r#"{"id":"req-7","type":"response","command":"set_todos","success":true,"data":{"todoPhases":[{"name":"Build","tasks":[{"content":"write wire types","status":"in_progress"}]}]}}"#,
    ),
    // HOST-01
    (
        "response set_host_tools",
        r#"{"id":"req-8","type":"response","command":"set_host_tools","success":true,"data":{"toolNames":["host_search","host_open"]}}"#,
    ),
    // HOST-04
    (
        "response set_host_uri_schemes",
        r#"{"id":"req-9","type":"response","command":"set_host_uri_schemes","success":true,"data":{"schemes":["db","notion"]}}"#,
    ),
    (
        "response set_subagent_subscription",
        r#"{"id":"req-10","type":"response","command":"set_subagent_subscription","success":true,"data":{"level":"progress"}}"#,
    ),
    (
        "response get_subagents",
        r#"{"id":"req-11","type":"response","command":"get_subagents","success":true,"data":{"subagents":[{"id":"sa-1","index":0,"agent":"explore","agentSource":"bundled","description":"Find callers","status":"running","task":"grep","sessionFile":"/tmp/sa-1.jsonl","lastUpdate":1764400000123,"progress":{"id":"sa-1","status":"running","toolCount":3},"parentToolCallId":"toolu_01"}]}}"#,
    ),
    (
        "response get_subagent_messages",
        r#"{"id":"req-12","type":"response","command":"get_subagent_messages","success":true,"data":{"sessionFile":"/tmp/sa-1.jsonl","fromByte":0,"nextByte":512,"reset":false,"entries":[{"type":"message","id":"e1","parentId":null,"timestamp":"2025-11-29T12:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1764400000000}}],"messages":[{"role":"user","content":"hi","timestamp":1764400000000}]}}"#,
    ),
    (
        "response set_model",
        r#"{"id":"req-13","type":"response","command":"set_model","success":true,"data":{"id":"gpt-5","name":"GPT-5","api":"openai-responses","provider":"openai","reasoning":true,"contextWindow":400000,"maxTokens":128000}}"#,
    ),
    (
        "response cycle_model",
        r#"{"id":"req-14","type":"response","command":"cycle_model","success":true,"data":{"model":{"id":"gpt-5","provider":"openai"},"thinkingLevel":"high","isScoped":false}}"#,
    ),
    (
        "response cycle_model null",
        r#"{"id":"req-15","type":"response","command":"cycle_model","success":true,"data":null}"#,
    ),
    (
        "response get_available_models",
        r#"{"id":"req-16","type":"response","command":"get_available_models","success":true,"data":{"models":[{"id":"gpt-5","provider":"openai"},{"id":"claude-sonnet-4-5","provider":"anthropic","contextWindow":200000}]}}"#,
    ),
    (
        "response set_thinking_level",
        r#"{"id":"req-17","type":"response","command":"set_thinking_level","success":true}"#,
    ),
    (
        "response cycle_thinking_level",
        r#"{"id":"req-18","type":"response","command":"cycle_thinking_level","success":true,"data":{"level":"high"}}"#,
    ),
    (
        "response cycle_thinking_level null",
        r#"{"id":"req-19","type":"response","command":"cycle_thinking_level","success":true,"data":null}"#,
    ),
    (
        "response compact",
        r#"{"id":"req-20","type":"response","command":"compact","success":true,"data":{"summary":"Goal: ship the wire model\n- done","shortSummary":"wire model","firstKeptEntryId":"e42","tokensBefore":151234,"details":{"readFiles":["a.rs"]}}}"#,
    ),
    (
        "response bash",
        r#"{"id":"req-21","type":"response","command":"bash","success":true,"data":{"output":"ok\n","exitCode":0,"cancelled":false,"truncated":false,"totalLines":1,"totalBytes":3,"outputLines":1,"outputBytes":3}}"#,
    ),
    (
        "response get_session_stats",
        r#"{"id":"req-22","type":"response","command":"get_session_stats","success":true,"data":{"sessionFile":"/s.jsonl","sessionId":"s1","userMessages":3,"assistantMessages":4,"toolCalls":5,"toolResults":5,"totalMessages":12,"tokens":{"input":100,"output":200,"reasoning":0,"cacheRead":50,"cacheWrite":10,"total":360},"premiumRequests":0,"cost":0.0123}}"#,
    ),
    (
        "response export_html",
        r#"{"id":"req-23","type":"response","command":"export_html","success":true,"data":{"path":"/tmp/session.html"}}"#,
    ),
    (
        "response switch_session",
        r#"{"id":"req-24","type":"response","command":"switch_session","success":true,"data":{"cancelled":true}}"#,
    ),
    (
        "response branch",
        r#"{"id":"req-25","type":"response","command":"branch","success":true,"data":{"text":"fix the bug","cancelled":false}}"#,
    ),
    (
        "response get_branch_messages",
        r#"{"id":"req-26","type":"response","command":"get_branch_messages","success":true,"data":{"messages":[{"entryId":"e1","text":"hello"},{"entryId":"e7","text":"fix the bug"}]}}"#,
    ),
    (
        "response get_last_assistant_text",
        r#"{"id":"req-27","type":"response","command":"get_last_assistant_text","success":true,"data":{"text":"Done."}}"#,
    ),
    (
        "response get_last_assistant_text null",
        r#"{"id":"req-28","type":"response","command":"get_last_assistant_text","success":true,"data":{"text":null}}"#,
    ),
    (
        "response set_session_name",
        r#"{"id":"req-29","type":"response","command":"set_session_name","success":true}"#,
    ),
    (
        "response handoff",
        r#"{"id":"req-30","type":"response","command":"handoff","success":true,"data":{"savedPath":"/tmp/handoff.md"}}"#,
    ),
    (
        "response handoff null",
        r#"{"id":"req-31","type":"response","command":"handoff","success":true,"data":null}"#,
    ),
    (
        "response get_messages",
        r#"{"id":"req-32","type":"response","command":"get_messages","success":true,"data":{"messages":[{"role":"user","content":[{"type":"text","text":"List files"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"timestamp":1764400000000},{"role":"assistant","content":[{"type":"thinking","thinking":"Use ls.","thinkingSignature":"sig=="},{"type":"text","text":"Listing."},{"type":"toolCall","id":"toolu_01","name":"bash","arguments":{"command":"ls -la","timeout":30}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":120,"output":40,"cacheRead":0,"cacheWrite":0,"totalTokens":160,"cost":{"input":0.00036,"output":0.0006,"cacheRead":0,"cacheWrite":0,"total":0.00096}},"stopReason":"toolUse","timestamp":1764400000100,"duration":1234,"ttft":321},{"role":"toolResult","toolCallId":"toolu_01","toolName":"bash","content":[{"type":"text","text":"a.rs\nb.rs"}],"details":{"exitCode":0,"truncated":false},"isError":false,"timestamp":1764400000200},{"role":"bashExecution","command":"git status","output":"clean","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1764400000300},{"role":"custom","customType":"plan","content":"Step 1","display":true,"details":{"step":1},"timestamp":1764400000400},{"role":"developer","content":"Continue.","synthetic":true,"timestamp":1764400000500}]}}"#,
    ),
    // PAGE-06
    (
        "response get_messages_page",
        r#"{"id":"req-33","type":"response","command":"get_messages_page","success":true,"data":{"messages":[{"role":"user","content":"hi","timestamp":1764400000000}],"nextCursor":"eyJ2ZXJzaW9uIjoxfQ","totalMessages":300}}"#,
    ),
    (
        "response get_messages_page last",
        r#"{"id":"req-34","type":"response","command":"get_messages_page","success":true,"data":{"messages":[{"role":"assistant","content":[{"type":"text","text":"bye"}],"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1764400009999}],"totalMessages":300}}"#,
    ),
    // CALL-08
    (
        "response get_messages_page busy",
        r#"{"id":"req-35","type":"response","command":"get_messages_page","success":false,"error":"Cannot page messages while the session is changing","code":"session_busy"}"#,
    ),
    (
        "response get_messages_page stale",
        r#"{"id":"req-36","type":"response","command":"get_messages_page","success":false,"error":"RPC message cursor is stale","code":"stale_cursor"}"#,
    ),
    (
        "response get_login_providers",
        r#"{"id":"req-37","type":"response","command":"get_login_providers","success":true,"data":{"providers":[{"id":"anthropic","name":"Anthropic","available":true,"authenticated":false}]}}"#,
    ),
    (
        "response login",
        r#"{"id":"req-38","type":"response","command":"login","success":true,"data":{"providerId":"anthropic"}}"#,
    ),
    // CALL-02: id-less failures
    (
        "response parse failure",
        r#"{"type":"response","command":"parse","success":false,"error":"Failed to parse command: JSON Parse error: Unexpected identifier \"nope\""}"#,
    ),
    (
        "response unknown command",
        r#"{"id":"req-39","type":"response","command":"frobnicate","success":false,"error":"Unknown command: frobnicate"}"#,
    ),
    // FRAME-12
    (
        "response over the limit",
        r#"{"id":"req-40","type":"response","command":"get_messages","success":false,"error":"RPC response exceeded the transport limit"}"#,
    ),
    // pi 0.73
    (
        "response get_commands (pi)",
        r#"{"id":"req-41","type":"response","command":"get_commands","success":true,"data":{"commands":[{"name":"fix","description":"Fix it","source":"prompt","sourceInfo":{"path":"/p/fix.md","source":"local","scope":"project","origin":"top-level"}}]}}"#,
    ),
    (
        "response fork (pi)",
        r#"{"id":"req-42","type":"response","command":"fork","success":true,"data":{"text":"try again","cancelled":false}}"#,
    ),
    (
        "response clone (pi)",
        r#"{"id":"req-43","type":"response","command":"clone","success":true,"data":{"cancelled":false}}"#,
    ),
    (
        "response get_fork_messages (pi)",
        r#"{"id":"req-44","type":"response","command":"get_fork_messages","success":true,"data":{"messages":[{"entryId":"e1","text":"hello"}]}}"#,
    ),
    // pi 1.6's get_entries: the session's entries, one of each type, and the leaf.
    (
        "response get_entries (pi 1.6)",
        r#"{"id":"req-46","type":"response","command":"get_entries","success":true,"data":{"entries":[{"type":"model_change","id":"a1","parentId":null,"timestamp":"2026-05-01T10:00:00.000Z","provider":"anthropic","modelId":"claude-sonnet-4-5"},{"type":"thinking_level_change","id":"a2","parentId":"a1","timestamp":"2026-05-01T10:00:00.001Z","thinkingLevel":"high"},{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-05-01T10:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1777629601000}},{"type":"compaction","id":"a4","parentId":"a3","timestamp":"2026-05-01T10:05:00.000Z","summary":"We said hi.","firstKeptEntryId":"a3","tokensBefore":51234,"details":{"readFiles":[]}},{"type":"branch_summary","id":"a5","parentId":"a3","timestamp":"2026-05-01T10:06:00.000Z","fromId":"a4","summary":"Tried compaction."},{"type":"custom","id":"a6","parentId":"a5","timestamp":"2026-05-01T10:06:01.000Z","customType":"musewire.todos","data":{"phases":[]}},{"type":"custom_message","id":"a7","parentId":"a6","timestamp":"2026-05-01T10:06:02.000Z","customType":"note","content":"remember","display":true},{"type":"label","id":"a8","parentId":"a7","timestamp":"2026-05-01T10:06:03.000Z","targetId":"a3","label":"start"},{"type":"session_info","id":"a9","parentId":"a8","timestamp":"2026-05-01T10:06:04.000Z","name":"wire"},{"type":"context_edit","id":"a10","parentId":"a9","timestamp":"2026-05-01T10:06:05.000Z","targetId":"a3","replacement":null}],"leafId":"a10"}}"#,
    ),
    // CALL-03
    (
        "prompt_result",
        r#"{"type":"prompt_result","id":"req-1","agentInvoked":false}"#,
    ),
    // events
    ("agent_start", r#"{"type":"agent_start"}"#),
    ("turn_start", r#"{"type":"turn_start"}"#),
    (
        "message_start user",
        r#"{"type":"message_start","message":{"role":"user","content":[{"type":"text","text":"hello"}],"timestamp":1764400000000}}"#,
    ),
    (
        "message_start assistant",
        r#"{"type":"message_start","message":{"role":"assistant","content":[],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1764400000000}}"#,
    ),
    (
        "message_update text_delta",
        r#"{"type":"message_update","message":{"role":"assistant","content":[{"type":"text","text":"Step 0: \"quoted\""}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"stop","timestamp":1764400000000},"assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"\"quoted\""}}"#,
    ),
    (
        "message_update start",
        r#"{"type":"message_update","message":{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1},"assistantMessageEvent":{"type":"start","partial":{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1}}}"#,
    ),
    (
        "message_update text_start",
        r#"{"type":"message_update","message":{"role":"assistant","content":[{"type":"text","text":""}],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1},"assistantMessageEvent":{"type":"text_start","contentIndex":0,"partial":{"role":"assistant","content":[{"type":"text","text":""}],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1}}}"#,
    ),
    (
        "message_update text_end",
        r#"{"type":"message_update","message":{"role":"assistant","content":[{"type":"text","text":"Hi"}],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1},"assistantMessageEvent":{"type":"text_end","contentIndex":0,"content":"Hi"}}"#,
    ),
    (
        "message_update thinking_delta",
        r#"{"type":"message_update","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Hm"}],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1},"assistantMessageEvent":{"type":"thinking_delta","contentIndex":0,"delta":"Hm"}}"#,
    ),
    (
        "message_update thinking_end",
        r#"{"type":"message_update","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Hm"}],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1},"assistantMessageEvent":{"type":"thinking_end","contentIndex":0,"content":"Hm"}}"#,
    ),
    (
        "message_update toolcall_delta",
        r#"{"type":"message_update","message":{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"read","arguments":{}}],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1},"assistantMessageEvent":{"type":"toolcall_delta","contentIndex":0,"delta":"{\"path\":"}}"#,
    ),
    (
        "message_update toolcall_end",
        r#"{"type":"message_update","message":{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"read","arguments":{"path":"a.rs"}}],"api":"a","provider":"p","model":"m","stopReason":"toolUse","timestamp":1},"assistantMessageEvent":{"type":"toolcall_end","contentIndex":0,"toolCall":{"type":"toolCall","id":"t1","name":"read","arguments":{"path":"a.rs"}}}}"#,
    ),
    (
        "message_update image_end",
        r#"{"type":"message_update","message":{"role":"assistant","content":[{"type":"image","data":"AA==","mimeType":"image/png"}],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1},"assistantMessageEvent":{"type":"image_end","contentIndex":0,"content":{"type":"image","data":"AA==","mimeType":"image/png"}}}"#,
    ),
    (
        "message_update done",
        r#"{"type":"message_update","message":{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1},"assistantMessageEvent":{"type":"done","reason":"stop","message":{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1}}}"#,
    ),
    (
        "message_update error",
        r#"{"type":"message_update","message":{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","stopReason":"error","timestamp":1},"assistantMessageEvent":{"type":"error","reason":"error","error":{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","stopReason":"error","errorMessage":"overloaded","errorStatus":529,"timestamp":1}}}"#,
    ),
    (
        "message_end",
        r#"{"type":"message_end","message":{"role":"toolResult","toolCallId":"t1","toolName":"read","content":[{"type":"text","text":"fn main() {}"}],"isError":false,"timestamp":2}}"#,
    ),
    (
        "tool_execution_start",
        r#"{"type":"tool_execution_start","toolCallId":"t1","toolName":"read","args":{"path":"a.rs"},"intent":"Reading a.rs"}"#,
    ),
    (
        "tool_execution_update",
        r#"{"type":"tool_execution_update","toolCallId":"t1","toolName":"bash","args":{"command":"make"},"partialResult":{"content":[{"type":"text","text":"building"}],"details":{"lines":1}}}"#,
    ),
    (
        "tool_stream_update",
        r#"{"type":"tool_stream_update","toolCallId":"t1","toolName":"bash","update":{"chunk":"x"}}"#,
    ),
    (
        "tool_execution_end",
        r#"{"type":"tool_execution_end","toolCallId":"t1","toolName":"read","result":{"content":[{"type":"text","text":"fn main() {}"}]},"isError":false}"#,
    ),
    (
        "turn_end",
        r#"{"type":"turn_end","message":{"role":"assistant","content":[{"type":"text","text":"Done."}],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":3},"toolResults":[{"role":"toolResult","toolCallId":"t1","toolName":"read","content":[{"type":"text","text":"x"}],"isError":false,"timestamp":2}]}"#,
    ),
    (
        "agent_end",
        r#"{"type":"agent_end","messages":[{"role":"user","content":"hi","timestamp":1},{"role":"assistant","content":[{"type":"text","text":"hello"}],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":2}]}"#,
    ),
    (
        "agent_end not terminal",
        r#"{"type":"agent_end","messages":[],"isTerminal":false}"#,
    ),
    (
        "agent_end compacted (FRAME-12)",
        r#"{"type":"agent_end","messages":[{"role":"user","content":"hi","timestamp":1}],"messageCount":40}"#,
    ),
    (
        "auto_compaction_start",
        r#"{"type":"auto_compaction_start","reason":"threshold","action":"context-full"}"#,
    ),
    (
        "auto_compaction_end",
        r#"{"type":"auto_compaction_end","action":"context-full","result":{"summary":"s","firstKeptEntryId":"e1","tokensBefore":180000},"aborted":false,"willRetry":true}"#,
    ),
    (
        "auto_compaction_end skipped",
        r#"{"type":"auto_compaction_end","action":"shake","aborted":false,"willRetry":false,"skipped":true}"#,
    ),
    (
        "auto_retry_start",
        r#"{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded","errorId":4113}"#,
    ),
    (
        "auto_retry_end",
        r#"{"type":"auto_retry_end","success":false,"attempt":3,"finalError":"529 overloaded","retryErrors":[{"attempt":1,"message":"529"}]}"#,
    ),
    (
        "retry_fallback_applied",
        r#"{"type":"retry_fallback_applied","from":"anthropic/claude-opus-4","to":"anthropic/claude-sonnet-4-5","role":"default"}"#,
    ),
    (
        "retry_fallback_succeeded",
        r#"{"type":"retry_fallback_succeeded","model":"anthropic/claude-sonnet-4-5","role":"default"}"#,
    ),
    ("model_changed", r#"{"type":"model_changed"}"#),
    (
        "config_warnings_changed",
        r#"{"type":"config_warnings_changed"}"#,
    ),
    ("advisor_cost_changed", r#"{"type":"advisor_cost_changed"}"#),
    ("advisor_yielded", r#"{"type":"advisor_yielded"}"#),
    (
        "ttsr_triggered",
        r#"{"type":"ttsr_triggered","rules":[{"name":"no-any","path":"/r.md"}]}"#,
    ),
    (
        "todo_reminder",
        r#"{"type":"todo_reminder","todos":[{"content":"finish tests","status":"pending"}],"attempt":1,"maxAttempts":3}"#,
    ),
    ("todo_auto_clear", r#"{"type":"todo_auto_clear"}"#),
    (
        "irc_message",
        r#"{"type":"irc_message","message":{"role":"custom","customType":"irc","content":"ping","display":true,"timestamp":5}}"#,
    ),
    (
        "notice",
        r#"{"type":"notice","level":"error","message":"Session persistence failed: disk full","source":"session-persistence"}"#,
    ),
    (
        "thinking_level_changed",
        r#"{"type":"thinking_level_changed","thinkingLevel":"high","configured":"auto","resolved":"high"}"#,
    ),
    ("goal_updated", r#"{"type":"goal_updated","goal":null}"#),
    // pi 0.73 events
    (
        "compaction_start (pi)",
        r#"{"type":"compaction_start","reason":"manual"}"#,
    ),
    (
        "compaction_end (pi)",
        r#"{"type":"compaction_end","reason":"overflow","result":{"summary":"s","firstKeptEntryId":"e9","tokensBefore":1000},"aborted":false,"willRetry":true}"#,
    ),
    (
        "queue_update (pi)",
        r#"{"type":"queue_update","steering":["stop"],"followUp":[]}"#,
    ),
    (
        "session_info_changed (pi)",
        r#"{"type":"session_info_changed","name":"wire work"}"#,
    ),
    (
        "thinking_level_changed (pi)",
        r#"{"type":"thinking_level_changed","level":"low"}"#,
    ),
    // HOST-06
    (
        "ui select",
        r#"{"type":"extension_ui_request","id":"ui-1","method":"select","title":"Pick","options":["a","b"],"optionDetails":[{"description":"first"},{}],"timeout":30000}"#,
    ),
    (
        "ui confirm",
        r#"{"type":"extension_ui_request","id":"ui-2","method":"confirm","title":"Sure?","message":"Delete 3 files","timeout":10000}"#,
    ),
    (
        "ui input",
        r#"{"type":"extension_ui_request","id":"ui-3","method":"input","title":"Name","placeholder":"main"}"#,
    ),
    (
        "ui editor",
        r#"{"type":"extension_ui_request","id":"ui-4","method":"editor","title":"Edit","prefill":"text","promptStyle":true}"#,
    ),
    (
        "ui cancel",
        r#"{"type":"extension_ui_request","id":"ui-5","method":"cancel","targetId":"ui-1"}"#,
    ),
    (
        "ui notify",
        r#"{"type":"extension_ui_request","id":"ui-6","method":"notify","message":"Saved","notifyType":"info"}"#,
    ),
    (
        "ui setStatus",
        r#"{"type":"extension_ui_request","id":"ui-7","method":"setStatus","statusKey":"git","statusText":"main*"}"#,
    ),
    (
        "ui setStatus clear",
        r#"{"type":"extension_ui_request","id":"ui-8","method":"setStatus","statusKey":"git"}"#,
    ),
    (
        "ui setWidget",
        r#"{"type":"extension_ui_request","id":"ui-9","method":"setWidget","widgetKey":"todo","widgetLines":["- a","- b"],"widgetPlacement":"belowEditor"}"#,
    ),
    (
        "ui setTitle",
        r#"{"type":"extension_ui_request","id":"ui-10","method":"setTitle","title":"omp: wire"}"#,
    ),
    (
        "ui set_editor_text",
        r#"{"type":"extension_ui_request","id":"ui-11","method":"set_editor_text","text":"/compact"}"#,
    ),
    (
        "ui open_url",
        r#"{"type":"extension_ui_request","id":"ui-12","method":"open_url","url":"https://auth.example/authorize?client_id=x&state=y","launchUrl":"http://127.0.0.1:5173/l/abc","instructions":"Log in"}"#,
    ),
    // HOST-02, HOST-03
    (
        "host_tool_call",
        r#"{"type":"host_tool_call","id":"ht-1","toolCallId":"toolu_09","toolName":"host_search","arguments":{"query":"wire","limit":5}}"#,
    ),
    (
        "host_tool_cancel",
        r#"{"type":"host_tool_cancel","id":"ht-2","targetId":"ht-1"}"#,
    ),
    // HOST-05
    (
        "host_uri_request read",
        r#"{"type":"host_uri_request","id":"hu-1","operation":"read","url":"db://users/42"}"#,
    ),
    (
        "host_uri_request write",
        r#"{"type":"host_uri_request","id":"hu-2","operation":"write","url":"notion://page/1","content":"Title\n===="}"#,
    ),
    (
        "host_uri_cancel",
        r#"{"type":"host_uri_cancel","id":"hu-3","targetId":"hu-1"}"#,
    ),
    (
        "available_commands_update",
        r#"{"type":"available_commands_update","commands":[{"name":"compact","description":"Compact","source":"builtin"}]}"#,
    ),
    (
        "extension_error",
        r#"{"type":"extension_error","extensionPath":"/ext/a.ts","event":"tool_call","error":"TypeError: x is undefined"}"#,
    ),
    (
        "subagent_lifecycle",
        r#"{"type":"subagent_lifecycle","payload":{"id":"sa-1","agent":"explore","agentSource":"bundled","status":"started","index":0,"sessionFile":"/tmp/sa-1.jsonl"}}"#,
    ),
    // omp 18.2.3's shapes, member for member as its task tool builds them.
    (
        "subagent_lifecycle (omp, ended)",
        r#"{"type":"subagent_lifecycle","payload":{"id":"0-Explore","agent":"explore","parentToolCallId":"toolu_01","detached":false,"agentSource":"bundled","description":"Find callers","status":"completed","sessionFile":"/s/0-Explore.jsonl","index":0}}"#,
    ),
    (
        "subagent_progress",
        r#"{"type":"subagent_progress","payload":{"index":0,"agent":"explore","agentSource":"bundled","task":"grep","progress":{"id":"sa-1","status":"running","toolCount":2}}}"#,
    ),
    (
        "subagent_progress (omp)",
        r#"{"type":"subagent_progress","payload":{"index":0,"agent":"explore","agentSource":"bundled","task":"Find the callers of parse","parentToolCallId":"toolu_01","detached":false,"assignment":"List each caller","progress":{"index":0,"id":"0-Explore","agent":"explore","agentSource":"bundled","status":"running","task":"Find the callers of parse","assignment":"List each caller","description":"Find callers","lastIntent":"Searching for parse","recentTools":[{"tool":"grep","args":"parse","endMs":1777629601000}],"recentOutput":["src/a.rs:3: parse(x)"],"toolCount":2,"requests":3,"tokens":1543,"cost":0.0123,"durationMs":2345,"currentTool":"grep","modelRole":"smol"},"sessionFile":"/s/0-Explore.jsonl"}}"#,
    ),
    (
        "subagent_event",
        r#"{"type":"subagent_event","payload":{"id":"sa-1","event":{"type":"tool_execution_start","toolCallId":"t5","toolName":"grep","args":{"pattern":"fn"}}}}"#,
    ),
    // FRAME-12
    (
        "rpc_frame_error",
        r#"{"type":"rpc_frame_error","originalType":"tool_execution_update","error":"RPC frame exceeded the transport limit"}"#,
    ),
    (
        "command_output",
        r#"{"type":"command_output","text":"Session renamed."}"#,
    ),
    (
        "session_info_update",
        r#"{"type":"session_info_update","title":"wire","sessionId":"s1"}"#,
    ),
    (
        "config_update",
        r#"{"type":"config_update","model":{"id":"gpt-5","provider":"openai"},"thinkingLevel":"high"}"#,
    ),
];

/// (name, frame) for every frame a host writes besides commands.
pub const HOST_FRAMES: &[(&str, &str)] = &[
    // HOST-06
    (
        "ui response value",
        r#"{"type":"extension_ui_response","id":"ui-1","value":"a"}"#,
    ),
    (
        "ui response confirmed",
        r#"{"type":"extension_ui_response","id":"ui-2","confirmed":true}"#,
    ),
    (
        "ui response cancelled",
        r#"{"type":"extension_ui_response","id":"ui-3","cancelled":true}"#,
    ),
    (
        "ui response timed out",
        r#"{"type":"extension_ui_response","id":"ui-4","cancelled":true,"timedOut":true}"#,
    ),
    // HOST-02
    (
        "host_tool_update",
        r#"{"type":"host_tool_update","id":"ht-1","partialResult":{"content":[{"type":"text","text":"searching"}],"details":{"done":1}}}"#,
    ),
    (
        "host_tool_result",
        r#"{"type":"host_tool_result","id":"ht-1","result":{"content":[{"type":"text","text":"3 hits"}]}}"#,
    ),
    (
        "host_tool_result error",
        r#"{"type":"host_tool_result","id":"ht-1","result":{"content":[{"type":"text","text":"boom"}]},"isError":true}"#,
    ),
    // HOST-05
    (
        "host_uri_result",
        r#"{"type":"host_uri_result","id":"hu-1","content":"{\"id\":42}","contentType":"application/json","notes":["cached"],"immutable":true}"#,
    ),
    (
        "host_uri_result error",
        r#"{"type":"host_uri_result","id":"hu-1","isError":true,"error":"not found"}"#,
    ),
];

/// (name, command line) for every command, id first as the reference host writes them.
pub const COMMANDS: &[(&str, &str)] = &[
    (
        "negotiate_protocol",
        r#"{"id":"req-0","type":"negotiate_protocol","protocolVersion":2}"#,
    ),
    (
        "prompt",
        r#"{"id":"req-1","type":"prompt","message":"List files","images":[{"type":"image","data":"AA==","mimeType":"image/png"}],"streamingBehavior":"followUp"}"#,
    ),
    ("steer", r#"{"id":"req-2","type":"steer","message":"Stop"}"#),
    (
        "follow_up",
        r#"{"id":"req-3","type":"follow_up","message":"Then test"}"#,
    ),
    ("abort", r#"{"id":"req-4","type":"abort"}"#),
    (
        "abort_and_prompt",
        r#"{"id":"req-5","type":"abort_and_prompt","message":"Instead do X"}"#,
    ),
    (
        "new_session",
        r#"{"id":"req-6","type":"new_session","parentSession":"/s.jsonl"}"#,
    ),
    ("get_state", r#"{"id":"req-7","type":"get_state"}"#),
    (
        "set_fast_mode",
        r#"{"id":"req-8","type":"set_fast_mode","enabled":true}"#,
    ),
    (
        "get_available_commands",
        r#"{"id":"req-9","type":"get_available_commands"}"#,
    ),
    (
        "set_todos",
        r#"{"id":"req-10","type":"set_todos","phases":[{"name":"Build","tasks":[]}]}"#,
    ),
    (
        "set_host_tools",
        r#"{"id":"req-11","type":"set_host_tools","tools":[{"name":"host_search","label":"Search","description":"Search the host index","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]},"loadMode":"essential"}]}"#,
    ),
    (
        "set_host_uri_schemes",
        r#"{"id":"req-12","type":"set_host_uri_schemes","schemes":[{"scheme":"db","description":"Database","writable":true},{"scheme":"notion","immutable":true}]}"#,
    ),
    (
        "set_subagent_subscription",
        r#"{"id":"req-13","type":"set_subagent_subscription","level":"events"}"#,
    ),
    ("get_subagents", r#"{"id":"req-14","type":"get_subagents"}"#),
    (
        "get_subagent_messages",
        r#"{"id":"req-15","type":"get_subagent_messages","subagentId":"sa-1","fromByte":512}"#,
    ),
    (
        "set_model",
        r#"{"id":"req-16","type":"set_model","provider":"openai","modelId":"gpt-5"}"#,
    ),
    ("cycle_model", r#"{"id":"req-17","type":"cycle_model"}"#),
    (
        "get_available_models",
        r#"{"id":"req-18","type":"get_available_models"}"#,
    ),
    (
        "set_thinking_level",
        r#"{"id":"req-19","type":"set_thinking_level","level":"high"}"#,
    ),
    (
        "cycle_thinking_level",
        r#"{"id":"req-20","type":"cycle_thinking_level"}"#,
    ),
    (
        "set_steering_mode",
        r#"{"id":"req-21","type":"set_steering_mode","mode":"all"}"#,
    ),
    (
        "set_follow_up_mode",
        r#"{"id":"req-22","type":"set_follow_up_mode","mode":"one-at-a-time"}"#,
    ),
    (
        "set_interrupt_mode",
        r#"{"id":"req-23","type":"set_interrupt_mode","mode":"wait"}"#,
    ),
    (
        "compact",
        r#"{"id":"req-24","type":"compact","customInstructions":"Keep the API"}"#,
    ),
    (
        "set_auto_compaction",
        r#"{"id":"req-25","type":"set_auto_compaction","enabled":false}"#,
    ),
    (
        "set_auto_retry",
        r#"{"id":"req-26","type":"set_auto_retry","enabled":true}"#,
    ),
    ("abort_retry", r#"{"id":"req-27","type":"abort_retry"}"#),
    (
        "bash",
        r#"{"id":"req-28","type":"bash","command":"cargo test"}"#,
    ),
    ("abort_bash", r#"{"id":"req-29","type":"abort_bash"}"#),
    (
        "get_session_stats",
        r#"{"id":"req-30","type":"get_session_stats"}"#,
    ),
    (
        "export_html",
        r#"{"id":"req-31","type":"export_html","outputPath":"/tmp/s.html"}"#,
    ),
    (
        "switch_session",
        r#"{"id":"req-32","type":"switch_session","sessionPath":"/s2.jsonl"}"#,
    ),
    (
        "branch",
        r#"{"id":"req-33","type":"branch","entryId":"e7"}"#,
    ),
    (
        "get_branch_messages",
        r#"{"id":"req-34","type":"get_branch_messages"}"#,
    ),
    (
        "get_last_assistant_text",
        r#"{"id":"req-35","type":"get_last_assistant_text"}"#,
    ),
    (
        "set_session_name",
        r#"{"id":"req-36","type":"set_session_name","name":"wire"}"#,
    ),
    ("handoff", r#"{"id":"req-37","type":"handoff"}"#),
    ("get_messages", r#"{"id":"req-38","type":"get_messages"}"#),
    (
        "get_messages_page",
        r#"{"id":"req-39","type":"get_messages_page","cursor":"eyJ2ZXJzaW9uIjoxfQ","limit":256}"#,
    ),
    (
        "get_login_providers",
        r#"{"id":"req-40","type":"get_login_providers"}"#,
    ),
    (
        "login",
        r#"{"id":"req-41","type":"login","providerId":"anthropic"}"#,
    ),
    (
        "get_commands (pi)",
        r#"{"id":"req-42","type":"get_commands"}"#,
    ),
    (
        "fork (pi)",
        r#"{"id":"req-43","type":"fork","entryId":"e7"}"#,
    ),
    ("clone (pi)", r#"{"id":"req-44","type":"clone"}"#),
    (
        "get_fork_messages (pi)",
        r#"{"id":"req-45","type":"get_fork_messages"}"#,
    ),
    (
        "get_entries (pi 1.6)",
        r#"{"id":"req-46","type":"get_entries","since":"a3"}"#,
    ),
];
