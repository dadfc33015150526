//! Host tools and host URI schemes, checked before they are sent (HOST-01, HOST-04), with
//! the reference agent's messages, so a bad definition fails at the call site rather than as
//! a failed response later.

use serde_json::{Map, Value};

/// Schemes the agent keeps for itself (HOST-04).
pub(crate) const RESERVED_HOST_URI_SCHEMES: [&str; 1] = ["security"];

/// Checks host tool definitions as the agent will (HOST-01): a non-empty name, a non-empty
/// description and a JSON Schema object for `parameters`; names and descriptions are sent
/// trimmed.
pub(crate) fn normalize_host_tools(tools: &[Value]) -> Result<Vec<Value>, String> {
    tools
        .iter()
        .enumerate()
        .map(|(index, tool)| {
            let trimmed = |key: &str| {
                tool.get(key)
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
            };
            let name = trimmed("name").ok_or_else(|| {
                format!("Host tool at index {index} must provide a non-empty name")
            })?;
            let description = trimmed("description").ok_or_else(|| {
                format!("Host tool \"{name}\" must provide a non-empty description")
            })?;
            if !tool.get("parameters").is_some_and(Value::is_object) {
                return Err(format!(
                    "Host tool \"{name}\" must provide a JSON Schema object"
                ));
            }
            let mut out: Map<String, Value> = tool.as_object().cloned().unwrap_or_default();
            out.insert("name".into(), Value::String(name));
            out.insert("description".into(), Value::String(description));
            Ok(Value::Object(out))
        })
        .collect()
}

/// Normalises host URI scheme definitions as the agent will (HOST-04): each scheme trimmed and
/// lower-cased, matching `^[a-z][a-z0-9+.-]*$`, not reserved; a later duplicate replaces an
/// earlier one.
pub(crate) fn normalize_host_uri_schemes(schemes: &[Value]) -> Result<Vec<Value>, String> {
    let mut out: Vec<(String, Value)> = Vec::new();
    for raw in schemes {
        let original = raw.get("scheme").and_then(Value::as_str).unwrap_or("");
        let scheme = original.trim().to_lowercase();
        if scheme.is_empty() {
            return Err("Host URI scheme must be a non-empty string".into());
        }
        let mut bytes = scheme.bytes();
        let valid = bytes.next().is_some_and(|c| c.is_ascii_lowercase())
            && bytes.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"+.-".contains(&c));
        if !valid {
            return Err(format!(
                "Host URI scheme contains invalid characters: {original}"
            ));
        }
        if RESERVED_HOST_URI_SCHEMES.contains(&scheme.as_str()) {
            return Err(format!("Host URI scheme is reserved by OMP: {scheme}://"));
        }
        let mut definition: Map<String, Value> = raw.as_object().cloned().unwrap_or_default();
        definition.insert("scheme".into(), Value::String(scheme.clone()));
        match out.iter_mut().find(|(s, _)| *s == scheme) {
            Some(slot) => slot.1 = Value::Object(definition),
            None => out.push((scheme, Value::Object(definition))),
        }
    }
    Ok(out.into_iter().map(|(_, d)| d).collect())
}

/// [`normalize_host_tools`] over typed definitions: the tools as the agent will hold them, or
/// the agent's message for the first it would refuse (HOST-01).
pub(crate) fn checked_host_tools(
    tools: &[crate::wire::HostToolDefinition],
) -> Result<Vec<crate::wire::HostToolDefinition>, String> {
    let values: Vec<Value> = tools.iter().map(to_value).collect();
    normalize_host_tools(&values)?
        .into_iter()
        .map(|v| serde_json::from_value(v).map_err(|e| e.to_string()))
        .collect()
}

/// [`normalize_host_uri_schemes`] over typed definitions (HOST-04).
pub(crate) fn checked_host_uri_schemes(
    schemes: &[crate::wire::HostUriSchemeDefinition],
) -> Result<Vec<crate::wire::HostUriSchemeDefinition>, String> {
    let values: Vec<Value> = schemes.iter().map(to_value).collect();
    normalize_host_uri_schemes(&values)?
        .into_iter()
        .map(|v| serde_json::from_value(v).map_err(|e| e.to_string()))
        .collect()
}

fn to_value<T: serde::Serialize>(item: &T) -> Value {
    serde_json::to_value(item).expect("a wire definition serialises")
}
