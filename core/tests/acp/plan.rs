//! ACP-03: todos become a whole-plan `plan` update.

use crate::support as acp_support;

use acp_support::Harness;
use musewire_core::acp::{plan_from_phases, MAX_PLAN_ENTRIES, MAX_PLAN_ENTRY_BYTES};
use serde_json::{json, Value};

fn entries(plan: &agent_client_protocol_schema::v1::Plan) -> Vec<Value> {
    serde_json::to_value(plan).unwrap()["entries"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn acp_03_todo_tool_phases_replace_the_plan() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "todo A; B");
    let phases = json!([{"name": "Tasks", "tasks": [
        {"content": "A", "status": "in_progress"}, {"content": "B", "status": "pending"}]}]);
    h.agent_lines(&s, &[
        json!({"type": "tool_execution_start", "toolCallId": "c1", "toolName": "todo", "args": {"op": "init"}}),
        json!({"type": "tool_execution_end", "toolCallId": "c1", "toolName": "todo",
               "result": {"content": [{"type": "text", "text": "ok"}], "details": {"op": "init", "phases": phases}}}),
    ]);
    let plan = h
        .updates()
        .into_iter()
        .find(|u| u["sessionUpdate"] == "plan")
        .unwrap();
    assert_eq!(
        plan["entries"],
        json!([
        {"content": "A", "priority": "medium", "status": "in_progress"},
        {"content": "B", "priority": "medium", "status": "pending"}])
    );
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
fn acp_03_todo_auto_clear_and_empty_reminder_send_an_empty_plan() {
    let mut h = Harness::new();
    let s = h.session();
    h.agent_lines(
        &s,
        &[
            json!({"type": "todo_reminder", "todos": [{"content": "x", "status": "pending"}]}),
            json!({"type": "todo_auto_clear"}),
        ],
    );
    let plans: Vec<Value> = h
        .updates()
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "plan")
        .collect();
    assert_eq!(plans.len(), 2);
    assert_eq!(plans[0]["entries"][0]["content"], "x");
    assert_eq!(plans[1]["entries"], json!([]));
}

#[test]
fn acp_03_failed_todo_leaves_the_plan_alone() {
    let mut h = Harness::new();
    let s = h.session();
    h.agent_lines(&s, &[json!({"type": "tool_execution_end", "toolCallId": "c", "toolName": "todo", "isError": true,
        "result": {"content": [{"type": "text", "text": "no"}], "details": {"phases": []}}})]);
    assert!(h.updates().iter().all(|u| u["sessionUpdate"] != "plan"));
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
