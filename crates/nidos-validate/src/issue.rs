//! The issue model: what a validation run reports.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use nidos_schema::Severity;

/// A shared, immutable string: issue codes, sub-codes, rule ids and locations are
/// repeated across hundreds of thousands of issues, so each distinct text is stored once
/// and issues hold a reference-counted pointer to it. Compares, hashes, orders, prints and
/// serializes as the text itself.
#[derive(Clone, Eq)]
pub struct Sym(Arc<str>);

impl std::hash::Hash for Sym {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // As the text: equal texts hash equally (pointer equality implies text equality).
        (*self.0).hash(state)
    }
}

impl PartialEq for Sym {
    fn eq(&self, other: &Sym) -> bool {
        // Interned texts usually share one allocation: no byte comparison then.
        Arc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

impl Ord for Sym {
    fn cmp(&self, other: &Sym) -> Ordering {
        if Arc::ptr_eq(&self.0, &other.0) {
            Ordering::Equal
        } else {
            self.0.cmp(&other.0)
        }
    }
}

impl PartialOrd for Sym {
    fn partial_cmp(&self, other: &Sym) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A fast non-cryptographic hasher (FxHash's multiply-rotate) for the validator's
/// internal tables of short strings; input never chooses the table sizes.
#[derive(Default, Clone, Copy)]
pub(crate) struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0xf1357aea2e62a9c5;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.0 = (self.0.rotate_left(26) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(26) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }

    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }

    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(26) ^ i).wrapping_mul(0xf1357aea2e62a9c5);
    }

    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

pub(crate) type FastMap<K, V> =
    std::collections::HashMap<K, V, std::hash::BuildHasherDefault<FastHasher>>;
pub(crate) type FastSet<K> = HashSet<K, std::hash::BuildHasherDefault<FastHasher>>;

/// Distinct texts interned per thread before [`Sym::intern`] stops remembering new ones
/// (bounds the memory a hostile dataset can pin with made-up column names).
const INTERN_LIMIT: usize = 1 << 16;

thread_local! {
    static INTERNED: RefCell<FastSet<Arc<str>>> = RefCell::new(FastSet::default());
}

impl Sym {
    /// The shared copy of `s` for this thread (codes, sub-codes, rule ids: small sets of
    /// texts repeated many times). Threads intern separately, so a text may exist once
    /// per worker thread.
    pub fn intern(s: &str) -> Sym {
        INTERNED
            .try_with(|set| {
                let mut set = set.borrow_mut();
                if let Some(a) = set.get(s) {
                    return Sym(a.clone());
                }
                let a: Arc<str> = Arc::from(s);
                if set.len() < INTERN_LIMIT {
                    set.insert(a.clone());
                }
                Sym(a)
            })
            .unwrap_or_else(|_| Sym(Arc::from(s)))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Sym {
    fn default() -> Sym {
        Sym::intern("")
    }
}

impl std::ops::Deref for Sym {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Sym {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for Sym {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A fresh (not interned) copy: locations are shared by cloning one `Sym` per file.
impl From<&str> for Sym {
    fn from(s: &str) -> Sym {
        Sym(Arc::from(s))
    }
}

impl From<&String> for Sym {
    fn from(s: &String) -> Sym {
        Sym(Arc::from(s.as_str()))
    }
}

impl From<String> for Sym {
    fn from(s: String) -> Sym {
        Sym(Arc::from(s))
    }
}

impl From<&Sym> for Sym {
    fn from(s: &Sym) -> Sym {
        s.clone()
    }
}

impl From<Sym> for String {
    fn from(s: Sym) -> String {
        s.0.to_string()
    }
}

impl PartialEq<str> for Sym {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Sym {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for Sym {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<Sym> for String {
    fn eq(&self, other: &Sym) -> bool {
        **self == *other.0
    }
}

impl PartialEq<Sym> for str {
    fn eq(&self, other: &Sym) -> bool {
        *self == *other.0
    }
}

impl PartialEq<Sym> for &str {
    fn eq(&self, other: &Sym) -> bool {
        **self == *other.0
    }
}

impl Serialize for Sym {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Sym {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Sym, D::Error> {
        String::deserialize(d).map(Sym::from)
    }
}

/// One finding about one location of a dataset.
///
/// Compact: code, sub-code and rule id are interned ([`Sym::intern`]) and the location is
/// shared by all issues of one file, so an issue is one 128-byte struct whose only own
/// allocations are an occurrence-specific message and `affects`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Issue {
    /// The standard's issue code, e.g. `SIDECAR_KEY_REQUIRED`.
    pub code: Sym,
    /// A refinement of the code (often the metadata key or column concerned); empty when none.
    #[serde(default)]
    pub sub_code: Sym,
    pub severity: Severity,
    /// Dataset-relative path with a leading `/` (or `/` for the dataset as a whole).
    pub location: Sym,
    /// A message specific to this occurrence (the code's general message is in `codeMessages`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue_message: Option<Box<str>>,
    /// The schema path of the rule that raised it, e.g. `rules.sidecars.mri.MRIFieldmap`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<Sym>,
    /// 1-based line within the file, for table and JSON issues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// Other files the issue concerns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub affects: Vec<String>,
}

impl Issue {
    /// `code` is interned; `location` is taken as given (pass a `&Sym` to share one).
    pub fn new(code: impl AsRef<str>, severity: Severity, location: impl Into<Sym>) -> Issue {
        Issue {
            code: Sym::intern(code.as_ref()),
            sub_code: Sym::default(),
            severity,
            location: location.into(),
            issue_message: None,
            rule: None,
            line: None,
            affects: Vec::new(),
        }
    }

    /// Sets the sub-code (interned).
    #[allow(clippy::should_implement_trait)]
    pub fn sub(mut self, sub_code: impl AsRef<str>) -> Issue {
        self.sub_code = Sym::intern(sub_code.as_ref());
        self
    }

    pub fn message(mut self, message: impl Into<String>) -> Issue {
        self.issue_message = Some(message.into().into_boxed_str());
        self
    }

    /// Sets the rule id (interned).
    pub fn rule(mut self, rule: impl AsRef<str>) -> Issue {
        self.rule = Some(Sym::intern(rule.as_ref()));
        self
    }

    pub fn line(mut self, line: usize) -> Issue {
        self.line = Some(line);
        self
    }

    /// The deterministic report order: code, location, sub-code, line, then the rest
    /// (every field takes part, so only identical issues compare equal).
    pub fn sort_key_cmp(&self, other: &Issue) -> Ordering {
        (
            &self.code,
            &self.location,
            &self.sub_code,
            self.line,
            self.severity,
        )
            .cmp(&(
                &other.code,
                &other.location,
                &other.sub_code,
                other.line,
                other.severity,
            ))
            .then_with(|| self.issue_message.cmp(&other.issue_message))
            .then_with(|| self.rule.cmp(&other.rule))
            .then_with(|| self.affects.cmp(&other.affects))
    }
}

/// Sorts issues into report order and drops exact duplicates.
///
/// [`Issue::sort_key_cmp`] compares every field, so issues it finds equal are
/// identical and an unstable sort (no scratch copy) is deterministic.
pub fn normalize(issues: &mut Vec<Issue>) {
    issues.sort_unstable_by(Issue::sort_key_cmp);
    issues.dedup();
}
