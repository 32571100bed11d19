//! How an expression reads the world: the root scope, resolved through a trait so a
//! file's context can be built lazily (only the parts an expression touches).

use std::borrow::Cow;

use crate::value::{Object, Value};

/// The root scope an expression is evaluated against.
///
/// `lookup` is called with the first name of a path (`sidecar` in `sidecar.EchoTime`);
/// the interpreter walks the rest. Implementations may compute parts on first use.
pub trait Context {
    /// The value bound to a root name; `Value::Null` when the name is unbound. A context
    /// that keeps the value lends it (`Cow::Borrowed`), one that makes it for the call
    /// gives it away (`Cow::Owned`). Lending spares the evaluator a reference-count
    /// update per lookup on values that many threads share (the dataset, shared
    /// sidecars).
    fn lookup(&self, name: &str) -> Cow<'_, Value>;

    /// `name.key` (`columns.onset`), answered without making the whole of `name` when
    /// the context can: a table's `columns` object is made one column at a time. `None`
    /// (the default) means: look `name` up and read its member. An answer must equal
    /// that member (null when `name` is not an object or lacks `key`).
    fn lookup_member(&self, _name: &str, _key: &str) -> Option<Cow<'_, Value>> {
        None
    }

    /// Backs the `exists(paths, rule)` function: whether one path exists under a rule
    /// (`dataset`, `subject`, `stimuli`, `file`, or `<scheme>-uri` such as `std-uri`/`bids-uri`).
    /// `None` means the rule is unknown or the context has no file tree.
    fn exists(&self, _rule: &str, _path: &str) -> Option<bool> {
        None
    }

    /// The root names this context can bind (for completion and display).
    fn names(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A context backed by a fixed object (the `--context FILE.json` form, and tests).
#[derive(Clone, Debug, Default)]
pub struct ObjectContext {
    pub root: Object,
}

impl ObjectContext {
    pub fn new(root: Object) -> Self {
        Self { root }
    }

    /// Builds a context from a JSON value; anything but an object gives an empty scope.
    pub fn from_json(v: &serde_json::Value) -> Self {
        match Value::from(v) {
            Value::Object(o) => Self { root: (*o).clone() },
            _ => Self::default(),
        }
    }
}

impl Context for ObjectContext {
    fn lookup(&self, name: &str) -> Cow<'_, Value> {
        match self.root.get(name) {
            Some(v) => Cow::Borrowed(v),
            None => Cow::Owned(Value::Null),
        }
    }

    fn names(&self) -> Vec<String> {
        self.root.keys().cloned().collect()
    }
}

/// The empty context.
impl Context for () {
    fn lookup(&self, _name: &str) -> Cow<'_, Value> {
        Cow::Owned(Value::Null)
    }
}
