//! Reading stdin: lines (FRAME-14), the host's side-channel frames, and commands.

use std::time::Instant;

use serde_json::{Map, Value};

use super::{js, Agent, AgentEvent, CommandId, Pending, UnknownCommands};
use crate::client::{normalize_host_tools, normalize_host_uri_schemes};
use crate::frame::ProtocolVersion;
use crate::paging::PageOptions;
use crate::wire::{Command, GetMessagesPage, HostToolDefinition, HostUriSchemeDefinition};

/// The prefix of every `parse` failure (FRAME-14).
pub(super) const PARSE_PREFIX: &str = "Failed to parse command: ";

impl Agent {
    /// One physical line; `None` for a line over the cap (already discarded).
    pub(super) fn handle_line(&mut self, now: Instant, line: Option<Vec<u8>>) {
        let Some(line) = line else {
            let limit = self.config.max_input_line_bytes;
            self.parse_failure(
                "FRAME-16",
                format!("{PARSE_PREFIX}input line exceeds the limit of {limit} bytes"),
            );
            return;
        };
        // TextDecoder (non-fatal) and trim(), as rpc-input.ts reads a line.
        let text = String::from_utf8_lossy(&line);
        let text = js::trim(&text);
        if text.is_empty() {
            return;
        }
        // Lone surrogate escapes are read as JSON.parse reads them: the
        // wire model holds them as stand-ins and writes them back unchanged.
        match crate::wire::parse_value(text.as_bytes()) {
            Ok(value) => self.dispatch(now, value),
            Err(error) => self.parse_failure("FRAME-14", format!("{PARSE_PREFIX}{error}")),
        }
    }

    fn parse_failure(&mut self, rule: &'static str, message: String) {
        self.write_failure(None, "parse", message.clone());
        self.event(AgentEvent::InputError { rule, message });
    }

    fn dispatch(&mut self, now: Instant, value: Value) {
        let mut fields = match value {
            Value::Object(fields) => fields,
            Value::Null => {
                // `command.type` on null throws in the reference's dispatcher.
                let message =
                    format!("{PARSE_PREFIX}null is not an object (evaluating 'command.type')");
                self.parse_failure("FRAME-16", message);
                return;
            }
            // Any other value has no `type`: the reference's switch falls to its default.
            _ => {
                self.write_unknown_command(None);
                return;
            }
        };
        if self.route_host_frame(&fields) {
            return;
        }
        let id = fields.get("id").cloned();
        let kind = match fields.get("type") {
            Some(Value::String(kind)) => kind.clone(),
            other => {
                let other = other.cloned();
                self.write_unknown_command(other.as_ref());
                return;
            }
        };
        match kind.as_str() {
            "negotiate_protocol" => self.negotiate(id, fields.get("protocolVersion")),
            "set_host_tools" => self.set_host_tools(id, fields.get("tools")),
            "set_host_uri_schemes" => self.set_host_uri_schemes(id, fields.get("schemes")),
            // OUT-10: answered by the agent itself; without the offer it is unknown, as for
            // omp. It is planned in turn, once what came before it has been polled (the
            // application has then seen the commands before it: a `switch_session` just
            // before a read has loaded the session the read is checked against).
            super::READ_OUTPUT_COMMAND if self.config.serve_outputs => {
                self.out.push_back(super::Out::Read {
                    id,
                    fields,
                    at: now,
                })
            }
            super::READ_OUTPUT_COMMAND => {
                fields.shift_remove("type");
                let command = Command::other(&kind, fields);
                self.unknown(id, kind, command)
            }
            "get_messages_page" => {
                let page = PageOptions::from_command(&fields);
                let command = match Command::from_value_with_id(Value::Object(fields.clone())) {
                    Ok((_, command)) => command,
                    // Ill-typed members are checked when the page is built (PAGE-01, 03);
                    // the application gets them in `extra`.
                    Err(_) => {
                        fields.shift_remove("type");
                        fields.shift_remove("id");
                        Command::GetMessagesPage(GetMessagesPage {
                            extra: fields,
                            ..GetMessagesPage::default()
                        })
                    }
                };
                self.deliver(id, kind, command, Some(page));
            }
            _ => match Command::from_value_with_id(Value::Object(fields)) {
                Ok((_, Command::Unknown(raw))) => self.unknown(id, kind, Command::Unknown(raw)),
                Ok((_, command)) => self.deliver(id, kind, command, None),
                Err(error) => {
                    self.write_failure(id, &kind, format!("Invalid {kind} command: {error}"))
                }
            },
        }
    }

    fn unknown(&mut self, id: Option<Value>, kind: String, command: Command) {
        match self.config.unknown_commands {
            UnknownCommands::Reject => self.write_unknown_command(Some(&Value::String(kind))),
            UnknownCommands::Deliver => self.deliver(id, kind, command, None),
        }
    }

