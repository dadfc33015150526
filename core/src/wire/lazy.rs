//! A member kept as its JSON text and typed only when asked: [`Lazy`].
//!
//! Every `message_update` of oh-my-pi and pi 0.73 carries the whole assistant message so far,
//! twice (`message`, and the event's `partial`), so typing both on every update makes a
//! streamed turn cost the square of its length. Nothing on the host path reads them (the
//! deltas say what changed), so the model keeps their text, found in one pass that checks it
//! as strictly as a typed read would, and types it when [`Lazy::get`] is called.

use std::fmt;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// A member of type `T` held as the JSON text it was received as (in the model form: a
/// lone surrogate as its stand-in, see [Lone surrogates](super#lone-surrogates)), typed by
/// [`Lazy::get`].
///
/// It serialises as its typed value does (so a frame, a transcript, writes exactly as when
/// the member was typed on arrival; as the text itself when it does not type), and two are
/// equal when their texts are, or else when their typed values are.
pub struct Lazy<T> {
    raw: Box<RawValue>,
    typed: PhantomData<fn() -> T>,
}

impl<T> Lazy<T> {
    /// The member's JSON text, in the model form.
    pub fn json(&self) -> &str {
        self.raw.get()
    }
}

impl<T: DeserializeOwned> Lazy<T> {
    /// The member, typed. Each call reads the text again: keep the result when it is needed
    /// twice.
    pub fn get(&self) -> serde_json::Result<T> {
        super::reader::from_str(self.raw.get())
    }
}

impl<T: Serialize> Lazy<T> {
    /// A member made from a typed value (its JSON in the model form).
    pub fn new(value: &T) -> serde_json::Result<Self> {
        let text = serde_json::to_string(value)?;
        Ok(Lazy {
            raw: RawValue::from_string(text)?,
            typed: PhantomData,
        })
    }
}

impl<T> Clone for Lazy<T> {
    fn clone(&self) -> Self {
        Lazy {
            raw: self.raw.clone(),
            typed: PhantomData,
        }
    }
}

impl<T> fmt::Debug for Lazy<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Lazy").field(&self.raw.get()).finish()
    }
}

impl<T: DeserializeOwned + PartialEq> PartialEq for Lazy<T> {
    fn eq(&self, other: &Self) -> bool {
        if self.raw.get() == other.raw.get() {
            return true;
        }
        match (self.get(), other.get()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}

impl<T: DeserializeOwned + Serialize> Serialize for Lazy<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.get() {
            Ok(value) => value.serialize(serializer),
            Err(_) => self.raw.serialize(serializer),
        }
    }
}

impl<'de, T> Deserialize<'de> for Lazy<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Lazy {
            raw: Box::<RawValue>::deserialize(deserializer)?,
            typed: PhantomData,
        })
    }
}
