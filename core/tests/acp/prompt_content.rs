//! ACP-14..16: a prompt's images, embedded context, resource links and audio as the agent's
//! RPC `prompt {message, images}`, with exactly that advertised at `initialize`.

use crate::support as acp_support;

use crate::pinned::{
    AUDIO_NOTE, CONTEXT_CUT_NOTICE, IMAGES_TOO_LARGE, IMAGE_NOT_TAKEN_NOTE, MAX_CONTEXT_BYTES,
    MAX_PROMPT_IMAGES, TOO_MANY_IMAGES,
};
use acp_support::Harness;
use musewire_core::acp::{Bridge, BridgeConfig};
use musewire_core::client::AgentKind;
use serde_json::{json, Value};

/// A harness whose agent takes images.
fn imaging() -> Harness {
    let mut h = Harness::new();
    h.bridge = Bridge::new(BridgeConfig {
        agent: AgentKind::Omp,
        ..BridgeConfig::default()
    });
    h
}

fn prompt(h: &mut Harness, session: &str, id: u64, blocks: Value) {
    h.request(
        id,
        "session/prompt",
        json!({"sessionId": session, "prompt": blocks}),
    );
}

fn last_prompt(h: &Harness) -> Option<Value> {
    h.agent
        .iter()
        .rev()
        .find(|m| m["type"] == "prompt")
        .cloned()
}

