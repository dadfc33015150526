//! ACP-40..42: sign-in. The `authMethods` `initialize` offers by agent kind and the editor's
//! `auth.terminal`; `authenticate` run as omp's `login` in an agent of its own, its sign-in
//! page a URL elicitation and its pasted code a form one, cancelled by the editor; a turn
//! that failed for want of credentials answered `auth_required`.

use crate::support as acp_support;

use crate::pinned::{AGENT_METHOD, SIGN_IN_REQUIRED, TERMINAL_LOGIN_ARG, TERMINAL_METHOD};
use acp_support::{assistant, Harness};
use musewire_core::acp::{terminal_login_command, Bridge, BridgeConfig};
use musewire_core::client::AgentKind;
use serde_json::{json, Value};

fn harness(agent: AgentKind) -> Harness {
    let mut h = Harness::new();
    h.bridge = Bridge::new(BridgeConfig {
        agent,
        ..Default::default()
    });
    h
}

fn method_ids(h: &Harness) -> Vec<String> {
    h.answer(1).unwrap()["result"]["authMethods"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|m| m["id"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

const READY: &str = r#"{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]}"#;

/// An omp bridge initialized with these client capabilities, `authenticate` with
/// `login-anthropic` sent (request 5), the login agent ready: its key and the `login` frame.
fn login(capabilities: Value) -> (Harness, String, Value) {
    let mut h = harness(AgentKind::Omp);
    h.request(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": capabilities}),
    );
    h.request(5, "authenticate", json!({"methodId": "login-anthropic"}));
    let key = h.spawned.last().expect("a login agent").0.clone();
    h.agent_lines(&key, &[serde_json::from_str(READY).unwrap()]);
    let login = h.asked("login").expect("login sent");
    assert_eq!(login["providerId"], "anthropic");
    (h, key, login)
}

fn open_url(h: &mut Harness, key: &str) {
    h.agent_lines(
        key,
        &[
            json!({"type": "extension_ui_request", "id": "u1", "method": "open_url",
            "url": "https://claude.ai/oauth/authorize?code=true&state=s1",
            "launchUrl": "http://localhost:54545/launch",
            "instructions": "Complete login in your browser."}),
        ],
    );
}

fn elicitations(h: &Harness) -> Vec<Value> {
    h.editor
        .iter()
        .filter(|m| m["method"] == "elicitation/create")
        .cloned()
        .collect()
}

#[test]
fn acp_40_omp_offers_its_own_sign_in_first_then_a_login_per_provider_and_terminal_when_asked() {
    let mut h = harness(AgentKind::Omp);
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    assert_eq!(
        method_ids(&h),
        [
            "agent",
            "login-anthropic",
            "login-openai-codex",
            "login-google-gemini-cli",
            "login-google-antigravity"
        ]
    );
    let mut h = harness(AgentKind::Omp);
    h.request(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"auth": {"terminal": true}}}),
    );
    let methods = h.answer(1).unwrap()["result"]["authMethods"].clone();
    let terminal = methods.as_array().unwrap().last().unwrap();
    assert_eq!(terminal["id"], TERMINAL_METHOD);
    assert_eq!(terminal["type"], "terminal");
    // omp 18.2.3's browser sign-ins, by the names omp gives them (ACP-41).
    let names = [
        "Anthropic (Claude Pro/Max)",
        "ChatGPT Plus/Pro (Codex Subscription)",
        "Google Cloud Code Assist (Gemini CLI)",
        "Antigravity (Gemini 3, Claude, GPT-OSS)",
    ];
    let logins: Vec<&str> = methods.as_array().unwrap()[1..=names.len()]
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(logins, names);
    assert_eq!(terminal["args"], json!([TERMINAL_LOGIN_ARG]));
    assert_eq!(methods[0]["id"], AGENT_METHOD);
}

