//! Todos as an ACP plan (ACP-03): every todo event replaces the whole plan, an empty list
//! included.

use agent_client_protocol_schema::v1::{Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus};
use serde_json::Value;

use super::bound::cut_to_bytes;

/// The most entries a plan carries, the omission notice included (ACP-03).
pub(crate) const MAX_PLAN_ENTRIES: usize = 500;
/// The most bytes one plan entry's content carries, its truncation notice included (ACP-03).
pub(crate) const MAX_PLAN_ENTRY_BYTES: usize = 8 * 1024;

const ENTRY_CUT_NOTICE: &str = " [… truncated: entry over 8 KiB]";

/// The plan of a `todo` tool's `details.phases` (`[{name, tasks:[{content, status}]}]`):
/// every task with non-empty string content, in order (ACP-03).
pub(crate) fn plan_from_phases(phases: &[Value]) -> Plan {
    let tasks = phases
        .iter()
        .filter_map(|phase| phase.get("tasks").and_then(Value::as_array))
        .flatten();
    plan_from_tasks(tasks)
}

/// The plan of a list of todos (`[{content, status}]`, as `todo_reminder` sends them).
pub(crate) fn plan_from_tasks<'a>(tasks: impl IntoIterator<Item = &'a Value>) -> Plan {
    let mut entries = Vec::new();
    let mut omitted = 0usize;
    for task in tasks {
        let Some(content) = task.get("content").and_then(Value::as_str) else {
            continue;
        };
        if content.is_empty() {
            continue;
        }
        if entries.len() >= MAX_PLAN_ENTRIES - 1 {
            omitted += 1;
            continue;
        }
        let status = task
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("pending");
        entries.push(entry(content, status));
    }
    if omitted > 0 {
        entries.push(PlanEntry::new(
            format!(
                "[{omitted} more plan entries not shown: a plan shows at most {MAX_PLAN_ENTRIES}]"
            ),
            PlanEntryPriority::Medium,
            PlanEntryStatus::Pending,
        ));
    }
    Plan::new(entries)
}

/// One entry: the status mapped as ACP-03 says, the label visible, priority medium.
fn entry(content: &str, status: &str) -> PlanEntry {
    let (label, status) = match status {
        "in_progress" | "inProgress" => (None, PlanEntryStatus::InProgress),
        "pending" => (None, PlanEntryStatus::Pending),
        "completed" => (None, PlanEntryStatus::Completed),
        "cancelled" | "canceled" | "abandoned" => {
            (Some("Cancelled".to_owned()), PlanEntryStatus::Completed)
        }
        other => (Some(label_of(other)), PlanEntryStatus::Pending),
    };
    let text = match label {
        Some(label) => format!("[{label}] {content}"),
        None => content.to_owned(),
    };
    let text = if text.len() > MAX_PLAN_ENTRY_BYTES {
        let mut cut = cut_to_bytes(&text, MAX_PLAN_ENTRY_BYTES - ENTRY_CUT_NOTICE.len()).to_owned();
        cut.push_str(ENTRY_CUT_NOTICE);
        cut
    } else {
        text
    };
    PlanEntry::new(text, PlanEntryPriority::Medium, status)
}

/// A status word as a visible label: at most 32 characters, control characters dropped.
fn label_of(status: &str) -> String {
    let label: String = status
        .chars()
        .filter(|c| !c.is_control())
        .take(32)
        .collect();
    if label.is_empty() {
        "unknown status".to_owned()
    } else {
        label
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::{plan_from_phases, MAX_PLAN_ENTRIES, MAX_PLAN_ENTRY_BYTES};

    fn entries(plan: &agent_client_protocol_schema::v1::Plan) -> Vec<Value> {
        serde_json::to_value(plan).unwrap()["entries"]
            .as_array()
            .unwrap()
            .clone()
    }

    #[test]
    fn acp_03_statuses_cancelled_labelled_unknown_kept_visible() {
        let plan = plan_from_phases(&[json!({"tasks": [
            {"content": "a", "status": "inProgress"},
            {"content": "b", "status": "completed"},
            {"content": "c", "status": "cancelled"},
            {"content": "d", "status": "abandoned"},
            {"content": "e", "status": "blocked"},
            {"content": "", "status": "pending"},
            {"status": "pending"},
            {"content": "f"}]})]);
        let got: Vec<(String, String, String)> = entries(&plan)
            .iter()
            .map(|e| {
                (
                    e["content"].as_str().unwrap().into(),
                    e["status"].as_str().unwrap().into(),
                    e["priority"].as_str().unwrap().into(),
                )
            })
            .collect();
        let want = [
            ("a", "in_progress"),
            ("b", "completed"),
            ("c [Cancelled]", "completed"),
            ("d [Cancelled]", "completed"),
            ("e [blocked]", "pending"),
            ("f", "pending"),
        ];
        let want: Vec<(String, String, String)> = want
            .iter()
            .map(|(c, s)| {
                let content = match c.split_once(' ') {
                    Some((text, label)) => format!("{label} {text}"),
                    None => (*c).to_owned(),
                };
                (content, (*s).to_owned(), "medium".to_owned())
            })
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn acp_03_at_most_500_entries_with_an_omission_notice() {
        let tasks: Vec<Value> = (0..600)
            .map(|i| json!({"content": format!("t{i}"), "status": "pending"}))
            .collect();
        let plan = plan_from_phases(&[json!({"tasks": tasks})]);
        let entries = entries(&plan);
        assert_eq!(entries.len(), MAX_PLAN_ENTRIES);
        assert_eq!(entries[498]["content"], "t498");
        let notice = entries[499]["content"].as_str().unwrap();
        assert!(
            notice.contains("101 more plan entries not shown"),
            "{notice}"
        );
    }

    #[test]
    fn acp_03_entry_over_8_kib_is_cut_with_a_notice() {
        let long = "é".repeat(10_000);
        let plan = plan_from_phases(&[json!({"tasks": [{"content": long, "status": "pending"}]})]);
        let content = entries(&plan)[0]["content"].as_str().unwrap().to_owned();
        assert!(content.len() <= MAX_PLAN_ENTRY_BYTES);
        assert!(content.ends_with("[… truncated: entry over 8 KiB]"));
        assert!(content.starts_with("éé"));
    }
}
