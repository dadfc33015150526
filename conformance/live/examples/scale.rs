//! Scale benchmark, host side: N `musewire agent` sessions driven from this one process by the
//! smol driver or the mio driver.
//!
//! ```text
//! scale --driver smol|mio [--tasks global|local|threads] [--sessions 200] [--calls 50] [--words 64] [--agent target/release/musewire]
//! ```
//!
//! 1. spawns N `AGENT agent --mode rpc` and makes one `get_state` on each (the sessions are
//!    ready and idle): host RSS per idle session = (RSS now - RSS before spawning) / N;
//! 2. round trips: every session makes `--calls` sequential `get_state` calls, all sessions
//!    at once: p50/p99/max, round trips per second, host CPU seconds;
//! 3. streamed turns: every session sends one `--words`-word prompt, which the bundled agent
//!    echoes word by word, and reads its events to the terminal `agent_end`: host CPU, time to
//!    the acknowledgement and to `agent_end`.
//!
//! Host CPU is `getrusage(RUSAGE_SELF)`, user + system, of this process only (the agents are
//! children, not counted). Prints one flat JSON line; `conformance/bench/scale.sh` runs it
//! with both drivers beside the reference (`conformance/bench/scale.ts`) and prints the
//! ratios. The smol sessions are tasks on smol's global executor (where the driver runs its
//! own tasks), or with `--tasks local` on a local executor on the main thread (the drivers'
//! tasks stay on the global executor's thread: an application with a thread of its own).
//! The mio sessions are all driven by one `musewire_mio::Reactor` (one loop thread, one poll
//! over every agent's pipes); their round trips are made from the main thread alone, every
//! session's call open at once (`AgentProcess::submit_to`, each answer's tag on one
//! `Completions` queue, the session's next call made as its answer is taken), or with
//! `--tasks threads` from a thread per session, each making blocking calls in turn; each
//! session's streamed turn (a blocking prompt, then its events) runs on a thread of its own,
//! started before the phase.

use std::error::Error;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use musewire_core::client::{ClientConfig, ClientEvent};

type Res<T> = Result<T, Box<dyn Error + Send + Sync>>;

/// How long a blocking call may take before the benchmark gives up on it.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

struct Opts {
    driver: String,
    tasks: String,
    sessions: usize,
    calls: usize,
    words: usize,
    agent: PathBuf,
}

impl Opts {
    fn parse() -> Res<Opts> {
        let mut o = Opts {
            driver: String::new(),
            tasks: "global".into(),
            sessions: 200,
            calls: 50,
            words: 64,
            agent: PathBuf::from("target/release/musewire"),
        };
        let mut args = std::env::args().skip(1);
        while let Some(flag) = args.next() {
            let value = args.next().ok_or(format!("{flag} needs a value"))?;
            match flag.as_str() {
                "--driver" => o.driver = value,
                "--tasks" => o.tasks = value,
                "--sessions" => o.sessions = value.parse()?,
                "--calls" => o.calls = value.parse()?,
                "--words" => o.words = value.parse()?,
                "--agent" => o.agent = value.into(),
                _ => return Err(format!("unknown flag {flag}").into()),
            }
        }
        if o.sessions == 0 || o.calls == 0 {
            return Err("--sessions and --calls must be at least 1".into());
        }
        Ok(o)
    }

