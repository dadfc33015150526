//! A member kept as its JSON text and typed only when asked: [`Lazy`].
//!
//! Every `message_update` of oh-my-pi and pi 0.73 carries the whole assistant message so far,
//! twice (`message`, and the event's `partial`), so typing both on every update makes a
//! streamed turn cost the square of its length. Nothing on the host path reads them (the
//! deltas say what changed), so the model keeps their text, found in one pass that checks it
//! as strictly as a typed read would, and types it when [`Lazy::get`] is called.

use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;

use super::message::AgentMessage;

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

/// One message of a [`MessageList`]: its JSON text as received, typed the first time it is
/// read; or a message made typed.
#[derive(Clone)]
struct LazyMessage {
    raw: Option<Box<RawValue>>,
    typed: OnceLock<AgentMessage>,
}

impl fmt::Debug for LazyMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.get(), f)
    }
}

impl LazyMessage {
    fn typed(message: AgentMessage) -> Self {
        LazyMessage {
            raw: None,
            typed: OnceLock::from(message),
        }
    }

    /// The message, typed at the first read. A message the model cannot type (a known role
    /// with members of another shape, or not an object) is [`AgentMessage::Unknown`] holding
    /// it as received, as a history walk keeps it (CALL-06, PAGE-07).
    fn get(&self) -> &AgentMessage {
        self.typed.get_or_init(|| {
            let text = self.raw.as_deref().map_or("null", RawValue::get);
            super::reader::from_str(text).unwrap_or_else(|_| {
                AgentMessage::Unknown(super::reader::from_str(text).unwrap_or(Value::Null))
            })
        })
    }

    fn into_message(mut self) -> AgentMessage {
        self.get();
        self.typed.take().unwrap_or_default()
    }
}

/// The messages of a history page (`get_messages`, `get_messages_page`): each kept as the
/// JSON text it was received as, checked as strictly as a typed read would check it, and
/// typed the first time it is read (by index, [`MessageList::iter`], a comparison, or when
/// written), so a host pays for the messages it reads, not for every message of every page
/// that passes it.
///
/// It reads as a list of [`AgentMessage`]s: `list[i]`, [`MessageList::iter`],
/// [`MessageList::into_vec`]. A message the model cannot type reads as
/// [`AgentMessage::Unknown`] holding it as received (CALL-06). It serialises as the typed
/// messages do.
#[derive(Clone, Default)]
pub struct MessageList {
    items: Vec<LazyMessage>,
}

impl MessageList {
    /// How many messages.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The message at `index`, typed.
    pub fn get(&self, index: usize) -> Option<&AgentMessage> {
        self.items.get(index).map(LazyMessage::get)
    }

    /// The JSON text the message at `index` was received as (in the model form), without
    /// typing it; `None` for a message made typed.
    pub fn json(&self, index: usize) -> Option<&str> {
        self.items.get(index)?.raw.as_deref().map(RawValue::get)
    }

    /// The messages, each typed as it is reached.
    pub fn iter(&self) -> Messages<'_> {
        Messages(self.items.iter())
    }

    /// The messages, typed.
    pub fn into_vec(self) -> Vec<AgentMessage> {
        self.items
            .into_iter()
            .map(LazyMessage::into_message)
            .collect()
    }

    /// Adds a typed message at the end.
    pub fn push(&mut self, message: AgentMessage) {
        self.items.push(LazyMessage::typed(message));
    }
}

impl From<Vec<AgentMessage>> for MessageList {
    fn from(messages: Vec<AgentMessage>) -> Self {
        messages.into_iter().collect()
    }
}

impl From<MessageList> for Vec<AgentMessage> {
    fn from(list: MessageList) -> Self {
        list.into_vec()
    }
}

impl FromIterator<AgentMessage> for MessageList {
    fn from_iter<I: IntoIterator<Item = AgentMessage>>(iter: I) -> Self {
        MessageList {
            items: iter.into_iter().map(LazyMessage::typed).collect(),
        }
    }
}

impl IntoIterator for MessageList {
    type Item = AgentMessage;
    type IntoIter = IntoMessages;

    fn into_iter(self) -> IntoMessages {
        IntoMessages(self.items.into_iter())
    }
}

/// The messages of a [`MessageList`], typed as they are taken.
#[derive(Debug)]
pub struct IntoMessages(std::vec::IntoIter<LazyMessage>);

impl Iterator for IntoMessages {
    type Item = AgentMessage;

    fn next(&mut self) -> Option<AgentMessage> {
        self.0.next().map(LazyMessage::into_message)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl ExactSizeIterator for IntoMessages {}

impl<'a> IntoIterator for &'a MessageList {
    type Item = &'a AgentMessage;
    type IntoIter = Messages<'a>;

    fn into_iter(self) -> Messages<'a> {
        self.iter()
    }
}

/// The messages of a [`MessageList`] by reference, each typed as it is reached.
#[derive(Debug, Clone)]
pub struct Messages<'a>(std::slice::Iter<'a, LazyMessage>);

impl<'a> Iterator for Messages<'a> {
    type Item = &'a AgentMessage;

    fn next(&mut self) -> Option<&'a AgentMessage> {
        self.0.next().map(LazyMessage::get)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Messages<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(LazyMessage::get)
    }
}

impl ExactSizeIterator for Messages<'_> {}

impl std::ops::Index<usize> for MessageList {
    type Output = AgentMessage;

    fn index(&self, index: usize) -> &AgentMessage {
        self.items[index].get()
    }
}

impl fmt::Debug for MessageList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for MessageList {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self.items.iter().zip(&other.items).all(|(a, b)| {
                let same_text =
                    matches!((&a.raw, &b.raw), (Some(x), Some(y)) if x.get() == y.get());
                same_text || a.get() == b.get()
            })
    }
}

impl PartialEq<Vec<AgentMessage>> for MessageList {
    fn eq(&self, other: &Vec<AgentMessage>) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a == b)
    }
}

impl Serialize for MessageList {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for MessageList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Vec::<Box<RawValue>>::deserialize(deserializer)?;
        Ok(MessageList {
            items: raw
                .into_iter()
                .map(|raw| LazyMessage {
                    raw: Some(raw),
                    typed: OnceLock::new(),
                })
                .collect(),
        })
    }
}
