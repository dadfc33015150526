//! Which agent a command runs ([`AgentKind`]), read once from the command where the agent
//! has not said it yet: `initialize` and the pi extension's `-e` (HOST-10) come before the
//! agent runs. What an agent says of itself later wins where it says it: the protocol it
//! negotiates (v2 for omp and the bundled agent, v1 for pi) sets the thinking levels
//! (ACP-24), and pi's extension announcing itself routes host tools (HOST-10).

use std::path::Path;

/// The agents musewire knows by name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentKind {
    /// oh-my-pi (`omp`, or a script of `@oh-my-pi/pi-coding-agent`).
    Omp,
    /// pi (`pi`, or a script of a `pi-coding-agent` package that is not oh-my-pi's).
    Pi,
    /// The bundled scripted agent (`musewire agent`).
    Bundled,
    /// Any other agent: nothing is assumed of it.
    #[default]
    Other,
}

impl AgentKind {
    /// The kind a command runs, by its first three words (a runtime such as node or bun may
    /// come first): a program or script named `omp` or a path through `oh-my-pi` is omp; one
    /// named `pi` or a path through `pi-coding-agent` is pi; `musewire agent` is the bundled
    /// agent.
    pub fn from_command(command: &[String]) -> AgentKind {
        let words = &command[..command.len().min(3)];
        let stem = |arg: &String| {
            Path::new(arg)
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("")
                .to_owned()
        };
        if words
            .iter()
            .any(|arg| stem(arg) == "omp" || arg.contains("oh-my-pi"))
        {
            AgentKind::Omp
        } else if words
            .iter()
            .any(|arg| stem(arg) == "pi" || arg.contains("pi-coding-agent"))
        {
            AgentKind::Pi
        } else if words.first().is_some_and(|w| stem(w) == "musewire")
            && words.get(1).is_some_and(|w| w == "agent")
        {
            AgentKind::Bundled
        } else {
            AgentKind::Other
        }
    }

    /// Whether the agent takes images in a prompt (ACP-14): omp, pi and the bundled agent
    /// (whose echo says what it saw of each); another is not assumed to.
    pub fn takes_images(self) -> bool {
        self != AgentKind::Other
    }
}

#[cfg(test)]
mod tests {
    use super::AgentKind;

    fn kind(command: &str) -> AgentKind {
        let words: Vec<String> = command.split(' ').map(str::to_owned).collect();
        AgentKind::from_command(&words)
    }

    /// ACP-14, HOST-10: each agent by its command, under a runtime too.
    #[test]
    fn acp_14_host_10_an_agent_is_known_by_its_command() {
        assert_eq!(kind("omp --mode rpc"), AgentKind::Omp);
        assert_eq!(
            kind("bun /x/node_modules/@oh-my-pi/pi-coding-agent/src/cli.ts --mode rpc"),
            AgentKind::Omp
        );
        assert_eq!(kind("/usr/local/bin/pi --mode rpc"), AgentKind::Pi);
        assert_eq!(
            kind("node /x/@earendil-works/pi-coding-agent/dist/bundle/cli.js --mode rpc"),
            AgentKind::Pi
        );
        assert_eq!(
            kind("/usr/bin/musewire agent --mode rpc"),
            AgentKind::Bundled
        );
        assert_eq!(kind("python3 fake_agent.py"), AgentKind::Other);
        assert_eq!(AgentKind::from_command(&[]), AgentKind::Other);
        assert!(kind("omp").takes_images() && !kind("python3 a.py").takes_images());
    }
}
