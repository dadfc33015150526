//! The processes the bridge runs, named by typed keys: a session's agent ([`AgentKey`]) and
//! each of its MCP servers ([`McpServerKey`]). A driver keeps its processes by
//! [`ProcessKey`] and matches on it; nothing parses a key back from text except a transcript
//! reader ([`ProcessKey::from_str`]), whose format is this text.

use std::fmt;
use std::str::FromStr;

/// A session's agent process: the `N` of the bridge's `N`th session, counted from 1.
/// Written `musewire-N` (in transcripts, and as the ACP session id of a session whose agent
/// keeps no session file in the bridge's folder).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AgentKey(pub u64);

/// One MCP server of a session (MCP-01): the session's agent key and the position of the
/// server's entry in the editor's `mcpServers`. Written `musewire-N/mcp-M`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct McpServerKey {
    /// The session whose server it is.
    pub agent: AgentKey,
    /// Its entry's position in the session's `mcpServers`.
    pub index: u32,
}

/// A process of the bridge's, as a driver keeps it: both kinds are piped alike, and the
/// bridge's inputs and actions name them by their own key types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProcessKey {
    /// A session's agent.
    Agent(AgentKey),
    /// A session's MCP server.
    McpServer(McpServerKey),
}

const AGENT_PREFIX: &str = "musewire-";
const MCP_INFIX: &str = "/mcp-";

impl fmt::Display for AgentKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{AGENT_PREFIX}{}", self.0)
    }
}

impl fmt::Display for McpServerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{MCP_INFIX}{}", self.agent, self.index)
    }
}

impl fmt::Display for ProcessKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProcessKey::Agent(agent) => agent.fmt(f),
            ProcessKey::McpServer(server) => server.fmt(f),
        }
    }
}

impl From<AgentKey> for ProcessKey {
    fn from(key: AgentKey) -> Self {
        ProcessKey::Agent(key)
    }
}

impl From<McpServerKey> for ProcessKey {
    fn from(key: McpServerKey) -> Self {
        ProcessKey::McpServer(key)
    }
}

/// Text that is no process key: not `musewire-N` nor `musewire-N/mcp-M`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a process key (musewire-N or musewire-N/mcp-M): {0:?}")]
pub struct BadProcessKey(pub String);

impl FromStr for ProcessKey {
    type Err = BadProcessKey;

    /// Reads a key's written form back (a transcript's `session` field).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || BadProcessKey(text.to_owned());
        let number = |digits: &str| -> Option<u64> {
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| digits.parse().ok())
                .flatten()
        };
        let rest = text.strip_prefix(AGENT_PREFIX).ok_or_else(bad)?;
        match rest.split_once(MCP_INFIX) {
            None => Ok(ProcessKey::Agent(AgentKey(number(rest).ok_or_else(bad)?))),
            Some((agent, index)) => {
                let agent = AgentKey(number(agent).ok_or_else(bad)?);
                let index = number(index)
                    .and_then(|i| u32::try_from(i).ok())
                    .ok_or_else(bad)?;
                Ok(ProcessKey::McpServer(McpServerKey { agent, index }))
            }
        }
    }
}

impl serde::Serialize for AgentKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl serde::Serialize for McpServerKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_reads_back_from_its_written_form() {
        let agent = AgentKey(12);
        let server = McpServerKey { agent, index: 3 };
        for key in [ProcessKey::Agent(agent), ProcessKey::McpServer(server)] {
            assert_eq!(key.to_string().parse::<ProcessKey>(), Ok(key));
        }
        assert_eq!(server.to_string(), "musewire-12/mcp-3");
        for bad in [
            "",
            "musewire-",
            "musewire-x",
            "musewire-1/mcp-",
            "other-1",
            "musewire-+1",
            "musewire-1/mcp-99999999999",
        ] {
            assert!(bad.parse::<ProcessKey>().is_err(), "{bad:?}");
        }
    }
}
