//! Shell commands, run with `sh -c` in a process group of their own on a thread each, their
//! output (stdout and stderr together) kept up to [`MAX_OUTPUT_BYTES`]: the head is kept, the
//! rest read and counted, and the output says how much was cut (AGENT-04). A kill takes the
//! whole group down.
//!
//! A command started with its output streamed ([`Jobs::spawn`] with `stream`) also keeps the
//! last [`MAX_UPDATE_BYTES`] of what it wrote so far, for the `tool_execution_update` frames
//! the model's `bash` tool sends while it runs (AGENT-06): the reading thread appends to that
//! tail and wakes the loop once when it has news; the loop takes the tail
//! ([`Jobs::take_updates`]) at most once per [`UPDATE_INTERVAL`] per command, and until it
//! does, later output only replaces the tail (no wake, no queue): a command that writes
//! without end costs one tail and ten updates a second.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rustix::process::{kill_process_group, Pid, Signal};

/// Most bytes of a tool's output the agent keeps: of a shell command's output (the head; the
/// rest is read and counted, and a note says how many bytes were cut) and of a file the
/// `read` tool reads (AGENT-04). 2 MiB.
pub const MAX_OUTPUT_BYTES: usize = 2 * 1024 * 1024;

/// Most bytes of a shell command's output the agent keeps when tool results are spilled
/// (`--max-inline-bytes`): the whole output then goes to the spill store, not to the model, so
/// more of it is kept (still bounded: AGENT-04). 64 MiB.
pub const MAX_SPILLED_OUTPUT_BYTES: usize = 64 * 1024 * 1024;

/// Most bytes of a running command's output one update carries: the tail of what it wrote so
/// far, as omp's bash tool sends (its 50 KiB cap) (AGENT-06).
pub const MAX_UPDATE_BYTES: usize = 50 * 1024;

/// The least time between two updates of one running command: pi's bash tool's throttle
/// (`BASH_UPDATE_THROTTLE_MS`, 100 ms). The first output goes at once (AGENT-06).
pub const UPDATE_INTERVAL: Duration = Duration::from_millis(100);

/// Wakes the loop when a job has finished or has new output (a mio waker, or nothing in tests).
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

/// What a running command wrote so far, for its updates (AGENT-06): the tail of its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputTail {
    /// The last [`MAX_UPDATE_BYTES`] (at most) of the output, cut on character boundaries: a
    /// character split by the window's start is left out, one not yet whole at its end waits
    /// for the next update.
    pub text: String,
    /// Bytes written before `text` and not in it (0 when `text` is the whole output so far).
    pub cut_bytes: u64,
}

/// The reading thread's side of a streamed command: its output's tail and whether the loop
/// has seen it.
#[derive(Debug, Default)]
struct Tail {
    /// At most twice [`MAX_UPDATE_BYTES`]: trimmed to the last [`MAX_UPDATE_BYTES`] when it
    /// grows past that, so appending is not a copy per read.
    bytes: Vec<u8>,
    /// Bytes written in all.
    total: u64,
    /// Output arrived since the loop last took the tail.
    fresh: bool,
}

impl Tail {
    /// Appends what was read; true when the tail was not fresh before (the loop is to be
    /// woken).
    fn push(&mut self, chunk: &[u8]) -> bool {
        self.total += chunk.len() as u64;
        if chunk.len() >= MAX_UPDATE_BYTES {
            self.bytes.clear();
            self.bytes
                .extend_from_slice(&chunk[chunk.len() - MAX_UPDATE_BYTES..]);
        } else {
            self.bytes.extend_from_slice(chunk);
            if self.bytes.len() > 2 * MAX_UPDATE_BYTES {
                let excess = self.bytes.len() - MAX_UPDATE_BYTES;
                self.bytes.drain(..excess);
            }
        }
        !std::mem::replace(&mut self.fresh, true)
    }

