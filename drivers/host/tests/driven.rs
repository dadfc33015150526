//! The loop bookkeeping every driver shares ([`Driven`]) over a stand-in driver:
//! - the session's local files: what [`Driven::input`] records is appended to its
//!   [`LocalFiles`], apart from the driver's [`Plumbing`], and a session that is not
//!   recording appends nothing;
//! - a call its caller gave up on before the loop took it is never made: the driver's
//!   [`Plumbing::withdrawn`] says so (a mio call that timed out while the queue was full, a
//!   smol call future dropped), and [`Driven::op`] then neither hands the call to the client
//!   nor replies;
//! - the exit is asked for as the driver learns of it ([`ExitWatch`]): at every reap from a
//!   driver woken by the exit, at most every [`EXIT_CHECK_WHILE_OPEN`] from one that is not,
//!   whose loop is then woken for it (CALL-07: an exit while the output is open is seen).

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use musewire_core::client::{Call, CallResult, Client, ClientConfig, ClientEvent, Input, Recorder};
use musewire_core::spill::{SaveFailure, Saved, SpillWrite};
use musewire_host::{
    Driven, ExitWatch, Flow, Heard, LocalFiles, Op, Plumbing, RequestKey, EXIT_CHECK_WHILE_OPEN,
};
use musewire_wire::Prompt;

/// Files that keep the transcript they are given where the test reads it.
#[derive(Debug, Default)]
struct Kept(Rc<RefCell<Vec<u8>>>);

impl LocalFiles for Kept {
    fn record(&mut self, transcript: &[u8]) -> std::io::Result<()> {
        self.0.borrow_mut().extend_from_slice(transcript);
        Ok(())
    }

    fn save(&mut self, _write: &SpillWrite) -> Result<Saved, SaveFailure> {
        Err(SaveFailure::no_store())
    }
}

/// A driver's I/O that keeps the bytes for the agent and the replies it was asked to give.
#[derive(Default)]
struct Pipes {
    written: Vec<u8>,
    /// Who heard, and whether what they heard was an answer (else what the call returned).
    replies: Vec<&'static str>,
    answers: Vec<&'static str>,
    /// Who heard that their call made no request because the client refused it.
    refused: Vec<&'static str>,
    /// How the exit is learnt of (`None`: the trait's default), and how often it was asked.
    watch: Option<ExitWatch>,
    exit_asked: usize,
}