    /// The prompt: `--words` plain words, which the bundled agent echoes one by one.
    fn prompt(&self) -> String {
        (0..self.words)
            .map(|i| format!("word{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// What one session measured.
#[derive(Default)]
struct Session {
    round_trips: Vec<Duration>,
    ack: Duration,
    end: Duration,
}

/// Host CPU (user + system, this process) and wall time over a phase.
struct Meter {
    wall: Instant,
    cpu: (f64, f64),
}

/// What a phase took: wall seconds, and the host's user and system CPU seconds.
#[derive(Clone, Copy)]
struct Took {
    wall: f64,
    user: f64,
    sys: f64,
}

impl Took {
    fn cpu(&self) -> f64 {
        self.user + self.sys
    }
}

impl Meter {
    fn start() -> Meter {
        Meter {
            wall: Instant::now(),
            cpu: cpu_seconds(),
        }
    }

    fn stop(self) -> Took {
        let (user, sys) = cpu_seconds();
        Took {
            wall: self.wall.elapsed().as_secs_f64(),
            user: user - self.cpu.0,
            sys: sys - self.cpu.1,
        }
    }
}

/// This process's (user, system) CPU seconds so far.
fn cpu_seconds() -> (f64, f64) {
    // SAFETY: getrusage fills the zeroed struct it is given and reads nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}

/// The resident set size of this process, in KiB (VmRSS).
fn rss_kb() -> Res<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .ok_or("no VmRSS in /proc/self/status")?;
    Ok(line.trim().trim_end_matches("kB").trim().parse()?)
}

/// The nearest-rank `q` quantile of sorted `v`, in milliseconds.
fn quantile_ms(v: &[Duration], q: f64) -> f64 {
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1].as_secs_f64() * 1e3
}

/// What a driver run measured, before the statistics.
struct Run {
    rss_before: u64,
    rss_idle: u64,
    round_trips: Took,
    turns: Took,
    sessions: Vec<Session>,
}

/// Where the smol sessions' own tasks run: on smol's global executor beside the drivers'
/// tasks, or on a local executor on the main thread (`--tasks local`).
enum Spawner<'a> {
    Global,
    Local(&'a smol::LocalExecutor<'static>),
}

impl Spawner<'_> {
    fn spawn<T: Send + 'static>(
        &self,
        future: impl std::future::Future<Output = T> + Send + 'static,
    ) -> smol::Task<T> {
        match self {
            Spawner::Global => smol::spawn(future),
            Spawner::Local(local) => local.spawn(future),
        }
    }
}

fn run_smol(o: &Opts) -> Res<Run> {
    let local = smol::LocalExecutor::new();
    let spawner = match o.tasks.as_str() {
        "global" => Spawner::Global,
        "local" => Spawner::Local(&local),
        _ => return Err("--tasks global|local".into()),
    };
    smol::block_on(local.run(run_smol_on(o, &spawner)))
}

async fn run_smol_on(o: &Opts, spawner: &Spawner<'_>) -> Res<Run> {
    use musewire_smol::AgentProcess;
    // Spawns one task per session and waits for all of them.
    async fn all<T: Send + 'static>(
        agents: &[Arc<AgentProcess>],
        f: impl Fn(Arc<AgentProcess>) -> smol::Task<Res<T>>,
    ) -> Res<Vec<T>> {
        let tasks: Vec<_> = agents.iter().cloned().map(f).collect();
        let mut out = Vec::with_capacity(tasks.len());
        for task in tasks {
            out.push(task.await?);
        }
        Ok(out)
    }
    let prompt = Arc::new(o.prompt());
    let calls = o.calls;
    {
        let rss_before = rss_kb()?;
        let mut agents = Vec::with_capacity(o.sessions);
        for _ in 0..o.sessions {
            let mut command = std::process::Command::new(&o.agent);
            command.args(["agent", "--mode", "rpc"]);
            agents.push(Arc::new(AgentProcess::spawn(
                command,
                ClientConfig::default(),
            )?));
        }
        all(&agents, |a| {
            spawner.spawn(async move { Ok(a.get_state().await.map(drop)?) })
        })
        .await?;
        let rss_idle = rss_kb()?;

        let meter = Meter::start();
        let round_trips = all(&agents, |a| {
            spawner.spawn(async move {
                let mut times = Vec::with_capacity(calls);
                for _ in 0..calls {
                    let t = Instant::now();
                    a.get_state().await?;
                    times.push(t.elapsed());
                }
                Ok(times)
            })
        })
        .await?;
        let rt = meter.stop();

        let meter = Meter::start();
        let turns = all(&agents, |a| {
            let prompt = prompt.clone();
            spawner.spawn(async move {
                let t = Instant::now();
                a.prompt(&prompt).await?;
                let ack = t.elapsed();
                loop {
                    match a.next_event().await {
                        Some(ClientEvent::TurnFinished) => return Ok((ack, t.elapsed())),
                        Some(_) => {}
                        None => return Err("the session ended before agent_end".into()),
                    }
                }
            })
        })
        .await?;
        let turn = meter.stop();
        let sessions = round_trips
            .into_iter()
            .zip(turns)
            .map(|(round_trips, (ack, end))| Session {
                round_trips,
                ack,
                end,
            })
            .collect();
        Ok(Run {
            rss_before,
            rss_idle,
            round_trips: rt,
            turns: turn,
            sessions,
        })
    }
}