    fn deliver(
        &mut self,
        id: Option<Value>,
        kind: String,
        command: Command,
        page: Option<PageOptions>,
    ) {
        self.next_request += 1;
        let request = CommandId(self.next_request);
        self.requests.insert(
            request,
            Pending {
                id: id.clone(),
                command: Value::String(kind),
                page,
            },
        );
        self.event(AgentEvent::Command {
            request,
            id,
            command,
        });
    }

    /// FRAME-04..06: version 2 is answered in v1, and chunking applies from the next frame.
    fn negotiate(&mut self, id: Option<Value>, version: Option<&Value>) {
        if version.and_then(Value::as_f64) != Some(2.0) {
            let message = format!("Unsupported RPC protocol version: {}", js::string(version));
            self.write_failure(id, "negotiate_protocol", message);
            return;
        }
        self.write_response(
            id,
            Some("negotiate_protocol".into()),
            Ok(Some(serde_json::json!({"protocolVersion": 2}))),
        );
        if self.encoder.protocol() != ProtocolVersion::V2 {
            self.encoder.set_protocol(ProtocolVersion::V2);
            self.event(AgentEvent::ProtocolChanged {
                protocol: ProtocolVersion::V2,
            });
        }
    }

    /// HOST-01: the whole set is replaced, or nothing changes.
    fn set_host_tools(&mut self, id: Option<Value>, tools: Option<&Value>) {
        let Some(Value::Array(tools)) = tools else {
            let message = "set_host_tools requires a tools array".to_owned();
            self.write_failure(id, "set_host_tools", message);
            return;
        };
        let normalized = match normalize_host_tools(tools) {
            Ok(tools) => tools,
            Err(message) => return self.write_failure(id, "set_host_tools", message),
        };
        let tools: Vec<HostToolDefinition> = normalized.iter().map(tool_definition).collect();
        let names: Vec<Value> = tools.iter().map(|t| Value::from(t.name.as_str())).collect();
        self.host_tools = tools.iter().map(|t| (t.name.clone(), t.clone())).collect();
        self.write_response(
            id,
            Some("set_host_tools".into()),
            Ok(Some(serde_json::json!({"toolNames": names}))),
        );
        self.event(AgentEvent::HostToolsChanged { tools });
    }

    /// HOST-04: normalised, the reserved scheme refused, the whole set replaced.
    fn set_host_uri_schemes(&mut self, id: Option<Value>, schemes: Option<&Value>) {
        let Some(Value::Array(schemes)) = schemes else {
            let message = "set_host_uri_schemes requires a schemes array".to_owned();
            self.write_failure(id, "set_host_uri_schemes", message);
            return;
        };
        let normalized = match normalize_host_uri_schemes(schemes) {
            Ok(schemes) => schemes,
            Err(message) => return self.write_failure(id, "set_host_uri_schemes", message),
        };
        let schemes: Vec<HostUriSchemeDefinition> =
            normalized.iter().map(scheme_definition).collect();
        let names: Vec<Value> = schemes
            .iter()
            .map(|s| Value::from(s.scheme.as_str()))
            .collect();
        self.host_schemes = schemes
            .iter()
            .map(|s| (s.scheme.clone(), s.clone()))
            .collect();
        self.write_response(
            id,
            Some("set_host_uri_schemes".into()),
            Ok(Some(serde_json::json!({"schemes": names}))),
        );
        self.event(AgentEvent::HostUriSchemesChanged { schemes });
    }
}

fn string_member(fields: &Map<String, Value>, key: &str) -> Option<String> {
    fields.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// A normalised tool in the reference's shape: label defaults to the name, `hidden` is a
/// boolean, `loadMode` and `readsSkillUris` kept when well-typed.
fn tool_definition(tool: &Value) -> HostToolDefinition {
    let fields = tool.as_object().cloned().unwrap_or_default();
    let name = string_member(&fields, "name").unwrap_or_default();
    let label = fields
        .get("label")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map_or_else(|| name.clone(), str::to_owned);
    HostToolDefinition {
        label: Some(label),
        description: string_member(&fields, "description").unwrap_or_default(),
        parameters: fields.get("parameters").cloned().unwrap_or_default(),
        hidden: Some(fields.get("hidden") == Some(&Value::Bool(true))),
        load_mode: string_member(&fields, "loadMode"),
        reads_skill_uris: fields.get("readsSkillUris").and_then(Value::as_bool),
        name,
        extra: Map::new(),
    }
}

/// A normalised scheme in the reference's shape.
fn scheme_definition(scheme: &Value) -> HostUriSchemeDefinition {
    let fields = scheme.as_object().cloned().unwrap_or_default();
    HostUriSchemeDefinition {
        scheme: string_member(&fields, "scheme").unwrap_or_default(),
        description: string_member(&fields, "description"),
        writable: Some(fields.get("writable") == Some(&Value::Bool(true))),
        immutable: Some(fields.get("immutable") == Some(&Value::Bool(true))),
        extra: Map::new(),
    }
}
