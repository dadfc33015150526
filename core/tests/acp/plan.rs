//! ACP-03: todos become a whole-plan `plan` update.

use crate::support as acp_support;

use acp_support::Harness;
use serde_json::{json, Value};

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
