//! `musewire-conformance`: replay transcripts, bless them, print the rule coverage report,
//! capture sessions with the real agent. See the crate docs of `musewire_conformance`.

use std::path::PathBuf;
use std::process::ExitCode;

use musewire_conformance::{capture, replay, report, transcript, transcript_files};

const USAGE: &str = "usage:
  musewire-conformance replay [FILES...]     replay transcripts (default: all); exit 1 on a mismatch
  musewire-conformance bless FILES...        (alias: record) rewrite expect/returns from the actual actions
  musewire-conformance report                one line per rule of RULES.md, then `covered N of M rules`
  musewire-conformance capture-omp SCENARIO [OUT]
                                             record a session with the real omp (handshake, history);
                                             OUT defaults to conformance/transcripts/omp-SCENARIO.jsonl";

fn files_or_all(args: &[String]) -> Result<Vec<PathBuf>, String> {
    if args.is_empty() {
        transcript_files(&musewire_conformance::transcripts_dir())
    } else {
        Ok(args.iter().map(PathBuf::from).collect())
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let result = match command.as_str() {
        "replay" => replay_all(rest),
        "bless" | "record" => bless_all(rest),
        "report" => report::build(&musewire_conformance::workspace_root()).map(|r| {
            print!("{}", r.render());
            true
        }),
        "capture-omp" => match rest {
            [scenario] | [scenario, _] => {
                let out = rest.get(1).map(PathBuf::from).unwrap_or_else(|| {
                    musewire_conformance::transcripts_dir().join(format!("omp-{scenario}.jsonl"))
                });
                capture::capture_omp(scenario, &out).map(|()| {
                    println!("wrote {}", out.display());
                    true
                })
            }
            _ => Err(USAGE.into()),
        },
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(true)
        }
        _ => Err(USAGE.into()),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

fn replay_all(args: &[String]) -> Result<bool, String> {
    let files = files_or_all(args)?;
    replay::replay_files(&files, &mut std::io::stdout()).map_err(|e| e.to_string())
}

fn bless_all(args: &[String]) -> Result<bool, String> {
    if args.is_empty() {
        return Err("bless needs the files to rewrite".into());
    }
    for path in args.iter().map(PathBuf::from) {
        let text = replay::bless(&transcript::load(&path)?)?;
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("blessed {}", path.display());
    }
    Ok(true)
}
