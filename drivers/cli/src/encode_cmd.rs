//! `musewire encode`: logical frames (JSONL) in, the physical stream an agent writes out.

use std::io::{self, BufRead, Write};
use std::process::ExitCode;

use musewire_core::frame::{FrameEncoder, ProtocolVersion};
use serde_json::Value;

/// Arguments of `musewire encode`.
#[derive(clap::Args)]
pub struct EncodeArgs {
    /// Protocol version to write: 1 (shrink frames over the limit) or 2 (chunk them).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    protocol: u8,
}

/// Runs `musewire encode`.
pub fn run(args: EncodeArgs) -> ExitCode {
    let protocol = if args.protocol == 2 {
        ProtocolVersion::V2
    } else {
        ProtocolVersion::V1
    };
    match encode(protocol, &mut io::stdin().lock(), &mut io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("musewire encode: {e}");
            ExitCode::FAILURE
        }
    }
}

fn encode(
    protocol: ProtocolVersion,
    input: &mut impl BufRead,
    output: &mut impl Write,
) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(1 << 16, output);
    let mut encoder = FrameEncoder::new();
    encoder.set_protocol(protocol);
    let mut line = Vec::new();
    let mut physical = Vec::new();
    let mut number = 0u64;
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        number += 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let frame: Value = serde_json::from_slice(&line).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("line {number}: not JSON: {e}"),
            )
        })?;
        let mut encoded = encoder.encode(&frame);
        loop {
            physical.clear();
            if !encoded.write_next(&mut physical) {
                break;
            }
            out.write_all(&physical)?;
        }
    }
    out.flush()
}
