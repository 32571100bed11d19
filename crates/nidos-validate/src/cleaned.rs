//! The view of a file's context that rules see: the lookups that selectors index on
//! answered from precomputed keys, the rest from the file's context.

use std::borrow::Cow;
use std::cell::Cell;

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
    /// What the rules read beyond the file and its own inputs ([`reads`] bits): an
    /// incremental run re-checks the file when one of those changes.
    reads: Cell<u8>,
}

/// The bits of [`Cleaned::reads`].
pub(crate) mod reads {
    /// The `dataset` object (description, subjects, datatypes, the file list's facts).
    pub const DATASET: u8 = 1;
    /// The `subject` object (sessions).
    pub const SUBJECT: u8 = 2;
    /// `exists()`: the presence of files anywhere in the dataset.
    pub const NAMES: u8 = 4;
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
            path: inner.lookup("path").into_owned(),
            suffix: if blank_suffix {
                Value::str("")
            } else {
                inner.lookup("suffix").into_owned()
            },
            extension: if blank_extension {
                Value::str("")
            } else {
                inner.lookup("extension").into_owned()
            },
            datatype: inner.lookup("datatype").into_owned(),
            modality: inner.lookup("modality").into_owned(),
            reads: Cell::new(0),
        }
    }

    /// The [`reads`] bits of the lookups made so far.
    pub(crate) fn reads(&self) -> u8 {
        self.reads.get()
    }

    fn note(&self, bit: u8) {
        self.reads.set(self.reads.get() | bit);
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
    fn lookup(&self, name: &str) -> Cow<'_, Value> {
        match name {
            "entities" if self.entities => Cow::Owned(Value::object(Object::default())),
            "path" => Cow::Borrowed(&self.path),
            "suffix" => Cow::Borrowed(&self.suffix),
            "extension" => Cow::Borrowed(&self.extension),
            "datatype" => Cow::Borrowed(&self.datatype),
            "modality" => Cow::Borrowed(&self.modality),
            "dataset" => {
                self.note(reads::DATASET);
                self.inner.lookup(name)
            }
            "subject" => {
                self.note(reads::SUBJECT);
                self.inner.lookup(name)
            }
            _ => self.inner.lookup(name),
        }
    }

    fn lookup_member(&self, name: &str, key: &str) -> Option<Cow<'_, Value>> {
        match name {
            "columns" => self.inner.lookup_member(name, key),
            _ => None,
        }
    }

    fn exists(&self, rule: &str, path: &str) -> Option<bool> {
        self.note(reads::NAMES);
        self.inner.exists(rule, path)
    }

    fn names(&self) -> Vec<String> {
        self.inner.names()
    }
}
