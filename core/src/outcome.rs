//! How a `Result` field of an event serialises: `{"ok": …}` or `{"err": …}`.

use serde::Serialize;

/// Serialises `outcome` as `{"ok": VALUE}` or `{"err": ERROR}` (for `serialize_with`).
pub(crate) fn serialize_outcome<T: Serialize, E: Serialize, S: serde::Serializer>(
    outcome: &Result<T, E>,
    s: S,
) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    #[serde(rename_all = "snake_case")]
    enum Outcome<'a, T, E> {
        Ok(&'a T),
        Err(&'a E),
    }
    match outcome {
        Ok(v) => Outcome::<T, E>::Ok(v).serialize(s),
        Err(e) => Outcome::<T, E>::Err(e).serialize(s),
    }
}