#[test]
fn acp_40_pi_offers_its_own_sign_in_and_the_terminal_and_other_agents_none() {
    let mut h = harness(AgentKind::Pi);
    h.request(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"auth": {"terminal": true}}}),
    );
    assert_eq!(method_ids(&h), ["agent", "terminal"]);
    let mut h = harness(AgentKind::Pi);
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    assert_eq!(method_ids(&h), ["agent"]);
    for agent in [AgentKind::Bundled, AgentKind::Other] {
        let mut h = harness(agent);
        h.request(
            1,
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {"auth": {"terminal": true}}}),
        );
        assert!(method_ids(&h).is_empty(), "{agent:?}");
    }
}

#[test]
fn acp_40_the_agents_own_sign_in_answers_at_once_and_others_are_invalid_params() {
    let mut h = harness(AgentKind::Pi);
    h.request(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"auth": {"terminal": true}}}),
    );
    h.request(2, "authenticate", json!({"methodId": "agent"}));
    assert_eq!(h.answer(2).unwrap()["result"], json!({}));
    assert!(h.spawned.is_empty(), "nothing started");
    h.request(3, "authenticate", json!({"methodId": "terminal"}));
    assert_eq!(h.answer(3).unwrap()["error"]["code"], -32602);
    // pi has no RPC login.
    h.request(4, "authenticate", json!({"methodId": "login-anthropic"}));
    assert_eq!(h.answer(4).unwrap()["error"]["code"], -32602);
    assert!(h.spawned.is_empty());
}

#[test]
fn acp_41_the_sign_in_page_is_a_url_elicitation_and_the_login_answers_authenticate() {
    let (mut h, key, login) = login(json!({"elicitation": {"url": {}, "form": {}}}));
    open_url(&mut h, &key);
    let asked = elicitations(&h);
    assert_eq!(asked.len(), 1, "{:#?}", h.editor);
    let params = &asked[0]["params"];
    assert_eq!(params["mode"], "url");
    assert_eq!(
        params["url"],
        "https://claude.ai/oauth/authorize?code=true&state=s1"
    );
    assert_eq!(params["requestId"], 5, "tied to the authenticate request");
    assert_eq!(params["message"], "Complete login in your browser.");
    assert!(h.answer(5).is_none(), "authenticate waits for the login");
    // Nothing of the login agent reaches the editor as a session's.
    assert!(h.updates().is_empty());
    h.send(json!({"jsonrpc": "2.0", "id": asked[0]["id"], "result": {"action": "accept"}}));
    assert!(h.answer(5).is_none());
    h.agent_lines(
        &key,
        &[
            json!({"id": login["id"], "type": "response", "command": "login",
            "success": true, "data": {"providerId": "anthropic"}}),
        ],
    );
    assert_eq!(h.answer(5).unwrap()["result"], json!({}));
    let complete = h
        .editor
        .iter()
        .find(|m| m["method"] == "elicitation/complete")
        .expect("the URL elicitation completed");
    assert_eq!(
        complete["params"]["elicitationId"],
        asked[0]["params"]["elicitationId"]
    );
    assert_eq!(h.closed, [key], "the login agent is stopped");
}

#[test]
fn acp_41_a_pasted_code_is_a_form_and_its_text_reaches_the_agent_only() {
    let (mut h, key, _) = login(json!({"elicitation": {"url": {}, "form": {}}}));
    open_url(&mut h, &key);
    h.agent_lines(
        &key,
        &[
            json!({"type": "extension_ui_request", "id": "c1", "method": "input",
            "title": "Paste the authorization code", "placeholder": "code#state"}),
        ],
    );
    let asked = elicitations(&h);
    assert_eq!(asked.len(), 2);
    let form = &asked[1]["params"];
    assert_eq!(form["mode"], "form");
    assert_eq!(form["requestId"], 5);
    assert_eq!(
        form["requestedSchema"]["properties"]["value"]["type"],
        "string"
    );
    let shown = h.editor.len();
    h.send(json!({"jsonrpc": "2.0", "id": asked[1]["id"],
        "result": {"action": "accept", "content": {"value": "secret-code#s1"}}}));
    let answer = h
        .agent
        .iter()
        .find(|m| m["type"] == "extension_ui_response")
        .expect("the dialog answered");
    assert_eq!(answer["id"], "c1");
    assert_eq!(answer["value"], "secret-code#s1");
    let later = serde_json::to_string(&h.editor[shown..]).unwrap();
    assert!(!later.contains("secret-code"), "{later}");
}

