//! The view of a file's context that rules see: the lookups that selectors index on
//! answered from precomputed keys, the rest from the file's context.

use crate::rule_index::KEYS;
use nidos_dataset::FileContext;
use nidos_expr::{Context, Object, Value};

/// The context as the rules after file identification see it: entities, extension or
/// suffix blank when the file's rule says nothing of them. The cheap scalar names are
/// computed once per file (every selector reads them).
pub(crate) struct Cleaned<'a, 'd> {
    inner: &'a FileContext<'d>,
    entities: bool,
    /// `path`, `suffix`, `extension`, `datatype`, `modality`, in [`KEY_NAMES`] order.
    path: Value,
    suffix: Value,
    extension: Value,
    datatype: Value,
    modality: Value,
}

impl<'a, 'd> Cleaned<'a, 'd> {
    pub(crate) fn new(
        inner: &'a FileContext<'d>,
        entities: bool,
        blank_extension: bool,
        blank_suffix: bool,
    ) -> Cleaned<'a, 'd> {
        Cleaned {
            inner,
            entities,
            path: inner.lookup("path"),
            suffix: if blank_suffix {
                Value::str("")
            } else {
                inner.lookup("suffix")
            },
            extension: if blank_extension {
                Value::str("")
            } else {
                inner.lookup("extension")
            },
            datatype: inner.lookup("datatype"),
            modality: inner.lookup("modality"),
        }
    }

    /// The values of [`KEY_NAMES`] as the selectors see them.
    pub(crate) fn index_keys(&self) -> [&Value; KEYS] {
        [
            &self.path,
            &self.suffix,
            &self.extension,
            &self.datatype,
            &self.modality,
        ]
    }
}

impl Context for Cleaned<'_, '_> {
    fn lookup(&self, name: &str) -> Value {
        if name == "entities" && self.entities {
            return Value::object(Object::new());
        }
        match self.lookup_ref(name) {
            Some(v) => v.clone(),
            None => self.inner.lookup(name),
        }
    }

    fn lookup_ref(&self, name: &str) -> Option<&Value> {
        match name {
            "entities" if self.entities => None,
            "path" => Some(&self.path),
            "suffix" => Some(&self.suffix),
            "extension" => Some(&self.extension),
            "datatype" => Some(&self.datatype),
            "modality" => Some(&self.modality),
            _ => self.inner.lookup_ref(name),
        }
    }

    fn exists(&self, rule: &str, path: &str) -> Option<bool> {
        self.inner.exists(rule, path)
    }

    fn names(&self) -> Vec<String> {
        self.inner.names()
    }
}
