//! Comparing actions: long strings abbreviated to a digest, the first difference located by
//! path, values shown truncated.
//!
//! Transcripts stay small although an agent may send megabytes: every JSON string longer than
//! [`ABBREVIATE_OVER`] bytes, in expected and actual actions alike, is compared (and stored)
//! as `"…[N bytes, fnv1a64 HEX, starts \"FIRST 32 CHARS\"]"`. Any change to such a string
//! changes its length or digest, so the comparison stays exact for practical purposes.

use serde_json::Value;

pub use musewire_core::client::{abbreviate_str, fnv1a64, normalize, ABBREVIATE_OVER};

/// Compact JSON of `value`, cut to about `max` characters.
pub fn truncated(value: &Value, max: usize) -> String {
    let text = serde_json::to_string(value).unwrap_or_default();
    cut(&text, max)
}

/// `text` cut to `max` characters, saying how much was left out.
pub fn cut(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let head: String = text.chars().take(max).collect();
    format!("{head}… ({} more chars)", count - max)
}

/// The first place where `expected` and `actual` differ, as a path (`[2].event.outcome`) and
/// the two values there, or `None` when they are equal. Object key order does not matter.
pub fn first_difference(expected: &Value, actual: &Value) -> Option<(String, Value, Value)> {
    fn walk(path: &mut String, e: &Value, a: &Value) -> Option<(String, Value, Value)> {
        match (e, a) {
            (Value::Object(eo), Value::Object(ao)) => {
                for (k, ev) in eo {
                    let len = path.len();
                    path.push('.');
                    path.push_str(k);
                    let found = match ao.get(k) {
                        Some(av) => walk(path, ev, av),
                        None => Some((path.clone(), ev.clone(), Value::from("<absent>"))),
                    };
                    path.truncate(len);
                    if found.is_some() {
                        return found;
                    }
                }
                ao.iter()
                    .find(|(k, _)| !eo.contains_key(*k))
                    .map(|(k, av)| (format!("{path}.{k}"), Value::from("<absent>"), av.clone()))
            }
            (Value::Array(ea), Value::Array(aa)) => {
                for (i, (ev, av)) in ea.iter().zip(aa).enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    let found = walk(path, ev, av);
                    path.truncate(len);
                    if found.is_some() {
                        return found;
                    }
                }
                if ea.len() != aa.len() {
                    let i = ea.len().min(aa.len());
                    let missing = || Value::from("<absent>");
                    return Some((
                        format!("{path}[{i}]"),
                        ea.get(i).cloned().unwrap_or_else(missing),
                        aa.get(i).cloned().unwrap_or_else(missing),
                    ));
                }
                None
            }
            _ if e == a => None,
            _ => Some((path.clone(), e.clone(), a.clone())),
        }
    }
    walk(&mut String::new(), expected, actual)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn abbreviation_is_idempotent_and_short() {
        let long = "x".repeat(10_000);
        let once = abbreviate_str(&long);
        assert!(once.len() < 200);
        assert_eq!(abbreviate_str(&once), once);
        assert_ne!(abbreviate_str(&"y".repeat(10_000)), once);
    }

    #[test]
    fn first_difference_names_the_path() {
        let e = json!([{"a": 1, "b": [1, 2]}]);
        let a = json!([{"b": [1, 3], "a": 1}]);
        let (path, ev, av) = first_difference(&e, &a).unwrap();
        assert_eq!(path, "[0].b[1]");
        assert_eq!((ev, av), (json!(2), json!(3)));
        assert_eq!(first_difference(&e, &e), None);
        let (path, _, av) = first_difference(&json!([1]), &json!([1, 2])).unwrap();
        assert_eq!((path.as_str(), av), ("[1]", json!(2)));
    }
}
