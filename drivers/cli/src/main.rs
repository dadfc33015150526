//! `musewire`: command-line tools for coding-agent RPC streams.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod acp_cmd;
mod agent_cmd;
mod agent_command;
mod blocks_cmd;
mod decode_cmd;
mod encode_cmd;
mod fetch_output_cmd;
mod messages_cmd;
mod output;
mod pi_extension;
mod prompt_cmd;
mod replay_cmd;
mod session;
mod tap_cmd;
mod terminal_login;
mod visible;

/// Tools for driving, inspecting and testing coding agents that speak the RPC protocol.
#[derive(Parser)]
#[command(name = "musewire", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Read an agent's stdout stream on stdin and print each logical frame as one line of
    /// compact JSON (protocol errors in place, as `{"musewire_error":{…}}`).
    Decode(decode_cmd::DecodeArgs),
    /// Read logical frames (JSONL, any size) on stdin and write the physical stream an
    /// agent would write.
    Encode(encode_cmd::EncodeArgs),
    /// Read a tool result (`{"content":[…],"isError":…}`) on stdin and print the text the
    /// model would read.
    Blocks(blocks_cmd::BlocksArgs),
    /// Start an agent, send one prompt, and stream the turn until it ends.
    Prompt(prompt_cmd::PromptArgs),
    /// Read an agent's whole history (paged, with its fallback) and write it as JSONL.
    Messages(messages_cmd::MessagesArgs),
    /// Fetch one stored output (a spilled tool result) whole into a file, page by page
    /// through `read_output`; `--session PATH` switches a restarted agent to its session
    /// first.
    FetchOutput(fetch_output_cmd::FetchOutputArgs),
    /// Replay transcripts through the core and report mismatches (exit 1 on any).
    Replay(replay_cmd::ReplayArgs),
    /// Stand between a host and an agent: forward every byte, record the session as a
    /// transcript, report rule violations on stderr.
    Tap(tap_cmd::TapArgs),
    /// Run the bundled reference agent on stdio (`--mode rpc`), with a scripted model.
    Agent(agent_cmd::AgentArgs),
    /// Serve the Agent Client Protocol (editors such as Zed) on stdio, one agent per
    /// session: any `--mode rpc` agent after `--`, the bundled one by default.
    Acp(acp_cmd::AcpArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Decode(args) => decode_cmd::run(args),
        Command::Encode(args) => encode_cmd::run(args),
        Command::Blocks(args) => blocks_cmd::run(args),
        Command::Prompt(args) => prompt_cmd::run(args),
        Command::Agent(args) => agent_cmd::run(args),
        Command::Acp(args) => acp_cmd::run(args),
        Command::Messages(args) => messages_cmd::run(args),
        Command::FetchOutput(args) => fetch_output_cmd::run(args),
        Command::Replay(args) => replay_cmd::run(args),
        Command::Tap(args) => tap_cmd::run(args),
    }
}