fn run_mio(o: &Opts) -> Res<Run> {
    use musewire_core::client::Call;
    use musewire_mio::{Completions, Pending, Reactor};
    use musewire_wire::{GetState, SessionState};
    let n = o.sessions;
    let get_state = || Call::Send(GetState::default().into());
    let rss_before = rss_kb()?;
    // Every session's agent on the one loop thread.
    let reactor = Reactor::new()?;
    let agents = (0..n)
        .map(|_| {
            let mut command = std::process::Command::new(&o.agent);
            command.args(["agent", "--mode", "rpc"]);
            reactor
                .spawn(command, ClientConfig::default())
                .map(Arc::new)
        })
        .collect::<io::Result<Vec<_>>>()?;
    // The loop thread ends with the last session's agent.
    drop(reactor);
    // Calls open on every session at once, all from this thread: each answer's tag comes on
    // `done`, and the session's next call is made as its answer is taken.
    let done = Completions::new();
    let mut pending = agents
        .iter()
        .enumerate()
        .map(|(i, a)| a.submit_to::<SessionState>(get_state(), &done, i as u64))
        .collect::<Result<Vec<_>, _>>()?;
    let take = |pending: &mut [Pending<SessionState>]| -> Res<usize> {
        let i = done.next(CALL_TIMEOUT).ok_or("no answer in time")? as usize;
        pending[i].try_take().ok_or("a tag before its answer")??;
        Ok(i)
    };
    for _ in 0..n {
        take(&mut pending)?;
    }
    let rss_idle = rss_kb()?;

    let mut sessions: Vec<Session> = (0..n).map(|_| Session::default()).collect();
    let rt = if o.tasks == "threads" {
        // A thread per session, each making its blocking calls one after the other (the
        // natural blocking shape), started before the phase and released together.
        let barrier = Arc::new(Barrier::new(n + 1));
        let calls = o.calls;
        let threads: Vec<_> = agents
            .iter()
            .map(|agent| {
                let (barrier, agent) = (barrier.clone(), agent.clone());
                std::thread::spawn(move || -> Res<Vec<Duration>> {
                    barrier.wait(); // round trips start
                    let mut times = Vec::with_capacity(calls);
                    let result = (0..calls).try_for_each(|_| {
                        let t = Instant::now();
                        agent.get_state(CALL_TIMEOUT)?;
                        times.push(t.elapsed());
                        Ok::<_, Box<dyn Error + Send + Sync>>(())
                    });
                    barrier.wait(); // round trips done
                    result.map(|()| times)
                })
            })
            .collect();
        barrier.wait();
        let meter = Meter::start();
        barrier.wait();
        let rt = meter.stop();
        for (session, thread) in sessions.iter_mut().zip(threads) {
            session.round_trips = thread.join().map_err(|_| "a session thread panicked")??;
        }
        rt
    } else {
        let meter = Meter::start();
        let mut started = vec![Instant::now(); n];
        for (i, agent) in agents.iter().enumerate() {
            started[i] = Instant::now();
            pending[i] = agent.submit_to(get_state(), &done, i as u64)?;
        }
        for _ in 0..n * o.calls {
            let i = take(&mut pending)?;
            let session = &mut sessions[i];
            session.round_trips.push(started[i].elapsed());
            if session.round_trips.len() < o.calls {
                started[i] = Instant::now();
                pending[i] = agents[i].submit_to(get_state(), &done, i as u64)?;
            }
        }
        meter.stop()
    };

    // Streamed turns: each session's blocking prompt and events on a thread of its own,
    // started before the phase and released together.
    let barrier = Arc::new(Barrier::new(n + 1));
    let threads: Vec<_> = agents
        .iter()
        .map(|agent| {
            let (barrier, agent, prompt) = (barrier.clone(), agent.clone(), o.prompt());
            std::thread::spawn(move || -> Res<(Duration, Duration)> {
                barrier.wait(); // turns start
                let result = turn(&agent, &prompt);
                barrier.wait(); // turns done
                result
            })
        })
        .collect();
    barrier.wait();
    let meter = Meter::start();
    barrier.wait();
    let turn_took = meter.stop();
    for (session, thread) in sessions.iter_mut().zip(threads) {
        let (ack, end) = thread.join().map_err(|_| "a session thread panicked")??;
        session.ack = ack;
        session.end = end;
    }
    Ok(Run {
        rss_before,
        rss_idle,
        round_trips: rt,
        turns: turn_took,
        sessions,
    })
}

