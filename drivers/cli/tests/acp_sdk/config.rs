//! A session's options and sign-in: the model and thinking level picked in the editor
//! (ACP-24), omp's `/model` builtin (ACP-10), a provider's 401 (ACP-11, ACP-42), and the sign-
//! in methods (ACP-40, ACP-41).

use super::*;

/// ACP-24 through the official client with the bundled agent: session/new offers its two
/// models and omp's thinking levels (it speaks v2); setting the model moves the next turn
/// onto it (`/status` observes it on the assistant message), a level is set, and a value not
/// offered is refused.
#[test]
fn acp_24_the_sdk_client_picks_the_bundled_agents_model_and_thinking_level() {
    let Some(out) = Sdk::new("config")
        .env("ACP_MODEL", "musewire/scripted-large")
        .env("ACP_PROMPT", "hello")
        .run()
    else {
        return;
    };
    let options = &out["configOptions"];
    let models = config_option(options, "model");
    assert_eq!(models["category"], "model");
    assert_eq!(models["currentValue"], "musewire/scripted", "{options:#}");
    assert_eq!(
        option_values(models),
        ["musewire/scripted", "musewire/scripted-large"]
    );
    let thought = config_option(options, "thought_level");
    assert_eq!(option_values(thought).last().unwrap(), "max");
    let set = &out["setModel"]["result"]["configOptions"];
    assert_eq!(
        config_option(set, "model")["currentValue"],
        "musewire/scripted-large",
        "{out:#}"
    );
    let set = &out["setThought"]["result"]["configOptions"];
    assert_eq!(config_option(set, "thought_level")["currentValue"], "high");
    assert_eq!(out["bad"]["code"], -32602, "{out:#}");
    assert_eq!(out["turn"]["stopReason"], "end_turn");
    let status = text_of(&out["status"], "agent_message_chunk");
    assert!(
        status.contains("last observed model: scripted-large"),
        "{status}"
    );
    assert!(status.contains("requested effort: high"), "{status}");
}

/// ACP-24 over a live agent on the scripted model server: the model picked in the editor is
/// the model the next request names.
fn model_switch_reaches_the_model_server(tag: &str, pi: Option<Pi>) {
    let live = match pi {
        None => Live::omp(tag),
        Some(pi) => Live::pi(pi, tag),
    };
    let Some(live) = live else {
        return;
    };
    let out = Sdk::over("config", &live)
        .env("ACP_MODEL", "fake/fake-model-2")
        .env("ACP_PROMPT", "[[text switched]]")
        .run()
        .expect("the SDK is there");
    let server = &live.server;
    let models = config_option(&out["configOptions"], "model");
    assert_eq!(models["currentValue"], "fake/fake-model", "{out:#}");
    assert!(option_values(models).contains(&"fake/fake-model-2".to_owned()));
    let set = &out["setModel"]["result"]["configOptions"];
    assert_eq!(
        config_option(set, "model")["currentValue"],
        "fake/fake-model-2",
        "{out:#}"
    );
    assert_eq!(out["bad"]["code"], -32602, "{out:#}");
    assert_eq!(out["turn"]["stopReason"], "end_turn", "{out:#}");
    let last = server.requests().pop().expect("the model was called");
    assert_eq!(last["model"], "fake-model-2", "{last:#}");
}

#[test]
fn acp_24_the_model_picked_over_omp_rpc_is_the_one_the_model_server_is_asked_for() {
    model_switch_reaches_the_model_server("acp-config-omp", None);
}

#[test]
fn acp_24_the_model_picked_over_pi_rpc_is_the_one_the_model_server_is_asked_for() {
    model_switch_reaches_the_model_server("acp-config-pi", Some(Pi::V1_6));
}

