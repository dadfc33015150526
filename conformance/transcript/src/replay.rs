//! The replayer: drives a [`Client`] or an [`Agent`] (the transcript's role) through a
//! transcript with a virtual clock (one `Instant::now()` base plus each step's `at`) and
//! compares the actions drained after each step with the step's `expect`, exactly (through
//! their `serde_json` serialisation, long strings abbreviated: [`crate::diff`]).

use std::fmt;
use std::time::{Duration, Instant};

use musewire_core::acp::{self, Bridge, ProcessKey};
use musewire_core::agent::{self, Agent};
use musewire_core::client::{self, Client};
use serde::Serialize;
use serde_json::Value;

use crate::diff::{cut, first_difference, normalize, truncated};
use crate::transcript::{Input, Role, SessionInput, Step, Transcript};

/// What one step produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The actions drained after the step, serialised and normalised.
    pub actions: Vec<Value>,
    /// The call's return value, for calls that return one.
    pub returns: Option<Value>,
}

/// The first step whose outcome differs from the transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// 1-based step number.
    pub step: usize,
    /// Its line in the file.
    pub line: usize,
    /// The step's input, abbreviated.
    pub input: String,
    /// What differs, with expected and actual values truncated.
    pub detail: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "step {} (line {}): {}\n{}",
            self.step, self.line, self.input, self.detail
        )
    }
}

/// The core a transcript drives (boxed: the two differ in size).
#[derive(Debug)]
pub enum Core {
    /// The host side.
    Client(Box<Client>),
    /// The agent side.
    Agent(Box<Agent>),
    /// The ACP bridge.
    Bridge(Box<Bridge>),
}

/// A core under a virtual clock.
#[derive(Debug)]
pub struct Session {
    /// The machine the transcript's header names by its role, built from the header's
    /// config.
    pub core: Core,
    /// Time zero.
    pub base: Instant,
}

/// Hands `bytes` to `handle` as reads cut at `cuts` (ascending offsets).
fn in_reads(bytes: &[u8], cuts: &[usize], mut handle: impl FnMut(&[u8])) {
    let mut from = 0;
    for &to in cuts.iter().chain(std::iter::once(&bytes.len())) {
        let to = to.clamp(from, bytes.len());
        handle(&bytes[from..to]);
        from = to;
    }
}

fn drain<A: Serialize>(mut poll: impl FnMut() -> Option<A>) -> Vec<Value> {
    std::iter::from_fn(&mut poll)
        .map(|a| normalize(&serde_json::to_value(&a).expect("actions serialise")))
        .collect()
}

impl Session {
    /// The core the transcript's header describes, at time zero.
    pub fn new(transcript: &Transcript) -> Result<Self, String> {
        let base = Instant::now();
        let config = &transcript.header.config;
        config.check(transcript.header.role)?;
        let core = match transcript.header.role {
            Role::Client => Core::Client(Box::new(Client::new(config.to_config(), base))),
            Role::Agent => Core::Agent(Box::new(Agent::new(config.to_agent_config()?))),
            Role::Bridge => Core::Bridge(Box::new(Bridge::new(config.to_bridge_config()))),
        };
        Ok(Session { core, base })
    }

    /// The virtual time `at` ms after the start.
    pub fn at(&self, at: u64) -> Instant {
        self.base + Duration::from_millis(at)
    }

    /// Applies one input at `at`, handing stdout (or stdin) in as reads cut at `cuts`
    /// (offsets into the bytes, ascending), and drains the actions. An input of the other
    /// role is an error.
    pub fn step(&mut self, at: u64, input: &Input, cuts: &[usize]) -> Result<Outcome, String> {
        let now = self.at(at);
        let wrong = || format!("input {input:?} does not fit this role");
        let (returns, actions) = match &mut self.core {
            Core::Client(c) => {
                // Every input goes through `Client::handle`, as in a driver.
                let returns = match input {
                    Input::Stdout(bytes) => {
                        in_reads(bytes, cuts, |b| {
                            c.handle(now, client::Input::stdout(b));
                        });
                        None
                    }
                    other => c
                        .handle(now, other.to_client().ok_or_else(wrong)?)
                        .to_json(),
                };
                (returns, drain(|| c.poll_action()))
            }
            Core::Agent(a) => {
                let returns = match input {
                    Input::Stdin(bytes) => {
                        in_reads(bytes, cuts, |b| {
                            a.handle(now, agent::Input::Stdin(b));
                        });
                        None
                    }
                    Input::Eof => {
                        a.handle(now, agent::Input::StdinEnd);
                        None
                    }
                    Input::Timer => {
                        a.handle(now, agent::Input::Timeout);
                        None
                    }
                    Input::AgentCall(call) => a
                        .handle(now, agent::Input::Call(call.clone()))
                        .and_then(|result| result.to_json()),
                    Input::AgentIo(io) => a.handle(now, io.clone()).and_then(|r| r.to_json()),
                    Input::SpillDone(id, saved) => a
                        .handle(now, agent::Input::SpillDone(*id, saved.clone()))
                        .and_then(|r| r.to_json()),
                    _ => return Err(wrong()),
                };
                (returns, drain(|| a.poll_action()))
            }
            Core::Bridge(b) => {
                match input {
                    Input::Editor(bytes) => {
                        in_reads(bytes, cuts, |r| b.handle(now, acp::Input::Editor(r)))
                    }
                    Input::EditorEnd => b.handle(now, acp::Input::EditorEnd),
                    Input::EditedFile(ticket, read) => {
                        b.handle(now, acp::Input::EditedFile(*ticket, read.clone()))
                    }
                    Input::Timer => b.handle(now, acp::Input::Timeout),
                    // MCP-01: a session input under a server key is that MCP server's.
                    Input::Session {
                        session: ProcessKey::McpServer(server),
                        input,
                    } => {
                        let server = *server;
                        match input {
                            SessionInput::Stdout(bytes) => in_reads(bytes, cuts, |r| {
                                b.handle(now, acp::Input::Mcp(server, acp::McpRead::Stdout(r)))
                            }),
                            SessionInput::Stderr(_) => {}
                            SessionInput::Eof => {
                                b.handle(now, acp::Input::Mcp(server, acp::McpRead::StdoutEnd))
                            }
                            SessionInput::Exit(_) => {
                                b.handle(now, acp::Input::Mcp(server, acp::McpRead::Exit))
                            }
                        }
                    }
                    Input::Session {
                        session: ProcessKey::Agent(key),
                        input,
                    } => {
                        let key = *key;
                        match input {
                            SessionInput::Stdout(bytes) => in_reads(bytes, cuts, |r| {
                                b.handle(now, acp::Input::AgentStdout(key, r))
                            }),
                            SessionInput::Stderr(bytes) => {
                                b.handle(now, acp::Input::AgentStderr(key, bytes))
                            }
                            SessionInput::Eof => b.handle(now, acp::Input::AgentStdoutEnd(key)),
                            SessionInput::Exit(status) => {
                                b.handle(now, acp::Input::AgentExit(key, *status))
                            }
                        }
                    }
                    _ => return Err(wrong()),
                }
                (None, drain(|| b.poll_action()))
            }
        };
        Ok(Outcome { actions, returns })
    }
}

