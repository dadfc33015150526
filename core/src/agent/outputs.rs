//! Tool-result spill and stored-output reads, as actions for the driver to perform.
//!
//! * **Spill (SPILL-01..05).** The application hands a final tool result in with
//!   [`AgentCall::SettleToolResult`](super::AgentCall::SettleToolResult); the agent applies
//!   [`spill::plan`]: the result is settled at once, or the agent asks the driver for an
//!   [`AgentAction::SpillWrite`] and settles it when [`Input::SpillDone`](super::Input) comes.
//!   Either way the application gets [`AgentEvent::ToolResultSettled`]. A spilled result's
//!   `details` carry `storedOutput` (OUT-02, OUT-10) and the output is recorded for
//!   reads; a failed save settles the original result, the reason in the outcome (SPILL-05).
//! * **`read_output` (OUT-10, ours).** With [`AgentConfig::serve_outputs`](super::AgentConfig)
//!   the agent answers the command itself, the application never sees it: params checked
//!   (OUT-03), the reference and offset checked against the outputs recorded (OUT-07), then an
//!   [`AgentAction::OutputRead`] due within [`READ_BUDGET`]; the driver's bytes become the
//!   response with [`read_result`] (OUT-04, OUT-05). Past the deadline the response fails with
//!   `read_timed_out` and a late answer is dropped. A read starts nothing and is answered
//!   while a run streams.
//! * **History replay (OUT-08).** [`AgentCall::RegisterOutputs`](super::AgentCall) records the
//!   outputs a loaded history names ([`stored_outputs_in_history`](crate::output::stored_outputs_in_history));
//!   outputs recorded earlier stay readable.

use std::time::Instant;

use serde_json::{Map, Value};

use super::{Agent, AgentAction, AgentEvent, CommandFailure, ReadId, SettledToolResult, SpillId};
use crate::frame::{ProtocolVersion, MAX_FRAME_BYTES};
use crate::output::{
    read_result, OutputError, ReadBytes, ReadParams, ReadRequest, ReadResult, StoredOutput,
    READ_OUTPUT_VERSION, STORED_OUTPUT_MEMBER,
};
use crate::paging::json_len;
use crate::spill::{self, Decision, SaveFailure, Saved, Settled, SpillOwner, SpillSource};
use crate::wire::ToolResult;

/// The `read_output` command's type (OUT-10).
pub(crate) const READ_OUTPUT_COMMAND: &str = "read_output";

/// A `read_output` waiting for the driver's bytes.
#[derive(Debug, Clone)]
pub(super) struct PendingRead {
    /// The host's id, echoed in the response.
    pub(super) id: Option<Value>,
    pub(super) request: ReadRequest,
    pub(super) deadline: Instant,
}

impl Agent {
    /// Settles a final tool result (SPILL-01..05): [`spill::plan`], then a spill write when
    /// over the cap; the reference goes into `details.storedOutput` (OUT-02). The
    /// settled result arrives as [`AgentEvent::ToolResultSettled`], at once or after the
    /// driver's [`AgentAction::SpillWrite`].
    pub(super) fn settle_tool_result(
        &mut self,
        source: SpillSource,
        owner: Option<SpillOwner>,
        result: ToolResult,
    ) {
        match spill::plan(&self.config.spill, result, source.clone(), owner) {
            Decision::Settled(settled) => self.settled(source, settled, None),
            Decision::Save(pending) => {
                let (id, write) = self.spills.start(pending, source);
                self.out
                    .push_back(super::Out::Action(AgentAction::SpillWrite { id, write }));
            }
        }
    }

    /// The driver's answer to a spill write.
    pub(super) fn spill_done(&mut self, id: SpillId, saved: Result<Saved, SaveFailure>) {
        if let Some((settled, output, source)) = self.spills.finish(id, saved) {
            self.settled(source, settled, output);
        }
    }

    fn settled(&mut self, source: SpillSource, settled: Settled, output: Option<StoredOutput>) {
        let Settled {
            mut result,
            outcome,
        } = settled;
        if let Some(output) = &output {
            // OUT-02: the reference travels in the result's details.
            add_stored_output(&mut result, output);
            self.catalog.insert(output.clone());
        }
        self.event(AgentEvent::ToolResultSettled(Box::new(SettledToolResult {
            call_id: source.call_id,
            tool_name: source.tool_name,
            result,
            outcome,
            stored_output: output,
        })));
    }

