//! How the schema's types serialize in the compact precompiled form
//! ([`crate::precompiled`], postcard) where that differs from readable formats such as
//! the JSON of `nidos schema show`.
//!
//! Postcard writes fields by position and cannot read self-describing data, so in the
//! compact form a field is never left out (the readable form omits a few empty ones) and
//! free-form JSON (`serde_json::Value` fields) travels as its JSON text.

use std::cell::Cell;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

thread_local! {
    static COMPACT: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with this thread writing the compact form.
pub(crate) fn writing<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            COMPACT.with(|c| c.set(self.0));
        }
    }
    let _reset = Reset(COMPACT.with(|c| c.replace(true)));
    f()
}

fn compact() -> bool {
    COMPACT.with(Cell::get)
}

/// `skip_serializing_if` for lists the readable form leaves out when empty.
pub(crate) fn skip_empty<T>(v: &[T]) -> bool {
    v.is_empty() && !compact()
}

/// `skip_serializing_if` for options the readable form leaves out when absent.
pub(crate) fn skip_none<T>(v: &Option<T>) -> bool {
    v.is_none() && !compact()
}

/// `#[serde(with = "crate::compact::json_text")]`: JSON as itself in readable formats,
/// as its text in compact ones.
pub(crate) mod json_text {
    use super::*;

    pub(crate) fn serialize<T: Serialize, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            v.serialize(s)
        } else {
            let text = serde_json::to_string(v).map_err(serde::ser::Error::custom)?;
            s.serialize_str(&text)
        }
    }

    pub(crate) fn deserialize<'de, T: DeserializeOwned, D: Deserializer<'de>>(
        d: D,
    ) -> Result<T, D::Error> {
        if d.is_human_readable() {
            T::deserialize(d)
        } else {
            let text = <&str>::deserialize(d)?;
            serde_json::from_str(text).map_err(serde::de::Error::custom)
        }
    }
}
