//! A call its caller gave up on before the loop took it is never made (issue 13 item 3): the
//! driver's [`Plumbing::withdrawn`] says so (a mio call that timed out while the queue was
//! full, a smol call future dropped), and [`Driven::op`] then neither hands the call to the
//! client nor replies.

use std::time::{Duration, Instant};

use musewire_core::client::{
    commands, Answer, Call, Client, ClientConfig, ClientEvent, Driven, Input, Op, Plumbing,
    Replied, RequestKey,
};

/// A driver's I/O that keeps the bytes for the agent and the replies it was asked to give.
#[derive(Default)]
struct Pipes {
    written: Vec<u8>,
    replies: Vec<&'static str>,
}

/// A reply end: which caller, and whether that caller still waits.
type Reply = (&'static str, bool);

impl Plumbing for Pipes {
    type Waiter = ();
    type WaitEnd = ();
    type Reply = Reply;
    type Error = std::io::Error;

    fn write(&mut self, bytes: Vec<u8>) {
        self.written.extend(bytes);
    }
    fn kill(&mut self) {}
    fn event(&mut self, _event: ClientEvent) -> bool {
        true
    }
    fn answer(&mut self, _waiter: (), _answer: Answer) {}
    fn waiter(&mut self) -> ((), ()) {
        ((), ())
    }
    fn reply(&mut self, reply: Reply, _replied: Replied<()>) {
        self.replies.push(reply.0);
    }
    fn withdrawn(&self, reply: &Reply) -> bool {
        !reply.1
    }
    fn finished(&mut self, _key: &RequestKey) {}
    fn close_stdin(&mut self, _grace: Duration) {}
    fn try_exit(&mut self) -> std::io::Result<Option<std::process::ExitStatus>> {
        Ok(None)
    }
}

const READY: &[u8] = b"{\"type\":\"ready\",\"protocolVersions\":[1]}\n";

#[test]
fn issue13_item3_a_withdrawn_call_is_never_made() {
    let now = Instant::now();
    let mut driven: Driven<()> = Driven::new(
        Client::new(ClientConfig::default(), now),
        None,
        Default::default(),
    );
    let mut io = Pipes::default();
    driven.input(now, Input::Timeout, || None, &mut io).unwrap();
    driven
        .input(now, Input::stdout(READY), || None, &mut io)
        .unwrap();
    let call = |reply| Op::Call {
        call: Call::Send(commands::prompt("gave up")),
        wait: true,
        reply,
    };
    driven.op(now, call(("gone", false)), &mut io).unwrap();
    assert!(
        io.written.is_empty(),
        "{}",
        String::from_utf8_lossy(&io.written)
    );
    assert!(io.replies.is_empty());

    let kept = Op::Call {
        call: Call::Send(commands::prompt("still wanted")),
        wait: true,
        reply: ("waiting", true),
    };
    driven.op(now, kept, &mut io).unwrap();
    let written = String::from_utf8(io.written.clone()).unwrap();
    assert!(written.contains("still wanted"), "{written}");
    assert!(!written.contains("gave up"), "{written}");
    assert_eq!(io.replies, ["waiting"]);
}