    /// Records stored outputs for reads (OUT-08: the outputs a loaded history names, found
    /// with [`stored_outputs_in_history`](crate::output::stored_outputs_in_history)). A
    /// newer record of a reference replaces the older; others stay. Returns how many were
    /// recorded.
    pub(super) fn register_outputs(
        &mut self,
        outputs: impl IntoIterator<Item = StoredOutput>,
    ) -> usize {
        let mut count = 0;
        for output in outputs {
            self.catalog.insert(output);
            count += 1;
        }
        count
    }

    /// The stored outputs this agent can serve.
    pub fn outputs(&self) -> &crate::output::OutputCatalog {
        &self.catalog
    }

    /// Stored-output reads waiting for the driver.
    #[cfg(test)]
    fn pending_reads(&self) -> usize {
        self.reads.len()
    }

    /// Spill writes waiting for the driver.
    pub fn pending_spills(&self) -> usize {
        self.spills.len()
    }

    /// `read_output` (OUT-10): checked (OUT-03, OUT-07), then read by the driver.
    pub(super) fn read_output(
        &mut self,
        now: Instant,
        id: Option<Value>,
        fields: Map<String, Value>,
    ) {
        let planned = ReadParams::from_value(&Value::Object(fields))
            .and_then(|params| self.catalog.plan_read(&params, now));
        match planned {
            Ok(read) => {
                self.next_read += 1;
                let read_id = ReadId(self.next_read);
                self.reads.insert(
                    read_id,
                    PendingRead {
                        id,
                        request: read.request.clone(),
                        deadline: read.deadline,
                    },
                );
                self.out
                    .push_back(super::Out::Action(AgentAction::OutputRead {
                        id: read_id,
                        read,
                    }));
            }
            Err(error) => self.write_read_failure(id, &error),
        }
    }

    /// The driver's answer to a read; dropped when the read is no longer pending.
    pub(super) fn read_done(
        &mut self,
        now: Instant,
        id: ReadId,
        read: Result<ReadBytes, OutputError>,
    ) {
        let Some(pending) = self.reads.remove(&id) else {
            return;
        };
        if now >= pending.deadline {
            return self.write_read_failure(pending.id, &OutputError::ReadTimedOut);
        }
        // The read was planned from a record of this agent's: a store that no longer finds
        // the output (its file removed, say after a restart) means it expired (OUT-07).
        let read = read.map_err(|error| match error {
            OutputError::Unknown => OutputError::Expired,
            error => error,
        });
        let answer = read.and_then(|read| self.fitting_page(&pending, &read));
        match answer {
            Ok(result) => self.write_response(
                pending.id,
                Some(READ_OUTPUT_COMMAND.into()),
                Ok(Some(result.to_value())),
            ),
            Err(error) => self.write_read_failure(pending.id, &error),
        }
    }

    /// The page for the bytes read. In v1 a response is one line of at most
    /// [`MAX_FRAME_BYTES`](crate::frame::MAX_FRAME_BYTES) (FRAME-12): a page whose response
    /// would be longer (a large `lengthBytes`, text that escapes long, base64) is cut to a
    /// shorter page that fits, never failed: a short page is normal, readers advance by the
    /// returned `byteLen` (OUT-04; OUT-10, ours). In v2 the response is chunked instead.
    fn fitting_page(
        &self,
        pending: &PendingRead,
        read: &ReadBytes,
    ) -> Result<ReadResult, OutputError> {
        let mut request = pending.request.clone();
        let mut bytes = &read.bytes[..];
        // The response's other members: the id's JSON and the frame's fixed members.
        let id_len = pending.id.as_ref().map_or(0, json_len);
        loop {
            let page = read_result(&request, bytes, read.total_len)?;
            if self.encoder.protocol() == ProtocolVersion::V2 {
                return Ok(page);
            }
            // The response's line, counted without being built.
            let line = json_len(&page) + id_len + 96;
            if line < MAX_FRAME_BYTES || bytes.len() <= 1 {
                return Ok(page);
            }
            // Shrink in proportion, with room to spare, and always by at least one byte.
            let room = (MAX_FRAME_BYTES - 4096) as u128;
            let shorter = (bytes.len() as u128 * room / line as u128) as usize;
            bytes = &bytes[..shorter.clamp(1, bytes.len() - 1)];
            request.length_bytes = bytes.len() as u64;
        }
    }

    /// Reads past their deadline fail with `read_timed_out` (OUT-10).
    pub(super) fn expire_reads(&mut self, now: Instant) {
        let expired: Vec<ReadId> = self
            .reads
            .iter()
            .filter(|(_, read)| now >= read.deadline)
            .map(|(id, _)| *id)
            .collect();
        for id in expired {
            if let Some(pending) = self.reads.remove(&id) {
                self.write_read_failure(pending.id, &OutputError::ReadTimedOut);
            }
        }
    }