/// Runs every step, stdout (or stdin) handed in as reads cut where `cuts(step_index, len)`
/// says.
pub fn run_with(
    transcript: &Transcript,
    cuts: &mut dyn FnMut(usize, usize) -> Vec<usize>,
) -> Result<Vec<Outcome>, String> {
    let mut session = Session::new(transcript)?;
    transcript
        .steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let cut_at = match step.input.stream_bytes() {
                Some(bytes) => cuts(i, bytes.len()),
                None => Vec::new(),
            };
            session
                .step(step.at, &step.input, &cut_at)
                .map_err(|e| format!("step {} (line {}): {e}", i + 1, step.line))
        })
        .collect()
}

/// Runs every step with stdout (or stdin) handed in whole.
pub fn run(transcript: &Transcript) -> Result<Vec<Outcome>, String> {
    run_with(transcript, &mut |_, _| Vec::new())
}

/// Compares one step's outcome with what the transcript expects.
pub fn check_step(index: usize, step: &Step, outcome: &Outcome) -> Result<(), Mismatch> {
    let mismatch = |detail: String| Mismatch {
        step: index + 1,
        line: step.line,
        input: step.summary(),
        detail,
    };
    let Some(expect) = step.expect() else {
        return Err(mismatch(
            "the step has no \"expect\" (write it with `musewire-conformance bless`)".into(),
        ));
    };
    if step.returns() != outcome.returns.as_ref() {
        let show = |v: Option<&Value>| v.map_or("nothing".into(), |v| truncated(v, 300));
        return Err(mismatch(format!(
            "returns: expected {}, actual {}",
            show(step.returns()),
            show(outcome.returns.as_ref())
        )));
    }
    let expected = normalize(&Value::Array(expect.clone()));
    let actual = Value::Array(outcome.actions.clone());
    let Some((path, e, a)) = first_difference(&expected, &actual) else {
        return Ok(());
    };
    let mut detail = format!(
        "actions differ ({} expected, {} actual); first at {path}:\n  expected: {}\n  actual:   {}\nactual actions:",
        expect.len(),
        outcome.actions.len(),
        truncated(&e, 400),
        truncated(&a, 400),
    );
    for (i, action) in outcome.actions.iter().take(20).enumerate() {
        detail.push_str(&format!("\n  [{i}] {}", truncated(action, 300)));
    }
    if outcome.actions.len() > 20 {
        detail.push_str(&format!("\n  … {} more", outcome.actions.len() - 20));
    }
    Err(mismatch(cut(&detail, 8000)))
}

/// Replays a transcript, stopping at the first mismatch.
pub fn replay(transcript: &Transcript) -> Result<(), String> {
    let outcomes = run(transcript)?;
    for (i, (step, outcome)) in transcript.steps.iter().zip(&outcomes).enumerate() {
        check_step(i, step, outcome).map_err(|m| m.to_string())?;
    }
    Ok(())
}

/// The transcript's text with every step's `expect` (and `returns`) set to what the core
/// actually does: how transcripts are authored. Review the result before committing it.
pub fn bless(transcript: &Transcript) -> Result<String, String> {
    let outcomes = run(transcript)?;
    let steps: Vec<_> = transcript
        .steps
        .iter()
        .zip(outcomes)
        .map(|(step, outcome)| (step.raw.clone(), outcome.actions, outcome.returns))
        .collect();
    Ok(crate::transcript::render(&transcript.header, &steps))
}

/// Replays each transcript in `files`, writing `ok PATH` or `FAIL PATH` with the mismatch (a
/// readable diff of expected and actual actions) to `out`, then a count. True when all
/// matched.
pub fn replay_files(
    files: &[std::path::PathBuf],
    out: &mut dyn std::io::Write,
) -> std::io::Result<bool> {
    let mut failed = 0;
    for path in files {
        match crate::transcript::load(path).and_then(|t| replay(&t)) {
            Ok(()) => writeln!(out, "ok   {}", path.display())?,
            Err(e) => {
                failed += 1;
                writeln!(out, "FAIL {}\n{e}", path.display())?;
            }
        }
    }
    writeln!(out, "{} transcripts, {failed} failed", files.len())?;
    Ok(failed == 0)
}