fn texts(h: &Harness) -> String {
    h.updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn acp_14_initialize_advertises_images_only_for_an_agent_that_takes_them() {
    for (agent, image) in [(AgentKind::Other, false), (AgentKind::Pi, true)] {
        let mut h = Harness::new();
        h.bridge = Bridge::new(BridgeConfig {
            agent,
            ..BridgeConfig::default()
        });
        h.request(1, "initialize", json!({"protocolVersion": 1}));
        let caps = &h.answer(1).unwrap()["result"]["agentCapabilities"]["promptCapabilities"];
        assert_eq!(caps["image"], image, "{caps}");
        assert_eq!(caps["embeddedContext"], true, "{caps}");
        assert_eq!(caps["audio"], false, "{caps}");
    }
}

#[test]
fn acp_14_images_and_image_blobs_reach_the_rpc_prompt() {
    let mut h = imaging();
    let s = h.session();
    prompt(
        &mut h,
        &s,
        10,
        json!([
            {"type": "text", "text": "what is this?"},
            {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///p/a.jpg", "blob": "aGk=", "mimeType": "image/jpeg"}},
        ]),
    );
    let sent = last_prompt(&h).expect("the prompt was sent");
    assert_eq!(sent["message"], "what is this?");
    assert_eq!(
        sent["images"],
        json!([
            {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
            {"type": "image", "data": "aGk=", "mimeType": "image/jpeg"},
        ])
    );
}

#[test]
fn acp_14_a_prompt_without_images_sends_no_images_member() {
    let mut h = imaging();
    let s = h.session();
    h.prompt(&s, "hello");
    assert!(last_prompt(&h).unwrap().get("images").is_none());
}

#[test]
fn acp_14_too_many_images_is_a_typed_error_and_nothing_is_sent() {
    let mut h = imaging();
    let s = h.session();
    let image = json!({"type": "image", "data": "aGk=", "mimeType": "image/png"});
    let blocks: Vec<Value> = std::iter::repeat_n(image, MAX_PROMPT_IMAGES + 1).collect();
    prompt(&mut h, &s, 10, json!(blocks));
    let answer = h.answer(10).unwrap();
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(answer["error"]["data"]["code"], TOO_MANY_IMAGES);
    assert_eq!(answer["error"]["data"]["limit"], MAX_PROMPT_IMAGES);
    assert!(last_prompt(&h).is_none(), "nothing reached the agent");
    // The session is unharmed: the next prompt runs.
    h.editor.clear();
    h.prompt(&s, "after");
    assert_eq!(last_prompt(&h).unwrap()["message"], "after");
}

#[test]
fn acp_14_too_many_image_bytes_is_a_typed_error_and_nothing_is_sent() {
    let mut h = imaging();
    let s = h.session();
    // 6 MiB of decoded bytes each: two are over the 10 MiB bound.
    let data = "A".repeat(8 * 1024 * 1024);
    let image = json!({"type": "image", "data": data, "mimeType": "image/png"});
    prompt(&mut h, &s, 10, json!([image.clone(), image]));
    let answer = h.answer(10).unwrap();
    assert_eq!(answer["error"]["code"], -32602);
    assert_eq!(answer["error"]["data"]["code"], IMAGES_TOO_LARGE);
    assert!(last_prompt(&h).is_none());
    h.prompt(&s, "after");
    assert_eq!(last_prompt(&h).unwrap()["message"], "after");
}

#[test]
fn acp_14_an_image_for_an_agent_without_images_is_noted_not_sent() {
    let mut h = Harness::new();
    let s = h.session();
    prompt(
        &mut h,
        &s,
        10,
        json!([{"type": "text", "text": "look"}, {"type": "image", "data": "aGk=", "mimeType": "image/png"}]),
    );
    let sent = last_prompt(&h).unwrap();
    assert_eq!(sent["message"], "look");
    assert!(sent.get("images").is_none());
    assert!(texts(&h).contains(IMAGE_NOT_TAKEN_NOTE), "{}", texts(&h));
}

#[test]
fn acp_15_embedded_text_is_inlined_as_context_marked_with_uri_and_type() {
    let mut h = imaging();
    let s = h.session();
    prompt(
        &mut h,
        &s,
        10,
        json!([
            {"type": "text", "text": "explain"},
            {"type": "resource", "resource": {"uri": "file:///p/main.rs", "text": "fn main() {}", "mimeType": "text/x-rust"}},
        ]),
    );
    assert_eq!(
        last_prompt(&h).unwrap()["message"],
        "explain\n<context uri=\"file:///p/main.rs\" mimeType=\"text/x-rust\">\nfn main() {}\n</context>"
    );
}

#[test]
fn acp_15_embedded_context_is_bounded_to_4_mib_with_a_visible_note() {
    let mut h = imaging();
    let s = h.session();
    let big = "x".repeat(3 * 1024 * 1024);
    prompt(
        &mut h,
        &s,
        10,
        json!([
            {"type": "resource", "resource": {"uri": "file:///p/a", "text": big}},
            {"type": "resource", "resource": {"uri": "file:///p/b", "text": big}},
            {"type": "resource", "resource": {"uri": "file:///p/c", "text": "never"}},
        ]),
    );
    let message = last_prompt(&h).unwrap()["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.len() <= MAX_CONTEXT_BYTES, "{}", message.len());
    assert!(message.ends_with(CONTEXT_CUT_NOTICE));
    assert!(message.contains("<context uri=\"file:///p/b\">"));
    assert!(!message.contains("never"));
    assert_eq!(texts(&h), format!("{CONTEXT_CUT_NOTICE}\n"));
}

#[test]
fn acp_15_a_resource_link_is_a_mention_with_title_and_size() {
    let mut h = imaging();
    let s = h.session();
    prompt(
        &mut h,
        &s,
        10,
        json!([
            {"type": "text", "text": "see"},
            {"type": "resource_link", "name": "main.rs", "uri": "file:///p/main.rs", "title": "Main", "size": 1234},
            {"type": "resource_link", "name": "bare", "uri": "file:///p/bare"},
            {"type": "resource_link", "name": "signed", "uri": "https://b.s3.amazonaws.com/p?X-Amz-Signature=abc123secret"},
        ]),
    );
    let message = last_prompt(&h).unwrap()["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        message,
        "see\n[@main.rs](file:///p/main.rs) (\"Main\", 1234 bytes)\n[@bare](file:///p/bare)\n[@signed](uri withheld: it may carry a credential)"
    );
}

#[test]
fn acp_16_audio_and_binary_blobs_are_noted_in_the_turn() {
    let mut h = imaging();
    let s = h.session();
    prompt(
        &mut h,
        &s,
        10,
        json!([
            {"type": "text", "text": "listen"},
            {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///p/x.bin", "blob": "aGk=", "mimeType": "application/octet-stream"}},
        ]),
    );
    let sent = last_prompt(&h).unwrap();
    assert_eq!(
        sent["message"],
        "listen\n[embedded resource not sent: file:///p/x.bin (application/octet-stream) is binary]"
    );
    assert!(sent.get("images").is_none());
    let shown = texts(&h);
    assert!(shown.contains(AUDIO_NOTE), "{shown}");
    assert!(
        shown.contains("x.bin (application/octet-stream) is binary"),
        "{shown}"
    );
}
