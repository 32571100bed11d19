//! [`Raw`]: the whole resolved tree of a schema, read on first use.
//!
//! A validation run never reads most of the tree: its typed views, and the parts that
//! expressions reach through `schema` ([`crate::Schema::expr_sections`]), are enough. The
//! precompiled form (see [`crate::precompiled`]) therefore keeps the tree as JSON text,
//! parsed only when something asks for it (`nidos schema show`, the fixer, an upstream
//! schema's raw lookups).

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The whole resolved tree; dereferences to it.
pub struct Raw {
    value: OnceLock<Value>,
    /// The tree as JSON text, when it has not been parsed yet.
    text: Option<Arc<str>>,
}

impl Raw {
    /// A tree already in memory.
    pub fn new(value: Value) -> Raw {
        Raw {
            value: OnceLock::from(value),
            text: None,
        }
    }

    /// The tree (parsed now, if it was kept as text; text that does not parse, which
    /// only a damaged precompiled form could hold, reads as null).
    pub fn value(&self) -> &Value {
        self.value.get_or_init(|| {
            self.text
                .as_deref()
                .and_then(|t| serde_json::from_str(t).ok())
                .unwrap_or(Value::Null)
        })
    }

    /// The tree, owned.
    pub fn into_value(mut self) -> Value {
        match self.value.take() {
            Some(v) => v,
            None => self.value().clone(),
        }
    }
}

impl std::ops::Deref for Raw {
    type Target = Value;
    fn deref(&self) -> &Value {
        self.value()
    }
}

impl Clone for Raw {
    fn clone(&self) -> Raw {
        match (self.value.get(), &self.text) {
            (None, Some(text)) => Raw {
                value: OnceLock::new(),
                text: Some(text.clone()),
            },
            _ => Raw::new(self.value().clone()),
        }
    }
}

impl PartialEq for Raw {
    fn eq(&self, other: &Raw) -> bool {
        self.value() == other.value()
    }
}

impl fmt::Debug for Raw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value().fmt(f)
    }
}

/// Readable formats get the tree itself; compact ones its JSON text, kept unparsed
/// when read back.
impl Serialize for Raw {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            self.value().serialize(s)
        } else {
            let text = serde_json::to_string(self.value()).map_err(serde::ser::Error::custom)?;
            s.serialize_str(&text)
        }
    }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if d.is_human_readable() {
            Value::deserialize(d).map(Raw::new)
        } else {
            let text = String::deserialize(d)?;
            Ok(Raw {
                value: OnceLock::new(),
                text: Some(Arc::from(text)),
            })
        }
    }
}

/// The top-level keys of the tree that `exprs` read through the context's `schema`
/// (`schema.meta.versions` reads `meta`); `None` when one uses `schema` some other way
/// (`schema[k]`, `schema` alone), so the whole tree may be needed.
pub(crate) fn schema_sections<'e>(
    exprs: impl IntoIterator<Item = &'e nidos_expr::Expr>,
) -> Option<std::collections::BTreeSet<String>> {
    use nidos_expr::Expr;
    fn walk(e: &Expr, out: &mut std::collections::BTreeSet<String>) -> bool {
        match e {
            Expr::Member(obj, key) => match obj.as_ref() {
                Expr::Name(n) if n.as_ref() == "schema" => {
                    out.insert(key.to_string());
                    true
                }
                other => walk(other, out),
            },
            Expr::Name(n) => n.as_ref() != "schema",
            Expr::Literal(_) => true,
            Expr::Array(items) => items.iter().all(|x| walk(x, out)),
            Expr::Index(a, b) => walk(a, out) && walk(b, out),
            Expr::Call(c) => c.args.iter().all(|x| walk(x, out)),
        }
    }
    let mut out = std::collections::BTreeSet::new();
    for e in exprs {
        if !walk(e, &mut out) {
            return None;
        }
    }
    Some(out)
}
