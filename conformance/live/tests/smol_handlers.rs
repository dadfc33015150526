//! Live: the async driver's host handlers (async closures) against omp. A handled request
//! never reaches the events; the handler's answer does reach the agent; a cancelled call
//! drops its handler.

use musewire_live::support::typed_command;
use std::time::Duration;

use musewire_core::client::ClientEvent;
use musewire_host::HostToolAnswer;
use musewire_live::model_server::ModelServer;
use musewire_live::support::{deltas, frames, text_result, within, Driver, Session, WAIT};
use musewire_wire::HostUriResult;
use serde_json::json;

/// HOST-01, HOST-02, HOST-04, HOST-05: a host tool handler streams an update and answers; a
/// host URI handler answers a read of `db://users/42`; the model sees both, and neither
/// request shows up as an event.
#[test]
fn host_02_05_async_tool_and_uri_handlers_answer_the_agent() {
    let server = ModelServer::start().unwrap();
    let Some(s) = Session::omp(Driver::Smol, "handlers", &server) else {
        return;
    };
    s.register_lookup();
    s.call(typed_command(
        json!({"type": "set_host_uri_schemes", "schemes": [{"scheme": "db"}]}),
    ))
    .expect("set_host_uri_schemes");
    let agent = s.smol();
    agent.on_host_tool("lookup", |call, updates| async move {
        assert!(updates.send(text_result("looking…")).await);
        smol::Timer::after(Duration::from_millis(50)).await;
        let word = call.arguments["word"].as_str().unwrap_or("").to_owned();
        text_result(&format!("{word} is a protocol stack")).into()
    });
    agent.on_host_uri(|request| async move {
        HostUriResult {
            content: Some(format!("{} says Ada Lovelace", request.url)),
            ..Default::default()
        }
    });

    s.prompt(r#"[[tool lookup {"word":"musewire"}]]"#);
    let turn = s.turn();
    assert_eq!(
        deltas(&turn, "text_delta"),
        "lookup returned: musewire is a protocol stack"
    );
    assert!(frames(&turn, "tool_execution_update").next().is_some());
    assert!(!turn
        .iter()
        .any(|e| matches!(e, ClientEvent::HostToolCall { .. })));

    s.prompt(r#"[[tool read {"path":"db://users/42"}]]"#);
    let turn = s.turn();
    let text = deltas(&turn, "text_delta");
    assert!(text.contains("db://users/42 says Ada Lovelace"), "{text}");
    assert!(!turn
        .iter()
        .any(|e| matches!(e, ClientEvent::HostUriRequest { .. })));
    s.shutdown();
}

/// HOST-03: `abort` while a handler runs: the agent cancels the call and the driver drops
/// the handler (its future is dropped before it could answer); the session goes on.
#[test]
fn host_03_abort_drops_the_running_tool_handler() {
    let server = ModelServer::start().unwrap();
    let Some(s) = Session::omp(Driver::Smol, "handlercancel", &server) else {
        return;
    };
    s.register_lookup();
    let (started_tx, started) = smol::channel::bounded::<()>(1);
    let (dropped_tx, dropped) = smol::channel::bounded::<()>(1);
    s.smol().on_host_tool("lookup", move |_, _| {
        let started = started_tx.clone();
        // Dropped with the handler's future: tells the test the handler was cancelled.
        let guard = DropSignal(dropped_tx.clone());
        async move {
            let _guard = guard;
            let _ = started.send(()).await;
            smol::future::pending::<()>().await;
            HostToolAnswer::ok(text_result("never"))
        }
    });
    s.prompt(r#"[[tool lookup {"word":"forever"}]]"#);
    within("the handler's start", WAIT, started.recv()).expect("started");
    within("abort", WAIT, s.smol().abort()).expect("abort");
    within("the handler's drop", WAIT, dropped.recv()).expect("dropped");
    let turn = s.turn();
    assert!(!turn
        .iter()
        .any(|e| matches!(e, ClientEvent::HostToolCancelled { .. })));
    s.prompt("[[text Still here.]]");
    assert_eq!(deltas(&s.turn(), "text_delta"), "Still here.");
    s.shutdown();
}

struct DropSignal(smol::channel::Sender<()>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        let _ = self.0.try_send(());
    }
}
