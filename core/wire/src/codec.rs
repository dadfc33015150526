//! The serde machinery shared by every wire type: open structs that keep unknown members,
//! and tagged enums that keep unknown tags (CALL-06), both without serde's `flatten`.
//!
//! `#[serde(flatten)]` buffers a whole object into an intermediate tree before it builds the
//! struct; on the decode benchmark that doubles the cost of a `get_messages` response. The
//! macros here instead generate one visitor per type that reads each member once: a known
//! member straight into its typed field, an unknown one into `extra` as a
//! [`serde_json::Value`]. A tagged enum reads members until it meets its tag (usually the
//! first), keeping the few members before it, then hands the rest of the same map to the
//! variant's struct. Nothing is parsed twice.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde_json::{Map, Value};

/// Members read before a tagged enum found its tag, in wire order.
pub(crate) type Prefix<'de> = Vec<(Cow<'de, str>, Value)>;

/// A member name, borrowed from the input when it holds no escapes.
pub(crate) struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// Deserializes a value taken from a [`Prefix`], with the map's error type.
pub(crate) fn from_prefix_value<T: serde::de::DeserializeOwned, E: de::Error>(
    value: Value,
) -> Result<T, E> {
    T::deserialize(value).map_err(E::custom)
}

/// Everything left of a map whose tag is unknown (or absent), as one JSON object: the
/// prefix, the tag when there was one, then the remaining members.
pub(crate) fn collect_unknown<'de, A: MapAccess<'de>>(
    prefix: Prefix<'de>,
    tag: Option<(&str, String)>,
    mut map: A,
) -> Result<Value, A::Error> {
    let mut object = Map::new();
    for (key, value) in prefix {
        object.insert(key.into_owned(), value);
    }
    if let Some((key, value)) = tag {
        object.insert(key.to_owned(), Value::String(value));
    }
    while let Some(key) = map.next_key::<String>()? {
        let value = map.next_value()?;
        object.insert(key, value);
    }
    Ok(Value::Object(object))
}

/// Reads members until `tag` is found with a string value; returns that value, or `None`
/// when the map ended first (then every member is in `prefix`). A tag already in the
/// prefix (a lenient re-read) is taken from there. The tag is borrowed from the input when
/// it holds no escapes.
pub(crate) fn find_tag<'de, A: MapAccess<'de>>(
    tag: &str,
    prefix: &mut Prefix<'de>,
    map: &mut A,
) -> Result<Option<Cow<'de, str>>, A::Error> {
    if let Some(pos) = prefix.iter().position(|(k, v)| k == tag && v.is_string()) {
        if let (_, Value::String(s)) = prefix.remove(pos) {
            return Ok(Some(Cow::Owned(s)));
        }
    }
    while let Some(key) = map.next_key_seed(KeySeed)? {
        if key == tag {
            match map.next_value_seed(TagSeed)? {
                TagValue::Str(s) => return Ok(Some(s)),
                TagValue::Other(value) => prefix.push((key, value)),
            }
        } else {
            let value: Value = map.next_value()?;
            prefix.push((key, value));
        }
    }
    Ok(None)
}

/// A tag member's value: a string (borrowed when possible), or anything else as a value.
enum TagValue<'de> {
    Str(Cow<'de, str>),
    Other(Value),
}

struct TagSeed;

impl<'de> DeserializeSeed<'de> for TagSeed {
    type Value = TagValue<'de>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(TagVisitor)
    }
}

struct TagVisitor;

