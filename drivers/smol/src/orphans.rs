//! ACP-22 (ours): what a dead agent leaves running is ended. An agent killed with SIGKILL
//! (or one that exits on its own) cannot end the shells it ran in process groups of their
//! own, and the bridge does not know those groups. On Linux, [`serve_acp_stdio`] makes the
//! bridge a child subreaper (`PR_SET_CHILD_SUBREAPER`): the orphans of its agents become its
//! own children instead of init's. After each agent's or MCP server's exit, and before the
//! bridge ends, every child of the bridge that is not one of its agents or servers is such an
//! orphan: its process group is killed, then it, and it is reaped. Only the process-owning
//! entry point adopts orphans; [`serve_acp`](crate::acp::serve_acp) on streams of the
//! caller's never touches a process it did not start. Elsewhere than Linux, nothing is
//! adopted and nothing is swept.
//!
//! [`serve_acp_stdio`]: crate::acp::serve_acp_stdio

/// Whether the bridge sweeps orphans (it adopted them).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Orphans {
    adopted: bool,
}

impl Orphans {
    /// Orphans are left alone: the caller owns the process.
    pub(crate) fn left_alone() -> Orphans {
        Orphans { adopted: false }
    }

    /// This process becomes its descendants' subreaper; swept from now on (Linux), else
    /// left alone.
    pub(crate) fn adopt() -> Orphans {
        #[cfg(target_os = "linux")]
        {
            let adopted =
                rustix::process::set_child_subreaper(rustix::process::getpid().into()).is_ok();
            Orphans { adopted }
        }
        #[cfg(not(target_os = "linux"))]
        {
            Orphans::left_alone()
        }
    }

    /// Kills and reaps every child of this process whose pid `tracked` does not claim: the
    /// orphans of agents that have died. The number swept.
    pub(crate) fn sweep(&self, tracked: impl Fn(i32) -> bool) -> usize {
        if !self.adopted {
            return 0;
        }
        #[cfg(target_os = "linux")]
        {
            linux::sweep(tracked)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = tracked;
            0
        }
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use rustix::process::{
        getpgrp, getpid, kill_process, kill_process_group, waitpid, Pid, Signal, WaitOptions,
    };

    /// A process's parent and group, from `/proc/PID/stat` (fields 4 and 5, after the
    /// command name's closing parenthesis, which may itself hold spaces and parentheses),
    /// read into `buf`: an open, a read and a close, no `statx` (a sweep reads every
    /// process's).
    fn parent_and_group(pid: i32, buf: &mut [u8; 4096]) -> Option<(i32, i32)> {
        use std::io::Read;
        let mut file = std::fs::File::open(format!("/proc/{pid}/stat")).ok()?;
        let mut len = 0;
        while len < buf.len() {
            match file.read(&mut buf[len..]) {
                Ok(0) => break,
                Ok(n) => len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        let stat = &buf[..len];
        let rest = &stat[stat.iter().rposition(|&b| b == b')')? + 1..];
        let rest = std::str::from_utf8(rest).ok()?;
        let mut fields = rest.split_whitespace().skip(1);
        let parent = fields.next()?.parse().ok()?;
        let group = fields.next()?.parse().ok()?;
        Some((parent, group))
    }

    pub(super) fn sweep(tracked: impl Fn(i32) -> bool) -> usize {
        let me = getpid().as_raw_nonzero().get();
        let my_group = getpgrp().as_raw_nonzero().get();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return 0;
        };
        let mut buf = [0u8; 4096];
        let orphans: Vec<(i32, i32)> = entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| !tracked(*pid))
            .filter_map(|pid| {
                let (parent, group) = parent_and_group(pid, &mut buf)?;
                (parent == me).then_some((pid, group))
            })
            .collect();
        for (pid, group) in &orphans {
            // Never this process's own group (an orphan that did not leave it).
            if *group != my_group {
                if let Some(group) = Pid::from_raw(*group) {
                    let _ = kill_process_group(group, Signal::KILL);
                }
            }
            if let Some(pid) = Pid::from_raw(*pid) {
                let _ = kill_process(pid, Signal::KILL);
                // Killed, it is a zombie soon: reaped off the loop, not left a zombie.
                if !matches!(waitpid(Some(pid), WaitOptions::NOHANG), Ok(Some(_))) {
                    std::thread::spawn(move || waitpid(Some(pid), WaitOptions::empty()));
                }
            }
        }
        orphans.len()
    }
}