#[test]
fn acp_41_a_declined_sign_in_page_cancels_the_flow_and_stops_the_agent() {
    let (mut h, key, _) = login(json!({"elicitation": {"url": {}}}));
    open_url(&mut h, &key);
    let asked = elicitations(&h);
    h.send(json!({"jsonrpc": "2.0", "id": asked[0]["id"], "result": {"action": "decline"}}));
    assert_eq!(h.answer(5).unwrap()["error"]["code"], -32800);
    assert_eq!(h.closed, [key]);
}

#[test]
fn acp_41_the_editor_withdrawing_authenticate_cancels_the_flow() {
    let (mut h, key, _) = login(json!({"elicitation": {"url": {}}}));
    open_url(&mut h, &key);
    h.send(json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 5}}));
    assert_eq!(h.answer(5).unwrap()["error"]["code"], -32800);
    assert_eq!(h.closed, [key]);
}

#[test]
fn acp_41_without_url_elicitation_authenticate_answers_with_the_url_and_the_login_goes_on() {
    let (mut h, key, _) = login(json!({}));
    open_url(&mut h, &key);
    let error = &h.answer(5).unwrap()["error"];
    assert_eq!(error["code"], -32000);
    assert_eq!(
        error["data"]["url"],
        "https://claude.ai/oauth/authorize?code=true&state=s1"
    );
    assert!(error["data"]["message"]
        .as_str()
        .unwrap()
        .contains("https://claude.ai/oauth/authorize"));
    assert!(elicitations(&h).is_empty());
    assert!(
        h.closed.is_empty(),
        "the page's callback still reaches the agent"
    );
    // A pasted-code dialog has no form to go to: left open (omp would ask again at once
    // after an empty answer), the login still waiting for the page's callback.
    h.agent_lines(
        &key,
        &[
            json!({"type": "extension_ui_request", "id": "c1", "method": "input",
            "title": "Paste the authorization code"}),
        ],
    );
    assert!(h.agent.iter().all(|m| m["type"] != "extension_ui_response"));
    assert!(elicitations(&h).is_empty());
}

#[test]
fn acp_41_a_failed_login_fails_authenticate_with_the_agents_text() {
    let (mut h, key, login) = login(json!({"elicitation": {"url": {}}}));
    h.agent_lines(
        &key,
        &[
            json!({"id": login["id"], "type": "response", "command": "login",
            "success": false, "error": "Unknown OAuth provider: anthropic"}),
        ],
    );
    let error = &h.answer(5).unwrap()["error"];
    assert_eq!(error["code"], -32603);
    assert_eq!(error["data"], "Unknown OAuth provider: anthropic");
    assert_eq!(h.closed, [key]);
}

fn failed_turn(error: &str) -> Harness {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "x");
    let mut failed = assistant("", "error");
    failed["errorMessage"] = json!(error);
    h.agent_lines(
        &s,
        &[
            json!({"type": "message_end", "message": failed.clone()}),
            json!({"type": "agent_end", "messages": [failed]}),
        ],
    );
    h.answer_stats(&s, None);
    h
}

#[test]
fn acp_42_a_401_ends_the_prompt_auth_required_with_the_providers_text_in_the_turn() {
    let h = failed_turn("401 Incorrect API key provided");
    let text: String = h
        .updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(text, "[error: 401 Incorrect API key provided]\n");
    let answer = h.answer(10).unwrap();
    assert_eq!(answer["error"]["code"], -32000, "{answer:#}");
    assert_eq!(answer["error"]["data"]["message"], SIGN_IN_REQUIRED);
    assert_eq!(
        answer["error"]["data"]["error"],
        "401 Incorrect API key provided"
    );
}