impl<'de> Visitor<'de> for TagVisitor {
    type Value = TagValue<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(TagValue::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(TagValue::Str(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(TagValue::Str(Cow::Owned(v)))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(TagValue::Other(Value::Bool(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(TagValue::Other(Value::from(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(TagValue::Other(Value::from(v)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(TagValue::Other(Value::from(v)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(TagValue::Other(Value::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(TagValue::Other(Value::Null))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        use serde::Deserialize;
        Value::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(TagValue::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        use serde::Deserialize;
        Value::deserialize(de::value::MapAccessDeserializer::new(map)).map(TagValue::Other)
    }
}

/// A map access over an already-read JSON object, so that the entry points taking a
/// [`Value`] share the streaming code path.
pub(crate) struct ValueMap {
    iter: serde_json::map::IntoIter,
    value: Option<Value>,
}

impl ValueMap {
    pub(crate) fn new(map: Map<String, Value>) -> Self {
        ValueMap {
            iter: map.into_iter(),
            value: None,
        }
    }
}

impl<'de> MapAccess<'de> for ValueMap {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        match self.iter.next() {
            Some((key, value)) => {
                self.value = Some(value);
                seed.deserialize(Value::String(key)).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(value),
            None => Err(de::Error::custom("value is missing")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// `Deserialize` and `Serialize` for a type read and written as one JSON object through its
/// `from_entries` and `serialize_entries` (the records and unions below).
macro_rules! map_serde {
    ($name:ident) => {
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(concat!("an object (", stringify!($name), ")"))
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        map: A,
                    ) -> Result<$name, A::Error> {
                        $name::from_entries(Vec::new(), map)
                    }
                }
                deserializer.deserialize_map(V)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                if let Some(value) = $crate::codec::NotAnObject::not_an_object(self) {
                    return serde::Serialize::serialize(value, serializer);
                }
                let mut map = serializer.serialize_map(None)?;
                self.serialize_entries(&mut map)?;
                serde::ser::SerializeMap::end(map)
            }
        }
    };
}
pub(crate) use map_serde;

/// A member kept as received that is not an object (an `Unknown` message `7` inside a
/// history, say, which JSON.parse accepts): it serialises as itself, not as a map (CALL-06).
pub(crate) trait NotAnObject {
    /// The value, when the member is not an object.
    fn not_an_object(&self) -> Option<&Value> {
        None
    }
}

/// The type of a field declared `req` or `opt` in [`wire_struct!`].
macro_rules! wire_field_ty {
    (req $t:ty) => { $t };
    (opt $t:ty) => { Option<$t> };
}

/// Stores a member read from the map into its local slot.
macro_rules! wire_field_set {
    (req, $slot:ident, $wire:literal, $t:ty, $value:expr, $extra:ident) => {
        $slot = Some($value);
    };
    (opt, $slot:ident, $wire:literal, $t:ty, $value:expr, $extra:ident) => {
        // An explicit `null` for an optional member is kept as sent (in `extra`), so that
        // re-serialising gives the same JSON.
        match $value {
            Some(v) => $slot = Some(v),
            None => {
                $extra.insert($wire.to_owned(), serde_json::Value::Null);
            }
        }
    };
}

/// The type a member is read as: `T` for a required field, `Option<T>` for an optional one.
macro_rules! wire_read_ty {
    (req $t:ty) => { $t };
    (opt $t:ty) => { Option<$t> };
}

macro_rules! wire_field_finish {
    (req, $slot:ident, $wire:literal) => {
        match $slot {
            Some(v) => v,
            None => return Err(serde::de::Error::missing_field($wire)),
        }
    };
    (opt, $slot:ident, $wire:literal) => {
        $slot
    };
}

macro_rules! wire_field_write {
    (req, $map:ident, $wire:literal, $value:expr) => {
        serde::ser::SerializeMap::serialize_entry(&mut *$map, $wire, $value)?;
    };
    (opt, $map:ident, $wire:literal, $value:expr) => {
        if let Some(v) = $value {
            serde::ser::SerializeMap::serialize_entry(&mut *$map, $wire, v)?;
        }
    };
}

macro_rules! wire_field_is_set {
    (req, $value:expr) => {
        true
    };
    (opt, $value:expr) => {
        $value.is_some()
    };
}

/// An open struct: named members, each `req` (must be present) or `opt` (may be absent),
/// plus `extra`, every member this version does not know, kept in wire order (CALL-06).
///
/// Generates the struct, `Deserialize`, `Serialize`, and the two crate-private hooks the
/// tagged enums use: `from_entries(prefix, map)` and `serialize_entries(map)`.
macro_rules! wire_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $kind:ident $field:ident : $ty:ty = $wire:literal,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Default)]
        pub struct $name {
            $(
                $(#[$fmeta])*
                pub $field: $crate::codec::wire_field_ty!($kind $ty),
            )*
            /// Members this version does not know, kept as received and written back
            /// (CALL-06).
            pub extra: serde_json::Map<String, serde_json::Value>,
        }

        impl $name {
            /// Builds the struct from members already read (`prefix`) and the rest of the map.
            #[allow(unused_mut, unused_variables, clippy::needless_update)]
            pub(crate) fn from_entries<'de, A: serde::de::MapAccess<'de>>(
                prefix: $crate::codec::Prefix<'de>,
                mut map: A,
            ) -> Result<Self, A::Error> {
                $( let mut $field: Option<$ty> = None; )*
                let mut extra = serde_json::Map::new();
                for (key, value) in prefix {
                    match &*key {
                        $(
                            $wire => {
                                let v: $crate::codec::wire_read_ty!($kind $ty) =
                                    $crate::codec::from_prefix_value(value)?;
                                $crate::codec::wire_field_set!($kind, $field, $wire, $ty, v, extra);
                            }
                        )*
                        _ => {
                            extra.insert(key.into_owned(), value);
                        }
                    }
                }
                while let Some(key) = map.next_key_seed($crate::codec::KeySeed)? {
                    match &*key {
                        $(
                            $wire => {
                                let v: $crate::codec::wire_read_ty!($kind $ty) = map.next_value()?;
                                $crate::codec::wire_field_set!($kind, $field, $wire, $ty, v, extra);
                            }
                        )*
                        _ => {
                            let value: serde_json::Value = map.next_value()?;
                            extra.insert(key.into_owned(), value);
                        }
                    }
                }
                Ok($name {
                    $( $field: $crate::codec::wire_field_finish!($kind, $field, $wire), )*
                    extra,
                })
            }

            /// Whether `extra` holds `key` (a duplicate of the enclosing union's tag).
            #[allow(dead_code)]
            pub(crate) fn extra_has(&self, key: &str) -> bool {
                self.extra.contains_key(key)
            }

            /// Writes every member (known ones in declaration order, then `extra`).
            #[allow(unused_mut)]
            pub(crate) fn serialize_entries<M: serde::ser::SerializeMap>(
                &self,
                map: &mut M,
            ) -> Result<(), M::Error> {
                $( $crate::codec::wire_field_write!($kind, map, $wire, &self.$field); )*
                for (key, value) in &self.extra {
                    // A member both known and kept in `extra` (an explicit null that the
                    // caller later set) is written once, from the field.
                    let shadowed = match key.as_str() {
                        $( $wire => $crate::codec::wire_field_is_set!($kind, self.$field), )*
                        _ => false,
                    };
                    if !shadowed {
                        serde::ser::SerializeMap::serialize_entry(&mut *map, key, value)?;
                    }
                }
                Ok(())
            }
        }

        impl $crate::codec::NotAnObject for $name {}

        $crate::codec::map_serde!($name);
    };
}

/// A tagged union: the member `$tag` names the variant; an unknown (or absent) tag gives
/// `Unknown` holding every member as received (CALL-06).
///
/// Each variant's payload type provides `from_entries` and `serialize_entries` (a
/// [`wire_struct!`] or another `wire_enum!`). `group` variants take every tag their
/// payload enum lists in its `TAGS` and write their own tag.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident tag $tag:literal {
            $(
                $(#[$vmeta:meta])*
                $wire:literal => $variant:ident($ty:ty),
            )*
        }
        $(
            groups {
                $(
                    $(#[$gmeta:meta])*
                    $gvariant:ident($gty:ty),
                )*
            }
        )?
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        #[allow(clippy::large_enum_variant)]
        pub enum $name {
            $(
                $(#[$vmeta])*
                $variant($ty),
            )*
            $($(
                $(#[$gmeta])*
                $gvariant($gty),
            )*)?
            /// A member of this union this version does not know (unknown or missing tag):
            /// every member as received, tag included (CALL-06).
            Unknown(serde_json::Value),
        }

        impl $name {
            /// The wire tags this union knows (groups included).
            #[allow(dead_code)]
            pub fn is_known_tag(tag: &str) -> bool {
                match tag {
                    $( $wire => true, )*
                    _ => false $($( || <$gty>::is_known_tag(tag) )*)?,
                }
            }

            /// Builds the variant named `tag` from the members already read and the rest
            /// of the map.
            pub(crate) fn from_tag<'de, A: serde::de::MapAccess<'de>>(
                tag: std::borrow::Cow<'de, str>,
                prefix: $crate::codec::Prefix<'de>,
                map: A,
            ) -> Result<Self, A::Error> {
                Ok(match &*tag {
                    $(
                        $wire => {
                            let inner = <$ty>::from_entries(prefix, map)?;
                            if inner.extra_has($tag) {
                                // The tag twice: JSON.parse keeps the last one, which this
                                // streaming read cannot; `from_slice_lenient` re-reads it.
                                return Err(serde::de::Error::duplicate_field($tag));
                            }
                            $name::$variant(inner)
                        }
                    )*
                    $($(
                        t if <$gty>::is_known_tag(t) => $name::$gvariant(<$gty>::from_tag(tag, prefix, map)?),
                    )*)?
                    _ => $name::Unknown($crate::codec::collect_unknown(prefix, Some(($tag, tag.into_owned())), map)?),
                })
            }

            /// Reads members until the tag, then builds the variant.
            pub(crate) fn from_entries<'de, A: serde::de::MapAccess<'de>>(
                mut prefix: $crate::codec::Prefix<'de>,
                mut map: A,
            ) -> Result<Self, A::Error> {
                match $crate::codec::find_tag($tag, &mut prefix, &mut map)? {
                    Some(tag) => Self::from_tag(tag, prefix, map),
                    None => Ok($name::Unknown($crate::codec::collect_unknown(prefix, None, map)?)),
                }
            }

            /// Whether the variant's unknown members hold `key`.
            #[allow(dead_code)]
            pub(crate) fn extra_has(&self, key: &str) -> bool {
                match self {
                    $( $name::$variant(inner) => inner.extra_has(key), )*
                    $($( $name::$gvariant(inner) => inner.extra_has(key), )*)?
                    $name::Unknown(value) => value.get(key).is_some(),
                }
            }

            /// The wire tag (`None` for an `Unknown` member without a string tag).
            pub fn tag(&self) -> Option<&str> {
                match self {
                    $( $name::$variant(_) => Some($wire), )*
                    $($( $name::$gvariant(inner) => inner.tag(), )*)?
                    $name::Unknown(value) => value.get($tag).and_then(serde_json::Value::as_str),
                }
            }

            /// Writes the tag, then the variant's members.
            pub(crate) fn serialize_entries<M: serde::ser::SerializeMap>(
                &self,
                map: &mut M,
            ) -> Result<(), M::Error> {
                match self {
                    $(
                        $name::$variant(inner) => {
                            serde::ser::SerializeMap::serialize_entry(map, $tag, $wire)?;
                            inner.serialize_entries(map)
                        }
                    )*
                    $($( $name::$gvariant(inner) => inner.serialize_entries(map), )*)?
                    $name::Unknown(value) => $crate::codec::serialize_value_entries(value, map),
                }
            }
        }

        /// An empty `Unknown` member (`{}`), so that structs holding one can derive `Default`.
        impl Default for $name {
            fn default() -> Self {
                $name::Unknown(serde_json::Value::Object(serde_json::Map::new()))
            }
        }

        impl $crate::codec::NotAnObject for $name {
            fn not_an_object(&self) -> Option<&serde_json::Value> {
                match self {
                    $name::Unknown(value) if !value.is_object() => Some(value),
                    _ => None,
                }
            }
        }

        $crate::codec::map_serde!($name);
    };
}

/// Writes the members of an object kept as a [`Value`] (an `Unknown` member). A value that
/// is not an object (never produced by the parser) writes nothing.
pub(crate) fn serialize_value_entries<M: serde::ser::SerializeMap>(
    value: &Value,
    map: &mut M,
) -> Result<(), M::Error> {
    if let Value::Object(object) = value {
        for (key, value) in object {
            map.serialize_entry(key, value)?;
        }
    }
    Ok(())
}

/// The two hooks [`wire_enum!`] calls on a payload, for boxed payloads (see
/// [`boxed_hooks!`]).
pub(crate) trait BoxedHooks: Sized {
    fn from_entries<'de, A: MapAccess<'de>>(prefix: Prefix<'de>, map: A) -> Result<Self, A::Error>;
    fn serialize_entries<M: serde::ser::SerializeMap>(&self, map: &mut M) -> Result<(), M::Error>;
    fn extra_has(&self, key: &str) -> bool;
}

/// Implements [`BoxedHooks`] for `Box<T>` of each type given.
macro_rules! boxed_hooks {
    ($($t:ty),*) => {$(
        impl $crate::codec::BoxedHooks for Box<$t> {
            fn from_entries<'de, A: serde::de::MapAccess<'de>>(
                prefix: $crate::codec::Prefix<'de>,
                map: A,
            ) -> Result<Self, A::Error> {
                <$t>::from_entries(prefix, map).map(Box::new)
            }
            fn serialize_entries<M: serde::ser::SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
                (**self).serialize_entries(map)
            }
            fn extra_has(&self, key: &str) -> bool {
                (**self).extra_has(key)
            }
        }
    )*};
}

pub(crate) use {
    boxed_hooks, wire_enum, wire_field_finish, wire_field_is_set, wire_field_set, wire_field_ty,
    wire_field_write, wire_read_ty, wire_struct,
};