/// One streamed turn on the blocking driver: (acknowledged, `agent_end`) since the prompt.
fn turn(agent: &musewire_mio::AgentProcess, prompt: &str) -> Res<(Duration, Duration)> {
    let t = Instant::now();
    agent.prompt(prompt, CALL_TIMEOUT)?;
    let ack = t.elapsed();
    loop {
        match agent.next_event(CALL_TIMEOUT) {
            Some(ClientEvent::TurnFinished) => return Ok((ack, t.elapsed())),
            Some(_) => {}
            None => return Err("no agent_end in time".into()),
        }
    }
}

fn main() -> Res<()> {
    let o = Opts::parse()?;
    let run = match o.driver.as_str() {
        "smol" => run_smol(&o)?,
        "mio" if o.tasks == "global" || o.tasks == "threads" => run_mio(&o)?,
        "mio" => return Err("--driver mio takes --tasks global|threads".into()),
        _ => return Err("--driver smol|mio".into()),
    };
    let n = run.sessions.len();
    let mut rtts: Vec<Duration> = run
        .sessions
        .iter()
        .flat_map(|s| s.round_trips.iter().copied())
        .collect();
    let mut acks: Vec<Duration> = run.sessions.iter().map(|s| s.ack).collect();
    let mut ends: Vec<Duration> = run.sessions.iter().map(|s| s.end).collect();
    rtts.sort();
    acks.sort();
    ends.sort();
    let (rt, turn) = (run.round_trips, run.turns);
    println!(
        concat!(
            "{{\"client\":\"{}\",\"sessions\":{},\"round_trips\":{},",
            "\"rt_wall_s\":{:.4},\"rt_cpu_s\":{:.4},\"rt_user_s\":{:.4},\"rt_sys_s\":{:.4},\"rt_per_s\":{:.1},",
            "\"rt_p50_ms\":{:.3},\"rt_p99_ms\":{:.3},\"rt_max_ms\":{:.3},",
            "\"turn_wall_s\":{:.4},\"turn_cpu_s\":{:.4},\"turn_user_s\":{:.4},\"turn_sys_s\":{:.4},",
            "\"ack_p50_ms\":{:.3},\"ack_max_ms\":{:.3},",
            "\"end_p50_ms\":{:.3},\"end_max_ms\":{:.3},",
            "\"rss_before_kb\":{},\"rss_idle_kb\":{},\"idle_kb_per_session\":{:.1}}}"
        ),
        match o.tasks.as_str() {
            "local" => format!("{}-local", o.driver),
            "threads" => format!("{}-threads", o.driver),
            _ => o.driver.clone(),
        },
        n,
        rtts.len(),
        rt.wall,
        rt.cpu(),
        rt.user,
        rt.sys,
        rtts.len() as f64 / rt.wall,
        quantile_ms(&rtts, 0.5),
        quantile_ms(&rtts, 0.99),
        quantile_ms(&rtts, 1.0),
        turn.wall,
        turn.cpu(),
        turn.user,
        turn.sys,
        quantile_ms(&acks, 0.5),
        quantile_ms(&acks, 1.0),
        quantile_ms(&ends, 0.5),
        quantile_ms(&ends, 1.0),
        run.rss_before,
        run.rss_idle,
        run.rss_idle.saturating_sub(run.rss_before) as f64 / n as f64,
    );
    Ok(())
}
