//! Shell commands, run with `sh -c` in a process group of their own on a thread each, their
//! output (stdout and stderr together) kept whole. A kill takes the whole group down.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use rustix::process::{kill_process_group, Pid, Signal};

/// Wakes the loop when a job has finished (a mio waker, or nothing in tests).
pub type Notify = Arc<dyn Fn() + Send + Sync>;

/// A running shell command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JobId(pub u64);

/// How a shell command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashOutcome {
    /// Its output, stdout and stderr interleaved as written, whole.
    pub output: String,
    /// Its exit code; `None` when it was killed or could not start.
    pub exit_code: Option<i32>,
    /// Whether it was aborted.
    pub cancelled: bool,
}

struct Running {
    pgid: u32,
    cancelled: Arc<AtomicBool>,
}

/// The shell commands running now, and the channel their outcomes arrive on.
pub struct Jobs {
    next: u64,
    running: BTreeMap<JobId, Running>,
    tx: mpsc::Sender<(JobId, BashOutcome)>,
    rx: mpsc::Receiver<(JobId, BashOutcome)>,
    notify: Notify,
}

impl std::fmt::Debug for Jobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jobs")
            .field("running", &self.running.len())
            .finish()
    }
}

impl Jobs {
    /// No jobs; `notify` is called from a job's thread when it has finished.
    pub fn new(notify: Notify) -> Self {
        let (tx, rx) = mpsc::channel();
        Jobs {
            next: 0,
            running: BTreeMap::new(),
            tx,
            rx,
            notify,
        }
    }

    /// Starts `sh -c command`. A command that cannot start finishes at once, with the
    /// error as its output.
    pub fn spawn(&mut self, command: &str) -> JobId {
        self.next += 1;
        let job = JobId(self.next);
        let mut sh = Command::new("sh");
        sh.arg("-c")
            .arg(format!("exec 2>&1\n{command}"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0);
        let cancelled = Arc::new(AtomicBool::new(false));
        let (tx, notify) = (self.tx.clone(), self.notify.clone());
        match sh.spawn() {
            Ok(mut child) => {
                self.running.insert(
                    job,
                    Running {
                        pgid: child.id(),
                        cancelled: cancelled.clone(),
                    },
                );
                let mut stdout = child.stdout.take().expect("piped");
                let spawned = std::thread::Builder::new()
                    .name(format!("musewire-bash-{}", job.0))
                    .spawn(move || {
                        let mut bytes = Vec::new();
                        let read = stdout.read_to_end(&mut bytes);
                        let status = child.wait();
                        let cancelled = cancelled.load(Ordering::SeqCst);
                        let mut output = String::from_utf8_lossy(&bytes).into_owned();
                        if let Err(e) = read {
                            output.push_str(&format!("\n(reading the output failed: {e})"));
                        }
                        let exit_code = match (&status, cancelled) {
                            (Ok(status), false) => status.code(),
                            _ => None,
                        };
                        let _ = tx.send((
                            job,
                            BashOutcome {
                                output,
                                exit_code,
                                cancelled,
                            },
                        ));
                        notify();
                    });
                if let Err(e) = spawned {
                    self.finish_now(job, format!("cannot start a thread: {e}"));
                }
            }
            Err(e) => self.finish_now(job, format!("cannot run sh: {e}")),
        }
        job
    }

    fn finish_now(&mut self, job: JobId, output: String) {
        self.running.remove(&job);
        let outcome = BashOutcome {
            output,
            exit_code: None,
            cancelled: false,
        };
        let _ = self.tx.send((job, outcome));
        (self.notify)();
    }

    /// Aborts a job: its process group is killed (SIGKILL), and it finishes as cancelled.
    pub fn kill(&mut self, job: JobId) {
        if let Some(running) = self.running.get(&job) {
            running.cancelled.store(true, Ordering::SeqCst);
            // AGENT-02: the whole group, so the shell's children end with it. A group
            // already gone (ESRCH) is what we want.
            if let Some(pgid) = i32::try_from(running.pgid).ok().and_then(Pid::from_raw) {
                let _ = kill_process_group(pgid, Signal::KILL);
            }
        }
    }

    /// Aborts every job.
    pub fn kill_all(&mut self) {
        let jobs: Vec<JobId> = self.running.keys().copied().collect();
        for job in jobs {
            self.kill(job);
        }
    }

    /// Jobs not yet finished (or finished and not yet taken).
    pub fn running(&self) -> usize {
        self.running.len()
    }

    /// A finished job, if one is waiting.
    pub fn try_finished(&mut self) -> Option<(JobId, BashOutcome)> {
        let done = self.rx.try_recv().ok()?;
        self.running.remove(&done.0);
        Some(done)
    }

    /// Waits up to `timeout` for a job to finish.
    pub fn wait_finished(&mut self, timeout: Duration) -> Option<(JobId, BashOutcome)> {
        let done = self.rx.recv_timeout(timeout).ok()?;
        self.running.remove(&done.0);
        Some(done)
    }
}
