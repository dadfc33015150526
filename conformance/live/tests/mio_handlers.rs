//! Live: the blocking driver's host handlers (plain closures on worker threads) against omp.
//! A handled request never reaches the events; the handler's answer reaches the agent; a
//! cancelled call is flagged to its handler and its late answer is dropped.

use musewire_live::support::typed_command;
use std::sync::mpsc;
use std::time::Duration;

use musewire_core::client::ClientEvent;
use musewire_live::model_server::ModelServer;
use musewire_live::support::{deltas, frames, text_result, Driver, Session, WAIT};
use musewire_wire::HostUriResult;
use serde_json::json;

/// HOST-01, HOST-02, HOST-04, HOST-05: a host tool handler streams an update and answers; a
/// host URI handler answers a read of `db://users/42`; neither request shows up as an event.
#[test]
fn host_02_05_tool_and_uri_handlers_answer_the_agent() {
    let server = ModelServer::start().unwrap();
    let Some(s) = Session::omp(Driver::Mio, "handlers", &server) else {
        return;
    };
    s.register_lookup();
    s.call(typed_command(
        json!({"type": "set_host_uri_schemes", "schemes": [{"scheme": "db"}]}),
    ))
    .expect("set_host_uri_schemes");
    s.mio().on_host_tool("lookup", |call, updates| {
        assert!(updates.send(text_result("looking…")));
        let word = call.arguments["word"].as_str().unwrap_or("").to_owned();
        text_result(&format!("{word} is a protocol stack")).into()
    });
    s.mio().on_host_uri(|request| HostUriResult {
        content: Some(format!("{} says Ada Lovelace", request.url)),
        ..Default::default()
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
    s.shutdown();
}

/// HOST-03: `abort` while a handler runs: the handler sees `is_cancelled`, its update and
/// late result are dropped, and the session goes on.
#[test]
fn host_03_abort_cancels_the_running_tool_handler() {
    let server = ModelServer::start().unwrap();
    let Some(s) = Session::omp(Driver::Mio, "handlercancel", &server) else {
        return;
    };
    s.register_lookup();
    let (started_tx, started) = mpsc::channel();
    let (seen_tx, seen) = mpsc::channel();
    let started_tx = std::sync::Mutex::new(started_tx);
    let seen_tx = std::sync::Mutex::new(seen_tx);
    s.mio().on_host_tool("lookup", move |_, updates| {
        let _ = started_tx.lock().unwrap().send(());
        let deadline = std::time::Instant::now() + WAIT;
        while !updates.is_cancelled() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let late_update = updates.send(text_result("late"));
        let _ = seen_tx
            .lock()
            .unwrap()
            .send((updates.is_cancelled(), late_update));
        text_result("too late").into()
    });
    s.prompt(r#"[[tool lookup {"word":"forever"}]]"#);
    started.recv_timeout(WAIT).expect("the handler started");
    s.call(typed_command(json!({"type": "abort"})))
        .expect("abort");
    let (cancelled, late_update) = seen.recv_timeout(WAIT).expect("the handler ended");
    assert!(cancelled, "the handler was told");
    assert!(!late_update, "an update after the cancel is dropped");
    let turn = s.turn();
    assert!(!turn
        .iter()
        .any(|e| matches!(e, ClientEvent::HostToolCancelled { .. })));
    s.prompt("[[text Still here.]]");
    assert_eq!(deltas(&s.turn(), "text_delta"), "Still here.");
    s.shutdown();
}
