//! The `todo` tool, as the reference's: an `init` sets the phases (the first task in
//! progress), and the result's `details` carry `{op, phases, storage}`, which hosts read
//! as the plan (ACP-03 maps it).

use serde_json::{json, Value};

/// Runs the `todo` tool on `arguments`: `Ok((result, phases))` for an `init`, or the error.
/// Only `init` is supported (`{op:"init", list:[{phase, items}]}` or `{op:"init", items}`).
pub fn run(arguments: &Value) -> Result<(Value, Vec<Value>), String> {
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
    let phases: Vec<Value> = list
        .iter()
        .map(|(name, items)| {
            let tasks: Vec<Value> = items
                .iter()
                .map(|content| {
                    let status = if std::mem::take(&mut first) {
                        "in_progress"
                    } else {
                        "pending"
                    };
                    json!({"content": content, "status": status})
                })
                .collect();
            json!({"name": name, "tasks": tasks})
        })
        .collect();
    let result = json!({
        "content": [{"type": "text", "text": summary(&phases)}],
        "details": {"op": "init", "phases": phases, "storage": "memory"},
    });
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
fn summary(phases: &[Value]) -> String {
    let tasks: Vec<(&str, &str, &str)> = phases
        .iter()
        .flat_map(|p| {
            let name = p["name"].as_str().unwrap_or_default();
            p["tasks"].as_array().into_iter().flatten().map(move |t| {
                (
                    name,
                    t["content"].as_str().unwrap_or_default(),
                    t["status"].as_str().unwrap_or_default(),
                )
            })
        })
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
    let count = current["tasks"].as_array().map_or(0, Vec::len);
    lines.push(format!(
        "Active phase 1/{} \"{}\" (0/{count}).",
        phases.len(),
        current["name"].as_str().unwrap_or_default()
    ));
    for phase in phases {
        lines.push(format!("  {}:", phase["name"].as_str().unwrap_or_default()));
        for task in phase["tasks"].as_array().into_iter().flatten() {
            let tag = if task["status"] == "in_progress" {
                " (in progress)"
            } else {
                ""
            };
            lines.push(format!(
                "    - [ ] {}{tag}",
                task["content"].as_str().unwrap_or_default()
            ));
        }
    }
    lines.join("\n")
}
