//! The issue model: what a validation run reports.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use nidos_schema::Severity;

mod kind;
mod sort;
pub use sort::normalize;

/// A shared, immutable string: issue codes, sub-codes, rule ids and locations are
/// repeated across hundreds of thousands of issues, so each distinct text is stored once
/// and issues hold a reference-counted pointer to it. Compares, hashes, orders, prints and
/// serializes as the text itself.
///
/// One pointer wide (the shared box holds the text's pointer and length), so an issue's
/// four texts cost 32 bytes.
#[derive(Clone, Eq)]
pub struct Sym(Arc<Box<str>>);

impl std::hash::Hash for Sym {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // As the text: equal texts hash equally (pointer equality implies text equality).
        self.as_str().hash(state)
    }
}

impl PartialEq for Sym {
    fn eq(&self, other: &Sym) -> bool {
        // Interned texts usually share one allocation: no byte comparison then.
        Arc::ptr_eq(&self.0, &other.0) || self.as_str() == other.as_str()
    }
}

impl Ord for Sym {
    fn cmp(&self, other: &Sym) -> Ordering {
        if Arc::ptr_eq(&self.0, &other.0) {
            Ordering::Equal
        } else {
            self.as_str().cmp(other.as_str())
        }
    }
}

impl PartialOrd for Sym {
    fn partial_cmp(&self, other: &Sym) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Hash maps and sets of the validator's tables (interned texts, rule index, used
/// sidecars, checked values…): foldhash's, fast on short strings and seeded per map, so
/// names in a dataset cannot be chosen to collide.
pub(crate) use foldhash::{HashMap as FastMap, HashSet as FastSet};

/// Distinct texts interned per thread before [`Sym::intern`] stops remembering new ones
/// (bounds the memory a hostile dataset can pin with made-up column names).
const INTERN_LIMIT: usize = 1 << 16;

thread_local! {
    static INTERNED: RefCell<FastSet<Sym>> = RefCell::new(FastSet::default());
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
                    return a.clone();
                }
                let a = Sym::from(s);
                if set.len() < INTERN_LIMIT {
                    set.insert(a.clone());
                }
                a
            })
            .unwrap_or_else(|_| Sym::from(s))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether both are the same shared copy (then their texts are equal).
    pub(crate) fn same(&self, other: &Sym) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The empty text, one copy for the whole process (every issue without a sub-code
/// holds it).
static EMPTY: std::sync::LazyLock<Sym> = std::sync::LazyLock::new(|| Sym::from(""));

impl Default for Sym {
    fn default() -> Sym {
        EMPTY.clone()
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
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A fresh (not interned) copy: locations are shared by cloning one `Sym` per file.
impl From<&str> for Sym {
    fn from(s: &str) -> Sym {
        Sym(Arc::new(Box::from(s)))
    }
}

impl From<&String> for Sym {
    fn from(s: &String) -> Sym {
        Sym::from(s.as_str())
    }
}

impl From<String> for Sym {
    fn from(s: String) -> Sym {
        Sym(Arc::new(s.into_boxed_str()))
    }
}

impl From<&Sym> for Sym {
    fn from(s: &Sym) -> Sym {
        s.clone()
    }
}

impl From<Sym> for String {
    fn from(s: Sym) -> String {
        s.as_str().to_string()
    }
}

impl PartialEq<str> for Sym {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Sym {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Sym {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<Sym> for String {
    fn eq(&self, other: &Sym) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<Sym> for str {
    fn eq(&self, other: &Sym) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Sym> for &str {
    fn eq(&self, other: &Sym) -> bool {
        *self == other.as_str()
    }
}

impl Serialize for Sym {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Sym {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Sym, D::Error> {
        String::deserialize(d).map(Sym::from)
    }
}

/// One finding about one location of a dataset.
///
/// Compact: code, sub-code and rule id are interned ([`Sym::intern`]) and held together
/// by one shared pointer (one per distinct triple and thread, `kind.rs`), the location is
/// shared by all issues of one file; the occurrence-specific parts that few issues have
/// (a message, a line, other files concerned) live in one optional box. An issue is 32
/// bytes with no allocation of its own in the common case.
#[derive(Clone, Debug)]
pub struct Issue {
    /// Code, sub-code and rule id: [`Issue::code`], [`Issue::sub_code`], [`Issue::rule_id`].
    kind: Arc<kind::Kind>,
    pub severity: Severity,
    /// Dataset-relative path with a leading `/` (or `/` for the dataset as a whole).
    pub location: Sym,
    /// Message, line and affected files, when the issue has any of them.
    pub extra: Option<Box<IssueExtra>>,
    /// The rule that raised it declares an automatic fix (`nidos fix` can repair it).
    /// Follows from the rule and code, so it takes no part in equality or order.
    pub fixable: bool,
    /// When `location` is the path of a dataset's file: that file's position in path
    /// order, plus one (0: not known). Two issues that both have one order by it as by
    /// their paths, without comparing the texts (report sorting).
    pub(crate) rank: u32,
}

/// Equal issues: every reported field equal (`rank` only restates `location`).
impl PartialEq for Issue {
    fn eq(&self, other: &Issue) -> bool {
        (Arc::ptr_eq(&self.kind, &other.kind) || self.kind == other.kind)
            && self.severity == other.severity
            && self.location == other.location
            // The line first: issues of one table and code often differ only in it, while
            // their messages differ only at the end.
            && self.line_number() == other.line_number()
            && self.extra == other.extra
    }
}

impl Eq for Issue {}

/// The report form of an issue: one flat object, keys in this order.
#[derive(Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    bound(serialize = "S: Serialize, M: Serialize, A: Serialize + AsRef<[String]>")
)]
struct IssueRepr<S, M, A> {
    code: S,
    #[serde(default)]
    sub_code: S,
    severity: Severity,
    location: S,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    issue_message: Option<M>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rule: Option<S>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
    #[serde(default, skip_serializing_if = "is_empty_list")]
    affects: A,
    #[serde(default, skip_serializing_if = "is_false")]
    fixable: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_empty_list<A: AsRef<[String]>>(a: &A) -> bool {
    a.as_ref().is_empty()
}

impl Serialize for Issue {
    fn serialize<Ser: serde::Serializer>(&self, s: Ser) -> Result<Ser::Ok, Ser::Error> {
        IssueView {
            issue: self,
            fallback_message: None,
        }
        .serialize(s)
    }
}

/// An issue as the report writes it, with a message for when it has none of its own
/// (the field description of a missing key, shared by all such issues).
pub struct IssueView<'a> {
    pub issue: &'a Issue,
    pub fallback_message: Option<&'a str>,
}

impl Serialize for IssueView<'_> {
    fn serialize<Ser: serde::Serializer>(&self, s: Ser) -> Result<Ser::Ok, Ser::Error> {
        let issue = self.issue;
        IssueRepr {
            code: issue.code(),
            sub_code: issue.sub_code(),
            severity: issue.severity,
            location: &issue.location,
            issue_message: issue.issue_message().or(self.fallback_message),
            rule: issue.rule_id(),
            line: issue.line_number(),
            affects: issue.affects(),
            fixable: issue.fixable,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Issue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Issue, D::Error> {
        let r = IssueRepr::<Sym, String, Vec<String>>::deserialize(d)?;
        let mut issue = Issue::new(&r.code, r.severity, r.location).sub(&r.sub_code);
        if let Some(rule) = r.rule {
            issue = issue.rule(rule);
        }
        issue.fixable = r.fixable;
        if let Some(m) = r.issue_message {
            issue = issue.message(m);
        }
        if let Some(l) = r.line {
            issue = issue.line(l);
        }
        if !r.affects.is_empty() {
            issue.extra_mut().affects = r.affects;
        }
        Ok(issue)
    }
}

/// The rarer parts of an [`Issue`].
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IssueExtra {
    /// A message specific to this occurrence (the code's general message is in `codeMessages`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue_message: Option<Box<str>>,
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
            kind: kind::kind(&Sym::intern(code.as_ref()), &Sym::default(), None),
            severity,
            location: location.into(),
            extra: None,
            fixable: false,
            rank: 0,
        }
    }

    /// An issue of texts already shared (a prepared rule's code, field name and id): only
    /// their triple is looked up.
    pub(crate) fn of_parts(
        (code, sub_code, rule): (&Sym, &Sym, Option<&Sym>),
        severity: Severity,
        location: Sym,
    ) -> Issue {
        Issue {
            kind: kind::kind(code, sub_code, rule),
            severity,
            location,
            extra: None,
            fixable: false,
            rank: 0,
        }
    }

    /// Sets the sub-code (interned).
    #[allow(clippy::should_implement_trait)]
    pub fn sub(mut self, sub_code: impl AsRef<str>) -> Issue {
        self.set_sub_code(sub_code);
        self
    }

    /// Replaces the sub-code (interned).
    pub fn set_sub_code(&mut self, sub_code: impl AsRef<str>) {
        let k = &self.kind;
        self.kind = kind::kind(&k.code, &Sym::intern(sub_code.as_ref()), k.rule.as_ref());
    }

    /// The standard's issue code, e.g. `SIDECAR_KEY_REQUIRED`.
    pub fn code(&self) -> &Sym {
        &self.kind.code
    }

    /// A refinement of the code (often the metadata key or column concerned); empty when
    /// none.
    pub fn sub_code(&self) -> &Sym {
        &self.kind.sub_code
    }

    /// The schema path of the rule that raised it, e.g. `rules.sidecars.mri.MRIFieldmap`.
    pub fn rule_id(&self) -> Option<&Sym> {
        self.kind.rule.as_ref()
    }

    /// The identity of this issue's code, sub-code and rule together: issues with equal
    /// identities have equal triples (the converse need not hold). Stays valid while the
    /// issue lives; reading it touches no shared counter.
    pub(crate) fn kind_id(&self) -> usize {
        Arc::as_ptr(&self.kind) as usize
    }

    pub fn message(mut self, message: impl Into<String>) -> Issue {
        self.extra_mut().issue_message = Some(message.into().into_boxed_str());
        self
    }

    /// Sets the rule id (interned).
    pub fn rule(mut self, rule: impl AsRef<str>) -> Issue {
        let k = &self.kind;
        self.kind = kind::kind(&k.code, &k.sub_code, Some(&Sym::intern(rule.as_ref())));
        self
    }

    pub fn line(mut self, line: usize) -> Issue {
        self.extra_mut().line = Some(line);
        self
    }

    /// The occurrence-specific message, if any.
    pub fn issue_message(&self) -> Option<&str> {
        self.extra.as_ref().and_then(|e| e.issue_message.as_deref())
    }

    /// The 1-based line, if any.
    pub fn line_number(&self) -> Option<usize> {
        self.extra.as_ref().and_then(|e| e.line)
    }

    /// Other files the issue concerns.
    pub fn affects(&self) -> &[String] {
        self.extra.as_ref().map_or(&[], |e| e.affects.as_slice())
    }

    /// The rarer parts, created on first use.
    pub fn extra_mut(&mut self) -> &mut IssueExtra {
        self.extra.get_or_insert_with(Box::default)
    }

    /// The deterministic report order: code, location, sub-code, line, then the rest
    /// (every field takes part, so only identical issues compare equal).
    pub fn sort_key_cmp(&self, other: &Issue) -> Ordering {
        self.cmp_in_report(other, true)
    }

    /// The report order; with `ranks`, two issues that both carry their file's rank
    /// (issues of one walk) compare locations by it, without reading the texts;
    /// otherwise (issues of two walks of a changed dataset, whose ranks differ) by the
    /// locations' texts, which order the same way.
    pub fn cmp_in_report(&self, other: &Issue, ranks: bool) -> Ordering {
        self.code()
            .cmp(other.code())
            .then_with(|| match (self.rank, other.rank) {
                (a, b) if ranks && a != 0 && b != 0 => a.cmp(&b),
                _ => self.location.cmp(&other.location),
            })
            .then_with(|| {
                (self.sub_code(), self.line_number(), self.severity).cmp(&(
                    other.sub_code(),
                    other.line_number(),
                    other.severity,
                ))
            })
            .then_with(|| self.issue_message().cmp(&other.issue_message()))
            .then_with(|| self.rule_id().cmp(&other.rule_id()))
            .then_with(|| self.affects().cmp(other.affects()))
    }
}