    /// The earliest read deadline.
    pub(super) fn next_read_deadline(&self) -> Option<Instant> {
        self.reads.values().map(|read| read.deadline).min()
    }

    /// `{success:false, error: Display, code: serde tag}` (OUT-10).
    fn write_read_failure(&mut self, id: Option<Value>, error: &OutputError) {
        self.write_response(
            id,
            Some(READ_OUTPUT_COMMAND.into()),
            Err(CommandFailure {
                error: error.to_string(),
                code: Some(crate::wire::ErrorCode::from_wire(error.code().as_str())),
            }),
        );
    }
}

/// Puts `storedOutput` into a result's `details` (OUT-02): into the object, or into a new
/// one when there are none; details that are not an object are kept under `details` of the
/// new object (ours).
fn add_stored_output(result: &mut ToolResult, output: &StoredOutput) {
    let member = serde_json::to_value(output).unwrap_or(Value::Null);
    let mut details = match result.details.take() {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map,
        Some(other) => Map::from_iter([("details".to_owned(), other)]),
    };
    details.insert(STORED_OUTPUT_MEMBER.to_owned(), member);
    result.details = Some(Value::Object(details));
}

/// The offer in the ready frame (OUT-10).
pub(super) fn read_output_offer() -> crate::wire::ReadOutputOffer {
    crate::wire::ReadOutputOffer {
        version: READ_OUTPUT_VERSION,
        max_length_bytes: crate::output::MAX_READ_BYTES,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::agent::{AgentConfig, Input};
    use crate::output::OutputErrorCode;
    use crate::output::{stored_outputs_in_history, Availability, OutputRef, READ_BUDGET};
    use crate::spill::Outcome;
    use crate::spill::SpillPolicy;

    fn served() -> Agent {
        Agent::new(AgentConfig {
            spill: SpillPolicy {
                max_inline_bytes: Some(8),
                has_store: true,
            },
            serve_outputs: true,
            ..AgentConfig::default()
        })
    }

    fn drain(agent: &mut Agent) -> Vec<AgentAction> {
        std::iter::from_fn(|| agent.poll_action()).collect()
    }

    fn output(session: &str, item: &str, len: u64) -> StoredOutput {
        StoredOutput {
            session_id: session.into(),
            item_id: item.into(),
            output_ref: OutputRef::from_random([7; 8]),
            byte_len: len,
            media_type: crate::output::TEXT_MEDIA_TYPE.into(),
            availability: Availability::Available,
        }
    }

    /// SPILL-03, OUT-02, OUT-08: the settled result's details carry the stored output, which
    /// `stored_outputs_in_history` finds again in a `toolResult` message built from it.
    #[test]
    fn spill_03_out_08_settled_details_round_trip_through_history() {
        let now = Instant::now();
        let mut agent = served();
        drain(&mut agent);
        agent.settle_tool_result(
            SpillSource::new("bash", "call-1", "Bash"),
            Some(SpillOwner::new("s")),
            ToolResult::text("0123456789abcdef"),
        );
        let [AgentAction::SpillWrite { id, write }] = &drain(&mut agent)[..] else {
            panic!("one spill write")
        };
        assert_eq!(write.content, "0123456789abcdef");
        let stored = output("s", "call-1", 16);
        let spill_ref = spill::SpillRef {
            locator: "/x".into(),
            bytes: 16,
            retrieval_hint: "hint.".into(),
        };
        assert_eq!(agent.pending_spills(), 1);
        agent.handle(
            now,
            Input::SpillDone(
                *id,
                Ok(Saved {
                    spill_ref,
                    output: stored.clone(),
                }),
            ),
        );
        assert_eq!(agent.pending_spills(), 0);
        let [AgentAction::Event(AgentEvent::ToolResultSettled(settled))] = &drain(&mut agent)[..]
        else {
            panic!("one settled event")
        };
        let SettledToolResult {
            result,
            stored_output,
            ..
        } = &**settled;
        assert_eq!(stored_output.as_ref(), Some(&stored));
        assert_eq!(agent.outputs().get(&stored.output_ref), Some(&stored));
        let message = json!({
            "role": "toolResult", "toolCallId": "call-1", "toolName": "bash",
            "content": result.content, "details": result.details, "isError": false,
        });
        // Another call's record in this message's details is not this message's output.
        let foreign = json!({
            "role": "toolResult", "toolCallId": "call-2", "toolName": "bash", "content": [],
            "details": result.details,
        });
        let user = json!({"role": "user", "content": "x"});
        assert_eq!(
            stored_outputs_in_history([&user, &message, &foreign]),
            vec![stored]
        );
    }

    /// OUT-10 (ours), FRAME-12: in v1 a full 1 MiB page of text that escapes long is cut to a
    /// page whose response fits one line, never failed; the next page starts where it ended.
    #[test]
    fn out_04_10_a_v1_page_is_cut_to_fit_one_line() {
        let now = Instant::now();
        let mut agent = served();
        drain(&mut agent);
        let len = 3 * 1_048_576u64;
        let stored = output("s", "call-1", len);
        agent.register_outputs([stored.clone()]);
        // Every byte a control character: six bytes each once escaped.
        let text: Vec<u8> = (0..len)
            .map(|i| [b'\x01', b'"', b'a'][i as usize % 3])
            .collect();
        let mut offset = 0u64;
        let mut pages = 0;
        while offset < len {
            let line = format!(
                "{{\"id\":\"r\",\"type\":\"read_output\",\"sessionId\":\"s\",\"itemId\":\"call-1\",\"outputRef\":\"{}\",\"offsetBytes\":{offset},\"lengthBytes\":1048576}}\n",
                stored.output_ref.as_str()
            );
            agent.handle(now, Input::Stdin(line.as_bytes()));
            let [AgentAction::OutputRead { id, read }] = &drain(&mut agent)[..] else {
                panic!("one read")
            };
            let start = read.request.offset_bytes as usize;
            let end = (start + read.request.length_bytes as usize).min(text.len());
            let bytes = ReadBytes {
                bytes: text[start..end].to_vec(),
                total_len: len,
            };
            agent.handle(now, Input::ReadDone(*id, Ok(bytes)));
            let [AgentAction::Write(line)] = &drain(&mut agent)[..] else {
                panic!("one response line")
            };
            assert!(
                line.len() <= crate::frame::MAX_FRAME_BYTES,
                "{}",
                line.len()
            );
            let response: Value = serde_json::from_slice(line).unwrap();
            assert_eq!(
                response["success"],
                true,
                "{}",
                &response.to_string()[..200]
            );
            let page: ReadResult = serde_json::from_value(response["data"].clone()).unwrap();
            assert_eq!(page.offset_bytes, offset);
            assert!(
                (page.byte_len > 100_000 || page.eof) && page.byte_len < 1_048_576,
                "{}",
                page.byte_len
            );
            assert_eq!(
                page.content.as_bytes(),
                &text[start..start + page.byte_len as usize]
            );
            offset += page.byte_len;
            pages += 1;
            assert!(pages < 40);
        }
    }

    /// OUT-08, OUT-10: a read sent right after a command the application handles (a
    /// `switch_session` that loads a session, say) is planned only once that command's event
    /// has been polled: the outputs the application registered meanwhile are known to it.
    #[test]
    fn out_08_10_a_read_is_planned_after_the_commands_before_it() {
        let now = Instant::now();
        let mut agent = served();
        drain(&mut agent);
        let stored = output("s", "call-1", 10);
        let lines = format!(
            "{{\"id\":\"sw\",\"type\":\"switch_session\",\"sessionPath\":\"/x/s.jsonl\"}}\n{{\"id\":\"r\",\"type\":\"read_output\",\"sessionId\":\"s\",\"itemId\":\"call-1\",\"outputRef\":\"{}\",\"offsetBytes\":0}}\n",
            stored.output_ref.as_str()
        );
        agent.handle(now, Input::Stdin(lines.as_bytes()));
        let Some(AgentAction::Event(AgentEvent::Command { request, .. })) = agent.poll_action()
        else {
            panic!("the switch_session first")
        };
        // The application loads the session: its history names the output (OUT-08).
        agent.register_outputs([stored.clone()]);
        agent.respond(request, Ok(None)).unwrap();
        let actions = drain(&mut agent);
        assert_eq!(actions.len(), 2, "{actions:?}");
        let reads: Vec<_> = actions
            .iter()
            .filter_map(|a| match a {
                AgentAction::OutputRead { read, .. } => Some(read),
                _ => None,
            })
            .collect();
        let [read] = &reads[..] else {
            panic!("the read is planned against the loaded session: {actions:?}")
        };
        assert_eq!(read.request.output_ref, stored.output_ref);
        let sw = |a: &AgentAction| matches!(a, AgentAction::Write(l) if l.starts_with(b"{\"id\":\"sw\""));
        assert!(actions.iter().any(sw));
    }

    /// SPILL-05: a store record naming another item is a failed save; nothing is recorded.
    #[test]
    fn spill_05_a_record_for_another_item_keeps_the_original() {
        let now = Instant::now();
        let mut agent = served();
        drain(&mut agent);
        let original = ToolResult::text("0123456789abcdef");
        agent.settle_tool_result(
            SpillSource::new("bash", "call-1", "Bash"),
            Some(SpillOwner::new("s")),
            original.clone(),
        );
        let [AgentAction::SpillWrite { id, .. }] = &drain(&mut agent)[..] else {
            panic!()
        };
        let saved = Saved {
            spill_ref: spill::SpillRef {
                locator: "/x".into(),
                bytes: 16,
                retrieval_hint: "h".into(),
            },
            output: output("s", "call-9", 16),
        };
        agent.handle(now, Input::SpillDone(*id, Ok(saved)));
        let [AgentAction::Event(AgentEvent::ToolResultSettled(settled))] = &drain(&mut agent)[..]
        else {
            panic!()
        };
        let SettledToolResult {
            result,
            outcome,
            stored_output,
            ..
        } = &**settled;
        assert_eq!(result, &original);
        assert!(matches!(outcome, Outcome::Kept(k) if k.is_failure()));
        assert!(stored_output.is_none());
        assert!(agent.outputs().is_empty());
    }

    /// OUT-10: the read's deadline is in poll_timeout; past it the read fails once.
    #[test]
    fn out_10_read_deadline_is_in_poll_timeout() {
        let now = Instant::now();
        let mut agent = served();
        drain(&mut agent);
        let stored = output("s", "call-1", 4);
        agent.register_outputs([stored.clone()]);
        let line = format!(
            "{{\"id\":\"r\",\"type\":\"read_output\",\"sessionId\":\"s\",\"itemId\":\"call-1\",\"outputRef\":\"{}\",\"offsetBytes\":0}}\n",
            stored.output_ref
        );
        agent.handle(now, Input::Stdin(line.as_bytes()));
        assert!(matches!(
            &drain(&mut agent)[..],
            [AgentAction::OutputRead { .. }]
        ));
        assert_eq!(agent.poll_timeout(), Some(now + READ_BUDGET));
        agent.handle(now + READ_BUDGET - Duration::from_millis(1), Input::Timeout);
        assert!(drain(&mut agent).is_empty());
        agent.handle(now + READ_BUDGET, Input::Timeout);
        let [AgentAction::Write(line)] = &drain(&mut agent)[..] else {
            panic!()
        };
        assert!(String::from_utf8_lossy(line).ends_with("\"code\":\"read_timed_out\"}\n"));
        assert_eq!((agent.pending_reads(), agent.poll_timeout()), (0, None));
    }

    /// OUT-10: every OutputError's code is its serde tag, as the contract lists them.
    #[test]
    fn out_10_codes_are_the_serde_tags() {
        let errors = [
            OutputError::InvalidParams {
                field: "f".into(),
                reason: "r".into(),
            },
            OutputError::PathNotReference,
            OutputError::UriNotReference,
            OutputError::Unknown,
            OutputError::Foreign,
            OutputError::Expired,
            OutputError::Unavailable,
            OutputError::OffsetOutOfRange {
                offset: 1,
                byte_len: 0,
            },
            OutputError::OffsetInsideCharacter { offset: 1 },
            OutputError::LengthInsideCharacter {
                offset: 1,
                length: 1,
            },
            OutputError::BadRead { reason: "r".into() },
            OutputError::ReadTimedOut,
        ];
        let tags: Vec<String> = errors
            .iter()
            .map(|e| {
                serde_json::to_value(e).unwrap()["code"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        let codes: Vec<&str> = errors.iter().map(|e| e.code().as_str()).collect();
        assert_eq!(codes, tags);
        assert_eq!(codes, OutputErrorCode::ALL.map(OutputErrorCode::as_str));
        assert_eq!(
            codes,
            [
                "invalid_params",
                "path_not_reference",
                "uri_not_reference",
                "unknown",
                "foreign",
                "expired",
                "unavailable",
                "offset_out_of_range",
                "offset_inside_character",
                "length_inside_character",
                "bad_read",
                "read_timed_out"
            ]
        );
    }

    /// OUT-02 (ours): details that are not an object are kept beside the stored output.
    #[test]
    fn out_02_non_object_details_are_kept() {
        let mut result = ToolResult {
            details: Some(json!("plain")),
            ..ToolResult::text("x")
        };
        add_stored_output(&mut result, &output("s", "c", 1));
        let details = result.details.unwrap();
        assert_eq!(details["details"], "plain");
        assert_eq!(details[STORED_OUTPUT_MEMBER]["itemId"], "c");
    }
}