/// A reply end: which caller, and whether that caller still waits.
type Reply = (&'static str, bool);

impl Plumbing for Pipes {
    type Reply = Reply;
    type Error = std::io::Error;

    fn write(&mut self, bytes: Vec<u8>) {
        self.written.extend(bytes);
    }
    fn kill(&mut self) {}
    fn event(&mut self, _event: ClientEvent) -> bool {
        true
    }
    fn hear(&mut self, reply: Reply, heard: Heard) {
        match heard {
            Heard::Replied(CallResult::Request(Err(_))) => self.refused.push(reply.0),
            Heard::Replied(_) => self.replies.push(reply.0),
            Heard::Answer(_) => self.answers.push(reply.0),
        }
    }
    fn withdrawn(&self, reply: &Reply) -> bool {
        !reply.1
    }
    fn finished(&mut self, _key: &RequestKey) {}
    fn close_stdin(&mut self, _grace: Duration) {}
    fn try_exit(&mut self) -> std::io::Result<Option<std::process::ExitStatus>> {
        self.exit_asked += 1;
        Ok(None)
    }
    fn exit_watch(&self) -> ExitWatch {
        self.watch.unwrap_or(ExitWatch::Asked)
    }
}

/// A prompt call from the caller behind `reply`, waiting for its answer or not.
fn prompt(text: &str, wait: bool, reply: Reply) -> Op<Reply> {
    Op::Call {
        call: Call::Send(Prompt::new(text).into()),
        wait,
        reply,
    }
}

const READY: &[u8] = b"{\"type\":\"ready\",\"protocolVersions\":[1]}\n";

/// Runs the construction step and a ready frame through a [`Driven`] (recording when
/// `record`), returning what its files were given.
fn session(record: bool) -> Vec<u8> {
    let now = Instant::now();
    let config = ClientConfig::default();
    let recorder = record.then(|| Recorder::new(now, &config, &["FRAME-03"], "a test"));
    let kept = Kept::default();
    let transcript = Rc::clone(&kept.0);
    let mut driven: Driven<Reply, Kept> = Driven::new(Client::new(config, now), recorder, kept);
    let mut io = Pipes::default();
    driven.input(now, Input::Timeout, || None, &mut io).unwrap();
    driven
        .input(now, Input::stdout(READY), || None, &mut io)
        .unwrap();
    let kept = transcript.borrow().clone();
    kept
}

#[test]
fn what_the_loop_records_goes_to_the_session_files() {
    let now = Instant::now();
    let config = ClientConfig::default();
    let recorder = Recorder::new(now, &config, &["FRAME-03"], "a test");
    let mut alone: Driven<Reply> =
        Driven::new(Client::new(config, now), Some(recorder), Default::default());
    let (_, header_and_first, _) = alone.handle(now, Input::Timeout, || None);
    let (_, second, _) = alone.handle(now, Input::stdout(READY), || None);

    let kept = session(true);
    let text = String::from_utf8(kept.clone()).unwrap();
    assert_eq!(text.lines().count(), 3, "the header and two steps: {text}");
    assert!(text
        .lines()
        .next()
        .unwrap()
        .contains("\"description\":\"a test\""));
    assert_eq!(kept, [header_and_first, second].concat());
}

#[test]
fn a_session_not_recording_gives_its_files_nothing() {
    assert_eq!(session(false), b"");
}

#[test]
fn a_withdrawn_call_is_never_made() {
    let now = Instant::now();
    let mut driven: Driven<Reply> = Driven::new(
        Client::new(ClientConfig::default(), now),
        None,
        Default::default(),
    );
    let mut io = Pipes::default();
    driven.input(now, Input::Timeout, || None, &mut io).unwrap();
    driven
        .input(now, Input::stdout(READY), || None, &mut io)
        .unwrap();
    // Only FRAME-03's start-up probe went to the agent so far.
    assert_eq!(io.written, b"{\"id\":\"req_0\",\"type\":\"get_state\"}\n");
    io.written.clear();
    let gave_up = prompt("gave up", true, ("gone", false));
    driven.op(now, gave_up, &mut io).unwrap();
    assert!(
        io.written.is_empty(),
        "{}",
        String::from_utf8_lossy(&io.written)
    );
    assert!(io.replies.is_empty());

    let kept = prompt("still wanted", true, ("waiting", true));
    driven.op(now, kept, &mut io).unwrap();
    let written = String::from_utf8(io.written.clone()).unwrap();
    assert!(written.contains("still wanted"), "{written}");
    assert!(!written.contains("gave up"), "{written}");
    // A waited call that made its request hears nothing yet: its answer comes on the same
    // channel, once (one wake a round trip).
    assert!(io.replies.is_empty() && io.answers.is_empty());
    let sent: serde_json::Value = serde_json::from_str(written.trim()).unwrap();
    let response = format!(
        "{{\"id\":{},\"type\":\"response\",\"command\":\"prompt\",\"success\":true}}\n",
        sent["id"]
    );
    driven
        .input(now, Input::stdout(response.as_bytes()), || None, &mut io)
        .unwrap();
    assert_eq!(io.answers, ["waiting"]);
    assert!(io.replies.is_empty());
    // A call that does not wait hears what it returned at once.
    let sent = prompt("no wait", false, ("sent", true));
    driven.op(now, sent, &mut io).unwrap();
    assert_eq!(io.replies, ["sent"]);
    // A waited call the client refuses (a prompt without a streaming behaviour while the
    // agent streams, CALL-04) makes no request: it hears so at once, and nothing waits for
    // an answer.
    let streaming = b"{\"type\":\"agent_start\"}\n";
    driven
        .input(now, Input::stdout(streaming), || None, &mut io)
        .unwrap();
    let refused = prompt("mid-run", true, ("refused", true));
    driven.op(now, refused, &mut io).unwrap();
    assert_eq!(io.refused, ["refused"]);
    assert_eq!(io.answers, ["waiting"]);
}

/// A session past its start, its output open, over `io`.
fn running(now: Instant, io: &mut Pipes) -> Driven<Reply> {
    let mut driven: Driven<Reply> = Driven::new(
        Client::new(ClientConfig::default(), now),
        None,
        Default::default(),
    );
    driven.input(now, Input::Timeout, || None, io).unwrap();
    driven
        .input(now, Input::stdout(READY), || None, io)
        .unwrap();
    driven
}

/// A driver woken by the agent's exit (a pidfd) is asked for it at every reap: its asking
/// costs nothing until the exit came, and the exit is seen at the wake it made.
#[test]
fn call_07_a_driver_told_of_the_exit_is_asked_for_it_at_every_reap() {
    let now = Instant::now();
    let mut io = Pipes {
        watch: Some(ExitWatch::Told),
        ..Pipes::default()
    };
    let mut driven = running(now, &mut io);
    for _ in 0..3 {
        driven.reap(now, &mut io).unwrap();
    }
    assert_eq!(io.exit_asked, 3);
    // No wake of its own for the exit (the client has no timer here either): the driver's
    // wake is the exit's.
    assert_eq!(driven.deadline(now), None);
}

/// A driver not told of the exit (the default) is asked for it at most every
/// `EXIT_CHECK_WHILE_OPEN` while the output is open, and its loop is woken for the next
/// question: an agent that exits while what it left holds its output open is seen to exit,
/// not only at the next wake something else makes.
#[test]
fn call_07_a_driver_not_told_of_the_exit_is_asked_at_intervals_and_woken_for_them() {
    let now = Instant::now();
    let mut io = Pipes::default();
    let mut driven = running(now, &mut io);
    driven.reap(now, &mut io).unwrap();
    driven
        .reap(now + Duration::from_millis(1), &mut io)
        .unwrap();
    assert_eq!(io.exit_asked, 1);
    let next = now + EXIT_CHECK_WHILE_OPEN;
    let woken = driven.deadline(now).expect("a wake for the next question");
    assert!(woken <= next, "woken at {:?}", woken - now);
    driven.reap(next, &mut io).unwrap();
    assert_eq!(io.exit_asked, 2);
}

/// A driver not told of the exit that holds stdout back for the application is not woken to
/// ask for it: it would not ask while held (CALL-07: the exit goes in after all of stdout),
/// so the passed deadline would wake its loop again at once, a busy loop for as long as the
/// application leaves its events; the application's next take wakes it instead.
#[test]
fn call_07_a_driver_holding_stdout_back_is_not_woken_to_ask_for_the_exit() {
    let now = Instant::now();
    let mut io = Pipes::default();
    let mut driven = running(now, &mut io);
    driven.reap(now, &mut io).unwrap();
    assert_eq!(io.exit_asked, 1);
    // Three events of 900 KB the application has not taken: over BACKLOG_BYTES.
    let pad = "x".repeat(900 * 1024);
    for _ in 0..3 {
        let line = format!("{{\"type\":\"agent_start\",\"pad\":\"{pad}\"}}\n");
        driven
            .input(now, Input::stdout(line.as_bytes()), || None, &mut io)
            .unwrap();
    }
    assert!(
        driven.hold_stdout(&Flow::default()),
        "2.7 MB of events not taken hold stdout back"
    );
    let later = now + EXIT_CHECK_WHILE_OPEN * 3;
    driven.reap(later, &mut io).unwrap();
    assert_eq!(
        io.exit_asked, 1,
        "the exit is not asked for while stdout is held back"
    );
    let woken = driven.deadline(later);
    assert!(
        woken.is_none_or(|at| at > later),
        "woken at once while held: {:?}",
        woken.map(|at| at.saturating_duration_since(later))
    );
}