    /// The tail when there is news since the last take.
    fn take(&mut self) -> Option<OutputTail> {
        if !std::mem::take(&mut self.fresh) {
            return None;
        }
        let mut window = &self.bytes[self.bytes.len().saturating_sub(MAX_UPDATE_BYTES)..];
        let before = self.total - self.bytes.len() as u64;
        let mut cut_bytes = before + (self.bytes.len() - window.len()) as u64;
        if cut_bytes > 0 {
            // The window's start may split a character: its continuation bytes go.
            let split = window
                .iter()
                .take(3)
                .take_while(|b| *b & 0xC0 == 0x80)
                .count();
            window = &window[split..];
            cut_bytes += split as u64;
        }
        let whole = char_boundary(window);
        Some(OutputTail {
            text: String::from_utf8_lossy(&window[..whole]).into_owned(),
            cut_bytes,
        })
    }
}

/// A streamed command's tail, shared by its reading thread and the loop.
type SharedTail = Arc<Mutex<Tail>>;

fn lock(tail: &SharedTail) -> std::sync::MutexGuard<'_, Tail> {
    // A thread that panicked holding it left a tail that is still a tail.
    tail.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Running {
    pgid: u32,
    cancelled: Arc<AtomicBool>,
    /// The output's tail, for a streamed command.
    tail: Option<SharedTail>,
    /// When the loop last took the tail.
    last_update: Option<Instant>,
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
    /// error as its output. With `stream`, the tail of its output is kept for
    /// [`Jobs::take_updates`] while it runs (AGENT-06).
    pub fn spawn(&mut self, command: &str, stream: bool) -> JobId {
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
        let tail = stream.then(SharedTail::default);
        match sh.spawn() {
            Ok(mut child) => {
                self.running.insert(
                    job,
                    Running {
                        pgid: child.id(),
                        cancelled: cancelled.clone(),
                        tail: tail.clone(),
                        last_update: None,
                    },
                );
                let mut stdout = child.stdout.take().expect("piped");
                let spawned = std::thread::Builder::new()
                    .name(format!("musewire-bash-{}", job.0))
                    .spawn(move || {
                        let on_chunk = |chunk: &[u8]| {
                            // One wake per news the loop has not taken (AGENT-06).
                            if tail.as_ref().is_some_and(|tail| lock(tail).push(chunk)) {
                                notify();
                            }
                        };
                        let (output, cut_bytes, read) = read_capped_to(&mut stdout, cap, on_chunk);
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

    /// The streamed commands' output since their last update, for those whose last update
    /// is at least [`UPDATE_INTERVAL`] old at `now` (AGENT-06). A command's output that is
    /// not due yet stays for [`Jobs::next_update`]; one that has finished is in its outcome.
    pub fn take_updates(&mut self, now: Instant) -> Vec<(JobId, OutputTail)> {
        let mut updates = Vec::new();
        for (job, running) in &mut self.running {
            let Some(tail) = &running.tail else { continue };
            let due = running
                .last_update
                .is_none_or(|last| now.saturating_duration_since(last) >= UPDATE_INTERVAL);
            if !due {
                continue;
            }
            if let Some(output) = lock(tail).take() {
                running.last_update = Some(now);
                updates.push((*job, output));
            }
        }
        updates
    }

    /// When a streamed command's news, held back by [`UPDATE_INTERVAL`], is due.
    pub fn next_update(&self) -> Option<Instant> {
        (self.running.values())
            .filter_map(|running| {
                let last = running.last_update?;
                let fresh = lock(running.tail.as_ref()?).fresh;
                fresh.then(|| last + UPDATE_INTERVAL)
            })
            .min()
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
    read_capped_to(from, MAX_OUTPUT_BYTES, |_| {})
}

/// [`read_capped`] keeping at most `cap` bytes, each chunk read also given to `on_chunk`.
pub(crate) fn read_capped_to(
    from: &mut impl Read,
    cap: usize,
    mut on_chunk: impl FnMut(&[u8]),
) -> (String, u64, std::io::Result<()>) {
    let mut kept = Vec::new();
    let mut total: u64 = 0;
    let mut buf = vec![0u8; 64 * 1024];
    let read = loop {
        match from.read(&mut buf) {
            Ok(0) => break Ok(()),
            Ok(n) => {
                on_chunk(&buf[..n]);
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

    #[test]
    fn agent_06_the_tail_is_the_last_bytes_on_character_boundaries() {
        let mut tail = Tail::default();
        assert_eq!(tail.take(), None, "no output, no update");
        assert!(tail.push(b"one\n"), "the first news wakes the loop");
        assert!(
            !tail.push(b"two\n"),
            "news the loop has not taken wakes nothing more"
        );
        let update = tail.take().unwrap();
        assert_eq!((update.text.as_str(), update.cut_bytes), ("one\ntwo\n", 0));
        assert_eq!(tail.take(), None, "taken: nothing new");
        // Past the cap only the tail is carried; a character split by the window's start is
        // left out, one not yet whole at its end waits.
        let mut tail = Tail::default();
        let mut bytes = "é".repeat(MAX_UPDATE_BYTES).into_bytes();
        bytes.push(0xC3);
        for chunk in bytes.chunks(7000) {
            tail.push(chunk);
            assert!(tail.bytes.len() <= 2 * MAX_UPDATE_BYTES);
        }
        let update = tail.take().unwrap();
        assert!(update.text.len() < MAX_UPDATE_BYTES);
        assert!(
            update.text.chars().all(|c| c == 'é'),
            "no U+FFFD at either end"
        );
        let total = bytes.len() as u64;
        assert_eq!(update.cut_bytes + update.text.len() as u64 + 1, total);
        // One read over the cap keeps its end.
        let mut tail = Tail::default();
        tail.push(&[b'x'; 3 * MAX_UPDATE_BYTES]);
        let update = tail.take().unwrap();
        assert_eq!(update.text.len(), MAX_UPDATE_BYTES);
        assert_eq!(update.cut_bytes, 2 * MAX_UPDATE_BYTES as u64);
    }

    #[test]
    fn agent_06_a_streamed_command_shows_its_output_while_it_runs() {
        let (woke, wakes) = mpsc::channel();
        let mut jobs = Jobs::new(Arc::new(move || {
            let _ = woke.send(());
        }));
        let job = jobs.spawn("echo one; sleep 1; echo two", true);
        let started = Instant::now();
        let first = loop {
            wakes.recv_timeout(Duration::from_secs(10)).expect("a wake");
            let now = Instant::now();
            let mut updates = jobs.take_updates(now);
            if let Some((id, output)) = updates.pop() {
                assert_eq!(id, job);
                break (now, output);
            }
        };
        assert_eq!(first.1.text, "one\n");
        assert!(
            started.elapsed() < Duration::from_millis(900),
            "before it ends"
        );
        assert_eq!(jobs.try_finished(), None, "still running");
        // Within the interval the next news waits for the timer.
        let mut seen = first.1.text.clone();
        loop {
            if let Some((id, outcome)) = jobs.try_finished() {
                assert_eq!(id, job);
                assert_eq!(outcome.output, "one\ntwo\n", "the result is whole");
                break;
            }
            let now = Instant::now();
            for (_, output) in jobs.take_updates(now) {
                seen = output.text;
            }
            if let Some(due) = jobs.next_update() {
                assert!(due >= first.0 + UPDATE_INTERVAL);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(seen.starts_with("one\n"));
        assert!(
            jobs.take_updates(Instant::now()).is_empty(),
            "a finished job has no update"
        );
        // A command started without streaming keeps no tail and sends no update.
        let quiet = jobs.spawn("echo quiet", false);
        let (id, _) = jobs.wait_finished(Duration::from_secs(10)).unwrap();
        assert_eq!(id, quiet);
        assert!(jobs.take_updates(Instant::now()).is_empty());
    }
}