#[test]
fn acp_42_missing_keys_and_models_are_auth_required_other_errors_end_the_turn() {
    for error in [
        "No API key found for anthropic.\n\nUse /login, set an API key environment variable",
        "No model selected.",
        "Unauthorized",
    ] {
        let h = failed_turn(error);
        assert_eq!(h.answer(10).unwrap()["error"]["code"], -32000, "{error}");
    }
    for error in [
        "HTTP 400 model_not_supported",
        "4010 tokens over",
        "overloaded",
    ] {
        let h = failed_turn(error);
        assert_eq!(
            h.answer(10).unwrap()["result"]["stopReason"],
            "end_turn",
            "{error}"
        );
    }
}

#[test]
fn acp_42_a_prompt_refused_for_want_of_a_key_is_auth_required_with_its_text() {
    let mut h = Harness::new();
    let s = h.session();
    h.request(
        10,
        "session/prompt",
        json!({"sessionId": s, "prompt": [{"type": "text", "text": "x"}]}),
    );
    let sent = h.agent.last().unwrap().clone();
    let agent = h.agent_to.last().unwrap().to_string();
    h.agent_lines(
        &agent,
        &[
            json!({"id": sent["id"], "type": "response", "command": "prompt",
            "success": false, "error": "No API key found for fake."}),
        ],
    );
    assert_eq!(h.answer(10).unwrap()["error"]["code"], -32000);
    let shown = h.updates();
    assert_eq!(
        shown[0]["content"]["text"],
        "[error: No API key found for fake.]\n"
    );
}

#[test]
fn acp_40_the_terminal_methods_argument_runs_the_agent_without_rpc_mode() {
    let line = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    assert_eq!(
        terminal_login_command(&line(&[
            "omp",
            "--mode",
            "rpc",
            "--model",
            "m",
            TERMINAL_LOGIN_ARG
        ])),
        Some(line(&["omp", "--model", "m"]))
    );
    assert_eq!(
        terminal_login_command(&line(&[
            "bun",
            "pi.js",
            "--mode=rpc",
            TERMINAL_LOGIN_ARG,
            "-e",
            "x"
        ])),
        Some(line(&["bun", "pi.js", "-e", "x"]))
    );
    assert_eq!(
        terminal_login_command(&line(&["omp", "--mode", "rpc"])),
        None
    );
}

#[test]
fn acp_41_a_pasted_code_form_not_accepted_cancels_the_sign_in() {
    let (mut h, key, _) = login(json!({"elicitation": {"url": {}, "form": {}}}));
    open_url(&mut h, &key);
    h.agent_lines(
        &key,
        &[
            json!({"type": "extension_ui_request", "id": "c1", "method": "input",
            "title": "Paste the authorization code"}),
        ],
    );
    let form = elicitations(&h)[1].clone();
    h.send(json!({"jsonrpc": "2.0", "id": form["id"], "result": {"action": "cancel"}}));
    assert_eq!(h.answer(5).unwrap()["error"]["code"], -32800);
    assert_eq!(h.closed, [key]);
}

#[test]
fn acp_41_a_second_sign_in_cancels_the_first_whose_agent_then_shows_nothing() {
    let (mut h, first, _) = login(json!({"elicitation": {"url": {}}}));
    h.request(6, "authenticate", json!({"methodId": "login-openai-codex"}));
    assert_eq!(h.answer(5).unwrap()["error"]["code"], -32800);
    assert_eq!(h.closed.len(), 1);
    assert_eq!(h.closed[0], first);
    let shown = h.editor.len();
    // The first agent on its way out: an unknown frame and a dialog show nothing.
    h.agent_lines(
        &first,
        &[
            json!({"type": "advisor_cost_changed"}),
            json!({"type": "extension_ui_request", "id": "u9", "method": "open_url", "url": "https://x"}),
        ],
    );
    h.agent_exit(&first);
    assert_eq!(h.editor.len(), shown, "{:#?}", &h.editor[shown..]);
    assert!(h.answer(6).is_none(), "the second sign-in runs");
}
