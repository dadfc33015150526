//! Shell commands, run with `sh -c` in a process group of their own on a thread each, their
//! output (stdout and stderr together) kept up to [`MAX_OUTPUT_BYTES`]: the head is kept, the
//! rest read and counted, and the output says how much was cut (AGENT-04). A kill takes the
//! whole group down.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use rustix::process::{kill_process_group, Pid, Signal};

/// Most bytes of a tool's output the agent keeps: of a shell command's output (the head; the
/// rest is read and counted, and a note says how many bytes were cut) and of a file the
/// `read` tool reads (AGENT-04). 2 MiB.
pub const MAX_OUTPUT_BYTES: usize = 2 * 1024 * 1024;

/// Most bytes of a shell command's output the agent keeps when tool results are spilled
/// (`--max-inline-bytes`): the whole output then goes to the spill store, not to the model, so
/// more of it is kept (still bounded: AGENT-04). 64 MiB.
pub const MAX_SPILLED_OUTPUT_BYTES: usize = 64 * 1024 * 1024;

/// Wakes the loop when a job has finished (a mio waker, or nothing in tests).
pub type Notify = Arc<dyn Fn() + Send + Sync>;

/// A running shell command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JobId(pub u64);

/// How a shell command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashOutcome {
    /// Its output, stdout and stderr interleaved as written: at most [`MAX_OUTPUT_BYTES`] of
    /// it, then, when more was written, a note saying how many bytes were cut.
    pub output: String,
    /// Bytes written past [`MAX_OUTPUT_BYTES`] and not kept.
    pub cut_bytes: u64,
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
    /// The most output bytes kept per command.
    max_output_bytes: usize,
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
            max_output_bytes: MAX_OUTPUT_BYTES,
        }
    }

    /// Keeps up to `max` bytes of each command's output from now on (default
    /// [`MAX_OUTPUT_BYTES`]; [`MAX_SPILLED_OUTPUT_BYTES`] when results are spilled).
    pub fn set_max_output_bytes(&mut self, max: usize) {
        self.max_output_bytes = max;
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
        let cap = self.max_output_bytes;
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
                        let (output, cut_bytes, read) = read_capped_to(&mut stdout, cap);
                        let status = child.wait();
                        let cancelled = cancelled.load(Ordering::SeqCst);
                        let mut output = output;
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
                                cut_bytes,
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
            cut_bytes: 0,
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

/// Reads `from` to its end, keeping at most [`MAX_OUTPUT_BYTES`] (cut on a character
/// boundary) and counting the rest, so a command that writes without end costs bounded memory
/// (AGENT-04). Returns the text (with the note on what was cut), the bytes cut, and how the
/// reading ended.
#[cfg(test)]
pub(crate) fn read_capped(from: &mut impl Read) -> (String, u64, std::io::Result<()>) {
    read_capped_to(from, MAX_OUTPUT_BYTES)
}

/// [`read_capped`] keeping at most `cap` bytes.
pub(crate) fn read_capped_to(
    from: &mut impl Read,
    cap: usize,
) -> (String, u64, std::io::Result<()>) {
    let mut kept = Vec::new();
    let mut total: u64 = 0;
    let mut buf = vec![0u8; 64 * 1024];
    let read = loop {
        match from.read(&mut buf) {
            Ok(0) => break Ok(()),
            Ok(n) => {
                total += n as u64;
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    if total <= kept.len() as u64 {
        return (String::from_utf8_lossy(&kept).into_owned(), 0, read);
    }
    let (text, cut) = cut_text_to(kept, Some(total), cap);
    (text, cut.unwrap_or_default(), read)
}

/// The text of `kept`, the head of a longer output of `total` bytes (`None`: not known, the
/// rest not read): the head stops before a character the cap split, and a note says how many
/// bytes were cut (AGENT-04). Returns the text and the bytes cut, when known.
pub(crate) fn cut_text(kept: Vec<u8>, total: Option<u64>) -> (String, Option<u64>) {
    cut_text_to(kept, total, MAX_OUTPUT_BYTES)
}

/// [`cut_text`] for a cap of `cap` bytes.
fn cut_text_to(mut kept: Vec<u8>, total: Option<u64>, cap: usize) -> (String, Option<u64>) {
    kept.truncate(char_boundary(&kept));
    let cut = total.map(|total| total.saturating_sub(kept.len() as u64));
    let mut text = String::from_utf8_lossy(&kept).into_owned();
    text.push_str(&truncation_note_to(cut, cap));
    (text, cut)
}

/// The note a cut output or file ends with (AGENT-04).
#[cfg(test)]
pub(crate) fn truncation_note(cut: Option<u64>) -> String {
    truncation_note_to(cut, MAX_OUTPUT_BYTES)
}

/// [`truncation_note`] for a cap of `cap` bytes.
fn truncation_note_to(cut: Option<u64>, cap: usize) -> String {
    match cut {
        Some(cut) => {
            format!("\n\n[output truncated: {cut} more bytes not kept, past the {cap}-byte cap]")
        }
        None => format!("\n\n[output truncated: not read past the {cap}-byte cap]"),
    }
}

/// The length of `bytes` without a UTF-8 sequence cut short at its end.
fn char_boundary(bytes: &[u8]) -> usize {
    let len = bytes.len();
    for back in 1..=len.min(3) {
        let b = bytes[len - back];
        if b & 0xC0 != 0x80 {
            // A lead byte (or ASCII): keep it only when its sequence is complete.
            let need = match b {
                0x00..=0x7F => 1,
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                _ => 4,
            };
            return if need > back { len - back } else { len };
        }
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_04_output_past_the_cap_is_counted_not_kept() {
        let mut input = std::io::repeat(b'y').take(MAX_OUTPUT_BYTES as u64 + 12345);
        let (text, cut, read) = read_capped(&mut input);
        assert!(read.is_ok());
        assert_eq!(cut, 12345);
        assert!(text.starts_with("yyy"));
        assert!(text.ends_with(&truncation_note(Some(12345))));
        assert_eq!(
            text.len(),
            MAX_OUTPUT_BYTES + truncation_note(Some(12345)).len()
        );
        let (whole, cut, _) = read_capped(&mut &b"small"[..]);
        assert_eq!((whole.as_str(), cut), ("small", 0));
    }

    #[test]
    fn agent_04_the_cut_never_splits_a_character() {
        // "é" is two bytes: a cap landing between them keeps neither.
        let mut bytes = vec![b'a'; MAX_OUTPUT_BYTES - 1];
        bytes.extend("éé".as_bytes());
        let total = bytes.len() as u64;
        bytes.truncate(MAX_OUTPUT_BYTES);
        let (text, cut) = cut_text(bytes, Some(total));
        assert_eq!(
            cut,
            Some(4),
            "both \"é\": the one the cap split and the one after"
        );
        assert!(text.starts_with(&"a".repeat(MAX_OUTPUT_BYTES - 1)));
        assert!(!text.contains('\u{FFFD}'));
        for (bytes, len) in [
            (&b"ab"[..], 2),
            ("aé".as_bytes(), 3),
            (&"aé".as_bytes()[..2], 1),
            (&"a😀".as_bytes()[..4], 1),
            ("a😀".as_bytes(), 5),
        ] {
            assert_eq!(char_boundary(bytes), len, "{bytes:?}");
        }
    }
}
