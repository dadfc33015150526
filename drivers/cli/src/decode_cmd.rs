//! `musewire decode`: an agent's stdout stream in, one compact JSON line per logical frame out.

use std::io::{self, Read, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;

use musewire_core::frame::{DecodeEvent, Frame, FrameError, StreamDecoder};
use musewire_wire::AgentFrame;
use serde_json::{json, Value};

/// Arguments of `musewire decode`.
#[derive(clap::Args)]
pub struct DecodeArgs {
    /// Print only one JSON line at the end: `{"frames":N,"bytes":N,"errors":N}`.
    #[arg(long)]
    summary: bool,
    /// With --summary, also parse every logical frame fully (a frame that does not parse
    /// counts as an error).
    #[arg(long, requires = "summary")]
    typed: bool,
}

const READ_SIZE: usize = 1 << 20;

/// The in-place record of a protocol error: the rule ID and the reference's message.
pub fn error_record(error: &FrameError) -> Value {
    let mut record = json!({"rule": error.rule(), "message": error.to_string()});
    match error {
        FrameError::LineTooLong { limit } => record["limit"] = json!(limit),
        FrameError::NotJson { detail, prefix } => {
            record["detail"] = json!(detail);
            record["prefix"] = json!(prefix);
        }
        FrameError::ReassembledNotJson { detail } => record["detail"] = json!(detail),
        _ => {}
    }
    json!({ "musewire_error": record })
}

struct Output {
    summary: bool,
    /// With `--typed`: frames go to a parser on another thread, so framing and parsing use
    /// both cores; what waits for it is bounded in bytes ([`QUEUE_BYTES`]).
    typed: Option<TypedParser>,
    fatal: bool,
    line: Vec<u8>,
}

struct TypedParser {
    batch: Vec<Frame>,
    batch_bytes: usize,
    batches: mpsc::Sender<(Vec<Frame>, usize)>,
    /// The payload bytes of the batches sent and not yet parsed.
    queued: Arc<AtomicUsize>,
    failures: thread::JoinHandle<u64>,
    /// Frames this thread parsed itself (see [`TypedParser::flush`]) that did not parse.
    local_failures: u64,
}

/// Parses every frame of `batch` into the typed model; returns how many did not parse.
fn typed_failures(batch: Vec<Frame>) -> u64 {
    batch
        .iter()
        .filter(|frame| frame.parse::<AgentFrame>().is_err())
        .count() as u64
}

/// Frames go over in batches of about this many bytes (or one larger frame).
const BATCH_BYTES: usize = 256 << 10;

/// At most this many payload bytes wait for the parser thread (or one batch, when larger):
/// past it the framing thread parses the batch itself (see [`TypedParser::flush`]).
const QUEUE_BYTES: usize = 4 << 20;

impl TypedParser {
    fn start() -> Self {
        let (batches, inbox) = mpsc::channel::<(Vec<Frame>, usize)>();
        let queued = Arc::new(AtomicUsize::new(0));
        let parsed = Arc::clone(&queued);
        let failures = thread::spawn(move || {
            inbox
                .iter()
                .map(|(batch, bytes)| {
                    let failures = typed_failures(batch);
                    parsed.fetch_sub(bytes, Ordering::AcqRel);
                    failures
                })
                .sum()
        });
        TypedParser {
            batch: Vec::new(),
            batch_bytes: 0,
            batches,
            queued,
            failures,
            local_failures: 0,
        }
    }

    fn push(&mut self, frame: Frame) {
        self.batch_bytes += frame.payload().len();
        self.batch.push(frame);
        if self.batch_bytes >= BATCH_BYTES {
            self.flush();
        }
    }

    fn flush(&mut self) {
        let bytes = std::mem::take(&mut self.batch_bytes);
        let batch = std::mem::take(&mut self.batch);
        // Parsing costs about twice what framing does: when the parser thread is behind (more
        // than QUEUE_BYTES wait for it), this thread parses the batch itself rather than
        // wait, so both cores stay busy. (The parser thread only ends when the channel
        // closes.)
        let queued = self.queued.load(Ordering::Acquire);
        if queued != 0 && queued + bytes > QUEUE_BYTES {
            self.local_failures += typed_failures(batch);
            return;
        }
        self.queued.fetch_add(bytes, Ordering::AcqRel);
        if let Err(mpsc::SendError((batch, _))) = self.batches.send((batch, bytes)) {
            self.local_failures += typed_failures(batch);
        }
    }

    /// Frames that did not parse.
    fn finish(mut self) -> u64 {
        self.flush();
        drop(self.batches);
        self.failures.join().map_or(u64::MAX, |failures| {
            failures.saturating_add(self.local_failures)
        })
    }
}

impl Output {
    fn event(&mut self, event: DecodeEvent, out: &mut impl Write) -> io::Result<()> {
        match event {
            DecodeEvent::Frame(frame) => {
                if let Some(typed) = &mut self.typed {
                    typed.push(frame);
                } else if !self.summary {
                    self.line.clear();
                    frame.write_compact(&mut self.line);
                    self.line.push(b'\n');
                    out.write_all(&self.line)?;
                }
            }
            DecodeEvent::Error(error) => {
                self.fatal |= error.is_fatal();
                if !self.summary {
                    serde_json::to_writer(&mut *out, &error_record(&error))?;
                    out.write_all(b"\n")?;
                }
            }
        }
        Ok(())
    }
}

/// Runs `musewire decode`.
pub fn run(args: DecodeArgs) -> ExitCode {
    // Reading from a pipe: ask for a 1 MiB pipe buffer (the system's usual ceiling), so the
    // writer and this reader trade fewer, larger reads. Nothing changes when stdin is not a
    // pipe or the size is refused.
    let _ = rustix::pipe::fcntl_setpipe_size(std::io::stdin(), READ_SIZE);
    match decode(args, io::stdin(), &mut io::stdout().lock()) {
        Ok(fatal) => {
            if fatal {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("musewire decode: {e}");
            ExitCode::from(2)
        }
    }
}

/// Decodes `input` to `output`; returns whether a fatal error ended the stream.
fn decode(
    args: DecodeArgs,
    mut input: impl Read + Send + 'static,
    output: &mut impl Write,
) -> io::Result<bool> {
    let mut out = io::BufWriter::with_capacity(1 << 16, output);
    let mut decoder = StreamDecoder::new();
    let mut state = Output {
        summary: args.summary,
        typed: args.typed.then(TypedParser::start),
        fatal: false,
        line: Vec::new(),
    };
    // A reader thread keeps the pipe drained while this one decodes, so reading and
    // decoding overlap; buffers go back and forth, so memory stays at a few of them.
    let (full_tx, full_rx) = mpsc::sync_channel::<io::Result<(Vec<u8>, usize)>>(2);
    let (empty_tx, empty_rx) = mpsc::channel::<Vec<u8>>();
    let reader = thread::spawn(move || loop {
        let mut buf = empty_rx.try_recv().unwrap_or_else(|_| vec![0u8; READ_SIZE]);
        let read = match input.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => Ok((buf, n)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => Err(e),
        };
        let failed = read.is_err();
        if full_tx.send(read).is_err() || failed {
            return;
        }
    });
    for read in &full_rx {
        let (buf, n) = read?;
        decoder.handle_bytes(&buf[..n]);
        let _ = empty_tx.send(buf);
        while let Some(event) = decoder.poll_event() {
            state.event(event, &mut out)?;
        }
        if decoder.is_failed() && !args.summary {
            break;
        }
    }
    // After a fatal error the reader may still wait on stdin: it is left behind (the process
    // is about to exit), never waited for.
    if !decoder.is_failed() || args.summary {
        let _ = reader.join();
    }
    decoder.handle_eof();
    while let Some(event) = decoder.poll_event() {
        state.event(event, &mut out)?;
    }
    let typed_errors = state.typed.take().map_or(0, TypedParser::finish);
    if args.summary {
        let stats = decoder.stats();
        let summary = json!({
            "frames": stats.frames,
            "bytes": stats.bytes,
            "errors": stats.errors + typed_errors,
        });
        serde_json::to_writer(&mut out, &summary)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(state.fatal)
}