/// ACP-10, ACP-24 over omp 18.2.3's RPC mode: omp's `/model` builtin is a local turn (its
/// output shown, `end_turn`); the model it switches to moves the editor's model option
/// (`config_option_update`) and is the one the next turn's request names.
#[test]
fn acp_10_24_omps_model_builtin_ends_its_turn_and_moves_the_option() {
    let Some(omp) = Live::omp("acp-omp-model-builtin") else {
        return;
    };
    let out = Sdk::over("omp-model", &omp)
        .env("ACP_MODEL", "fake/fake-model-2")
        .env("ACP_AFTER", "[[text switched by command]]")
        .run()
        .expect("the SDK is there");
    let server = &omp.server;
    let models = config_option(&out["configOptions"], "model");
    assert_eq!(models["currentValue"], "fake/fake-model", "{out:#}");
    let switch = &out["switch"]["result"];
    assert_eq!(switch["stopReason"], "end_turn", "{out:#}");
    assert!(
        text_of(switch, "agent_message_chunk").contains("fake-model-2"),
        "{out:#}"
    );
    let moved = switch["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["sessionUpdate"] == "config_option_update")
        .any(|u| {
            config_option(&u["configOptions"], "model")["currentValue"] == "fake/fake-model-2"
        });
    assert!(moved, "the model option moved: {out:#}");
    let after = &out["after"]["result"];
    assert_eq!(after["stopReason"], "end_turn", "{out:#}");
    assert_eq!(text_of(after, "agent_message_chunk"), "switched by command");
    let last = server.requests().pop().expect("the model was called");
    assert_eq!(last["model"], "fake-model-2", "{last:#}");
}

/// ACP-11, ACP-42: the scripted model's 401 shows the provider's text in the turn and fails
/// the prompt with `auth_required` (-32000), so the editor offers sign-in; the next turn runs.
fn check_auth_required(live: &Live) {
    let out = Sdk::over("provider-error", live)
        .env("ACP_PROMPT", "[[status 401 Incorrect API key provided]]")
        .env("ACP_AFTER", "[[text still here]]")
        .run()
        .expect("the SDK is there");
    assert_eq!(out["failed"]["code"], -32000, "{out:#}");
    let shown = text_of(
        &json!({"updates": out["failedUpdates"]}),
        "agent_message_chunk",
    );
    assert!(shown.contains("Incorrect API key provided"), "{shown:?}");
    assert_eq!(out["after"]["result"]["stopReason"], "end_turn", "{out:#}");
    assert_eq!(
        text_of(&out["after"]["result"], "agent_message_chunk"),
        "still here"
    );
}

/// ACP-11 over omp 18.2.3's RPC mode: the model server answers the model call 401; the
/// turn shows the provider's error text and ends `end_turn`, and the session goes on.
#[test]
fn acp_11_42_a_providers_401_is_shown_in_the_turn_and_ends_it_auth_required_over_omp_rpc() {
    let Some(omp) = Live::omp("acp-omp-provider-error") else {
        return;
    };
    check_auth_required(&omp);
}

#[test]
fn acp_11_42_a_providers_401_is_shown_in_the_turn_and_ends_it_auth_required_over_pi_rpc() {
    let Some(pi) = Live::pi(Pi::V0_73, "acp-pi-provider-error") else {
        return;
    };
    check_auth_required(&pi);
}

/// ACP-40, ACP-41 over omp 18.2.3's RPC mode through the official SDK, as an editor offering
/// terminal sign-in and url and form elicitation: omp's methods (its own sign-in first, a
/// login per browser provider, the terminal method last); `agent` answers `{}`; the Anthropic
/// login reaches its sign-in page as a URL elicitation tied to `authenticate`, which the editor
/// declines before omp reaches any network: the sign-in is answered -32800.
#[test]
fn acp_40_41_omps_sign_in_methods_and_its_login_page_as_a_url_elicitation_through_the_sdk() {
    let Some(omp) = Live::omp("acp-omp-sign-in") else {
        return;
    };
    let out = Sdk::over("auth", &omp)
        .env("ACP_LOGIN_METHOD", "login-anthropic")
        .run()
        .expect("the SDK is there");
    let methods = out["initialize"]["authMethods"].as_array().unwrap();
    let ids: Vec<&str> = methods.iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "agent",
            "login-anthropic",
            "login-openai-codex",
            "login-google-gemini-cli",
            "login-google-antigravity",
            "terminal"
        ],
        "{out:#}"
    );
    assert_eq!(methods[5]["type"], "terminal");
    assert_eq!(methods[5]["args"], json!(["--musewire-terminal-login"]));
    assert_eq!(out["agentMethod"]["result"], json!({}), "{out:#}");
    let page = &out["elicitations"][0];
    assert_eq!(page["mode"], "url", "{out:#}");
    assert!(page["requestId"].is_number(), "{page:#}");
    assert!(
        page["url"]
            .as_str()
            .is_some_and(|u| u.starts_with("https://claude.ai/oauth/authorize")),
        "{page:#}"
    );
    assert_eq!(out["login"]["code"], -32800, "{out:#}");
    assert_eq!(out["bridgeExit"], 0);
}

/// ACP-40 over pi 0.73.1's RPC mode: pi has no RPC login, so its own sign-in and the terminal
/// method, which `musewire acp` runs as pi's interactive mode.
#[test]
fn acp_40_pis_sign_in_methods_through_the_sdk() {
    let Some(pi) = Live::pi(Pi::V0_73, "acp-pi-sign-in") else {
        return;
    };
    let out = Sdk::over("auth", &pi).run().expect("the SDK is there");
    let methods = out["initialize"]["authMethods"].as_array().unwrap();
    let ids: Vec<&str> = methods.iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["agent", "terminal"], "{out:#}");
    assert_eq!(out["agentMethod"]["result"], json!({}), "{out:#}");
}
