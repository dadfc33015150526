//! `musewire acp … -- AGENT… --musewire-terminal-login`: the `terminal` sign-in method an
//! editor with `auth.terminal` runs in its terminal (ACP-40). The editor appends the method's
//! argument to the configured invocation, so it arrives among the agent's arguments; the
//! agent's own interactive mode then runs in the terminal instead of the bridge (omp's and
//! pi's `/login` sign in there), and `musewire acp` exits with its status.

use std::process::ExitCode;

/// Runs the agent command `line` on this terminal (stdin, stdout and stderr inherited) and
/// exits as it did: 0 for a sign-in that ended well, 1 for anything else (ACP: any other end
/// is a failure).
pub fn run(line: &[String]) -> ExitCode {
    let Some((program, args)) = line.split_first() else {
        eprintln!("musewire acp: the terminal sign-in needs the agent command after --");
        return ExitCode::FAILURE;
    };
    match std::process::Command::new(program).args(args).status() {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!(
                "musewire acp: cannot start {}: {e}",
                crate::visible::visible(program)
            );
            ExitCode::FAILURE
        }
    }
}
