//! The `todo` tool, as the reference's: an `init` sets the phases (the first task in
//! progress), and the result's `details` carry `{op, phases, storage}`, which hosts read
//! as the plan (ACP-03 maps it).

use musewire_wire::ToolResult;
use serde::Serialize;
use serde_json::Value;

use crate::messages::text_result;
use crate::tools::details_json;

/// A phase of the todo list: its name and tasks.
#[derive(Serialize)]
struct Phase<'a> {
    name: &'a str,
    tasks: Vec<Task<'a>>,
}

/// A task: its text and `in_progress` or `pending`.
#[derive(Serialize)]
struct Task<'a> {
    content: &'a str,
    status: &'static str,
}

/// The result's `details`: `{op, phases, storage}`.
#[derive(Serialize)]
struct Details<'a> {
    op: &'static str,
    phases: &'a [Phase<'a>],
    storage: &'static str,
}

/// Runs the `todo` tool on `arguments`: `Ok((result, phases))` for an `init`, or the error.
/// Only `init` is supported (`{op:"init", list:[{phase, items}]}` or `{op:"init", items}`).
pub fn run(arguments: &Value) -> Result<(ToolResult, Vec<Value>), String> {
    if arguments["op"] != "init" {
        return Err(format!(
            "the scripted agent's todo tool supports only op \"init\", not {}",
            arguments["op"]
        ));
    }
    let list: Vec<(String, Vec<String>)> = match arguments["list"].as_array() {
        Some(list) => list
            .iter()
            .map(|entry| {
                let phase = entry["phase"].as_str().unwrap_or("Tasks").to_owned();
                (phase, strings(&entry["items"]))
            })
            .collect(),
        None => {
            let phase = arguments["phase"].as_str().unwrap_or("Tasks").to_owned();
            vec![(phase, strings(&arguments["items"]))]
        }
    };
    if list.iter().all(|(_, items)| items.is_empty()) {
        return Err("Missing list for init operation".to_owned());
    }
    let mut first = true;
    let phases: Vec<Phase<'_>> = list
        .iter()
        .map(|(name, items)| Phase {
            name,
            tasks: items
                .iter()
                .map(|content| Task {
                    content,
                    status: if std::mem::take(&mut first) {
                        "in_progress"
                    } else {
                        "pending"
                    },
                })
                .collect(),
        })
        .collect();
    let details = Details {
        op: "init",
        phases: &phases,
        storage: "memory",
    };
    let result = text_result(summary(&phases), Some(details_json(&details)));
    let phases = phases.iter().map(details_json).collect();
    Ok((result, phases))
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The result text, in the reference's layout for a fresh list.
fn summary(phases: &[Phase<'_>]) -> String {
    let tasks: Vec<(&str, &str, &str)> = phases
        .iter()
        .flat_map(|p| p.tasks.iter().map(|t| (p.name, t.content, t.status)))
        .collect();
    let mut lines = vec![format!("Remaining items ({}):", tasks.len())];
    for (phase, content, status) in &tasks {
        lines.push(format!("  - {content} [{status}] ({phase})"));
    }
    lines.push(format!(
        "Overall: 0/{} done, {} open.",
        tasks.len(),
        tasks.len()
    ));
    let current = &phases[0];
    lines.push(format!(
        "Active phase 1/{} \"{}\" (0/{}).",
        phases.len(),
        current.name,
        current.tasks.len()
    ));
    for phase in phases {
        lines.push(format!("  {}:", phase.name));
        for task in &phase.tasks {
            let tag = if task.status == "in_progress" {
                " (in progress)"
            } else {
                ""
            };
            lines.push(format!("    - [ ] {}{tag}", task.content));
        }
    }
    lines.join("\n")
}
