//! The issue model: what a validation run reports.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use nidos_schema::Severity;

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
/// Compact: code, sub-code and rule id are interned ([`Sym::intern`]) and the location is
/// shared by all issues of one file; the occurrence-specific parts that few issues have
/// (a message, a line, other files concerned) live in one optional box. An issue is 48
/// bytes with no allocation of its own in the common case.
#[derive(Clone, Debug)]
pub struct Issue {
    /// The standard's issue code, e.g. `SIDECAR_KEY_REQUIRED`.
    pub code: Sym,
    /// A refinement of the code (often the metadata key or column concerned); empty when none.
    pub sub_code: Sym,
    pub severity: Severity,
    /// Dataset-relative path with a leading `/` (or `/` for the dataset as a whole).
    pub location: Sym,
    /// The schema path of the rule that raised it, e.g. `rules.sidecars.mri.MRIFieldmap`.
    pub rule: Option<Sym>,
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
        self.code == other.code
            && self.sub_code == other.sub_code
            && self.severity == other.severity
            && self.location == other.location
            && self.rule == other.rule
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
            code: &issue.code,
            sub_code: &issue.sub_code,
            severity: issue.severity,
            location: &issue.location,
            issue_message: issue.issue_message().or(self.fallback_message),
            rule: issue.rule.as_ref(),
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
        let mut issue = Issue::new(&r.code, r.severity, r.location);
        issue.sub_code = r.sub_code;
        issue.rule = r.rule;
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
            code: Sym::intern(code.as_ref()),
            sub_code: Sym::default(),
            severity,
            location: location.into(),
            rule: None,
            extra: None,
            fixable: false,
            rank: 0,
        }
    }

    /// Sets the sub-code (interned).
    #[allow(clippy::should_implement_trait)]
    pub fn sub(mut self, sub_code: impl AsRef<str>) -> Issue {
        self.sub_code = Sym::intern(sub_code.as_ref());
        self
    }

    pub fn message(mut self, message: impl Into<String>) -> Issue {
        self.extra_mut().issue_message = Some(message.into().into_boxed_str());
        self
    }

    /// Sets the rule id (interned).
    pub fn rule(mut self, rule: impl AsRef<str>) -> Issue {
        self.rule = Some(Sym::intern(rule.as_ref()));
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
        self.code
            .cmp(&other.code)
            .then_with(|| match (self.rank, other.rank) {
                (0, _) | (_, 0) => self.location.cmp(&other.location),
                (a, b) => a.cmp(&b),
            })
            .then_with(|| {
                (&self.sub_code, self.line_number(), self.severity).cmp(&(
                    &other.sub_code,
                    other.line_number(),
                    other.severity,
                ))
            })
            .then_with(|| self.issue_message().cmp(&other.issue_message()))
            .then_with(|| self.rule.cmp(&other.rule))
            .then_with(|| self.affects().cmp(other.affects()))
    }
}

/// Sorts issues into report order and drops exact duplicates.
///
/// [`Issue::sort_key_cmp`] compares every field, so issues it finds equal are
/// identical and an unstable sort (no scratch copy) is deterministic.
///
/// The sort works on precomputed keys: each issue's code, location and sub-code are
/// replaced by their position among the distinct texts of the report, so most
/// comparisons are two integer comparisons and only issues whose keys tie (same code,
/// location, sub-code, line and severity) are compared field by field. The issues are
/// then moved into that order in place.
pub fn normalize(issues: &mut Vec<Issue>) {
    match sort_keys(issues) {
        Some(mut keys) => {
            use rayon::slice::ParallelSliceMut;
            let list: &[Issue] = issues;
            let by_key = |a: &SortKey, b: &SortKey| {
                let (a, b) = (*a, *b);
                (a.major, a.minor)
                    .cmp(&(b.major, b.minor))
                    .then_with(|| list[a.index as usize].sort_key_cmp(&list[b.index as usize]))
            };
            if keys.len() >= PARALLEL_SORT_MIN {
                keys.par_sort_unstable_by(by_key);
            } else {
                // Grouped by code first (a stable counting pass: reports have few codes),
                // then each group by the merge sort, which finds the runs already in order
                // (a file's issues of one code come together, a table's row issues line by
                // line, files in path order) and merges them instead of sorting anew. The
                // order is total, so stable or not gives the same result.
                keys = by_code(keys);
                let mut start = 0;
                while start < keys.len() {
                    let code = keys[start].major >> CODE_SHIFT;
                    let len = keys[start..]
                        .iter()
                        .take_while(|k| k.major >> CODE_SHIFT == code)
                        .count();
                    keys[start..start + len].sort_by(by_key);
                    start += len;
                }
            }
            // Exact duplicates are neighbours with equal keys: only those are compared.
            let duplicate: Vec<bool> = std::iter::once(false)
                .chain(keys.windows(2).map(|w| {
                    let (a, b) = (w[0], w[1]);
                    (a.major, a.minor) == (b.major, b.minor)
                        && list[a.index as usize] == list[b.index as usize]
                }))
                .take(keys.len())
                .collect();
            let mut order: Vec<u32> = keys.into_iter().map(|k| k.index).collect();
            permute(issues, &mut order);
            let mut at = 0;
            issues.retain(|_| {
                let keep = !duplicate.get(at).copied().unwrap_or(false);
                at += 1;
                keep
            });
        }
        None => {
            issues.sort_unstable_by(Issue::sort_key_cmp);
            issues.dedup();
        }
    }
}

/// Where the code's rank starts in [`SortKey::major`].
const CODE_SHIFT: u32 = 40;

/// `keys` grouped by code rank, keeping their order within a code (counting sort).
fn by_code(keys: Vec<SortKey>) -> Vec<SortKey> {
    let codes = keys
        .iter()
        .map(|k| (k.major >> CODE_SHIFT) as usize + 1)
        .max()
        .unwrap_or(0);
    let mut next = vec![0usize; codes + 1];
    for k in &keys {
        next[(k.major >> CODE_SHIFT) as usize + 1] += 1;
    }
    for c in 1..next.len() {
        next[c] += next[c - 1];
    }
    let mut out = keys.clone();
    for k in keys {
        let slot = &mut next[(k.major >> CODE_SHIFT) as usize];
        out[*slot] = k;
        *slot += 1;
    }
    out
}

/// Below this many issues the key sort runs on the calling thread.
const PARALLEL_SORT_MIN: usize = 1 << 17;

/// An issue's place in report order as two integers, and its index.
///
/// `major`: the code's rank among the report's distinct codes (high 24 bits), then the
/// location's rank among its distinct locations (low 40 bits). `minor`: the sub-code's
/// rank (high 24 bits), the line plus one or 0 for none (next 38 bits), the severity (low
/// 2 bits). Equal keys mean these fields are equal; the remaining fields decide.
///
/// Packed to 4-byte alignment: 20 bytes instead of 24 (one key per issue: millions in a
/// large report). Fields are only ever read by value.
#[derive(Clone, Copy)]
#[repr(C, packed(4))]
struct SortKey {
    major: u64,
    minor: u64,
    index: u32,
}

/// The ranks of a set of texts: each distinct text once, then numbered in text order.
struct Ranks<'a> {
    ids: FastMap<&'a str, u32>,
    /// The previous issue's text and its id (issues of one file come in runs, so most
    /// look-ups are a pointer comparison).
    last: Option<(&'a Sym, u32)>,
    texts: Vec<&'a str>,
}

impl<'a> Ranks<'a> {
    fn new() -> Ranks<'a> {
        Ranks {
            ids: FastMap::default(),
            last: None,
            texts: Vec::new(),
        }
    }

    /// A provisional id for `s` (its order of first appearance).
    fn id(&mut self, s: &'a Sym) -> u32 {
        if let Some((prev, id)) = self.last {
            if Arc::ptr_eq(&prev.0, &s.0) {
                return id;
            }
        }
        let next = self.texts.len() as u32;
        let id = *self.ids.entry(s.as_str()).or_insert(next);
        if id == next {
            self.texts.push(s.as_str());
        }
        self.last = Some((s, id));
        id
    }

    /// Maps each provisional id to the text's rank in sorted order.
    fn ranks(&self) -> Vec<u64> {
        let mut order: Vec<u32> = (0..self.texts.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| self.texts[a as usize].cmp(self.texts[b as usize]));
        let mut rank = vec![0u64; order.len()];
        for (r, &id) in order.iter().enumerate() {
            rank[id as usize] = r as u64;
        }
        rank
    }
}

/// The sort keys of `issues`, or `None` when a field does not fit its bits (the caller
/// then sorts with [`Issue::sort_key_cmp`] directly).
///
/// Ranking locations by text gives the order of [`Issue::sort_key_cmp`], which compares
/// two ranked issues by rank instead: an issue is ranked only when its location is its
/// file's path, and rank order is path order.
fn sort_keys(issues: &[Issue]) -> Option<Vec<SortKey>> {
    const SMALL: usize = 32;
    if issues.len() < SMALL || u32::try_from(issues.len()).is_err() {
        return None;
    }
    // First pass: the keys with each text's provisional id (order of first appearance)
    // where its rank goes; the second pass replaces the ids by ranks. (No separate list of
    // ids: the keys are the one per-issue allocation.)
    let mut codes = Ranks::new();
    let mut locations = Ranks::new();
    let mut subs = Ranks::new();
    let mut keys = Vec::with_capacity(issues.len());
    for (index, issue) in issues.iter().enumerate() {
        let line = match issue.line_number() {
            None => 0,
            Some(n) => (n as u64).checked_add(1)?,
        };
        if line >= 1 << 38 {
            return None;
        }
        let severity = match issue.severity {
            Severity::Error => 0,
            Severity::Warning => 1,
            Severity::Ignore => 2,
        };
        let (c, l, s) = (
            u64::from(codes.id(&issue.code)),
            u64::from(locations.id(&issue.location)),
            u64::from(subs.id(&issue.sub_code)),
        );
        if c >= 1 << 24 || s >= 1 << 24 {
            return None;
        }
        keys.push(SortKey {
            major: c << 40 | l,
            minor: s << 40 | line << 2 | severity,
            index: index as u32,
        });
    }
    let (code_rank, location_rank, sub_rank) = (codes.ranks(), locations.ranks(), subs.ranks());
    const LOW40: u64 = (1 << 40) - 1;
    for key in &mut keys {
        let (major, minor) = (key.major, key.minor);
        let rank = |ranks: &[u64], id: u64| ranks.get(id as usize).copied().unwrap_or(0);
        key.major = rank(&code_rank, major >> 40) << 40 | rank(&location_rank, major & LOW40);
        key.minor = rank(&sub_rank, minor >> 40) << 40 | (minor & LOW40);
    }
    Some(keys)
}

/// Reorders `items` so that position `k` holds the item that was at `order[k]`
/// (`order` is a permutation of the indices; it is used up as scratch). In place: each
/// cycle of the permutation is walked once with swaps.
fn permute<T>(items: &mut [T], order: &mut [u32]) {
    for start in 0..order.len() {
        let mut cur = start;
        loop {
            let next = order[cur] as usize;
            order[cur] = cur as u32;
            if next == start || next == cur || next >= items.len() {
                break;
            }
            items.swap(cur, next);
            cur = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift), so the cases repeat run to run.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self, below: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % below as u64) as usize
        }
    }

    /// Issues drawn from small pools of texts, so many share fields or are duplicates;
    /// locations that are "files" carry their rank, some issues at a file do not.
    fn issues(n: usize, seed: u64) -> Vec<Issue> {
        let mut g = Gen(seed);
        let codes = ["HED_WARNING", "A_CODE", "EMPTY_FILE", "Z", "HED_ERROR"];
        let files: Vec<String> = (0..40).map(|i| format!("/sub-{i:02}/f.tsv")).collect();
        let subs = ["", "value", "onset", "SIDECAR_KEY_MISSING"];
        let severities = [Severity::Error, Severity::Warning, Severity::Ignore];
        (0..n)
            .map(|_| {
                let f = g.next(files.len() + 2);
                let location = match f {
                    f if f < files.len() => files[f].clone(),
                    f if f == files.len() => "/".to_string(),
                    _ => "/dataset_description.json".to_string(),
                };
                let mut issue = Issue::new(
                    codes[g.next(codes.len())],
                    severities[g.next(severities.len())],
                    location,
                )
                .sub(subs[g.next(subs.len())]);
                if f < files.len() && g.next(4) > 0 {
                    issue.rank = f as u32 + 1;
                }
                if g.next(2) == 0 {
                    issue = issue.line(g.next(30));
                }
                match g.next(5) {
                    0 => issue = issue.message(format!("m{}", g.next(3))),
                    1 => issue = issue.rule(["rules.a", "rules.b"][g.next(2)]),
                    2 => issue.extra_mut().affects = vec![format!("/x{}", g.next(2))],
                    _ => {}
                }
                issue
            })
            .collect()
    }

    fn reference(mut list: Vec<Issue>) -> Vec<Issue> {
        list.sort_by(Issue::sort_key_cmp);
        list.dedup();
        list
    }

    /// The keyed sort gives the comparison sort's sequence: below and above the size
    /// where keys are used and where the sort goes parallel.
    #[test]
    fn keyed_sort_is_the_comparison_sort() {
        for (n, seed) in [(0, 1), (5, 2), (31, 3), (32, 4), (500, 5), (20_000, 6)] {
            let list = issues(n, seed);
            // Already in order, and in order but for the codes (runs to merge).
            let sorted = reference(list.clone());
            let mut got = sorted.clone();
            normalize(&mut got);
            assert!(got == sorted, "{n} issues in order");
            let mut by_location = list.clone();
            by_location.sort_by(|a, b| a.location.cmp(&b.location));
            let mut got = by_location;
            normalize(&mut got);
            assert!(got == reference(list.clone()), "{n} issues by location");
            let want = reference(list.clone());
            let mut got = list;
            normalize(&mut got);
            assert_eq!(got.len(), want.len(), "{n} issues");
            for (k, (a, b)) in got.iter().zip(&want).enumerate() {
                assert!(a == b, "{n} issues, position {k}: {a:?} != {b:?}");
            }
        }
    }

    /// Every permutation of four items, and a long cycle, lands each item at its place.
    #[test]
    fn permute_applies_the_order() {
        let mut orders: Vec<Vec<u32>> = Vec::new();
        for a in 0..4u32 {
            for b in 0..4u32 {
                for c in 0..4u32 {
                    for d in 0..4u32 {
                        let o = vec![a, b, c, d];
                        let mut s = o.clone();
                        s.sort_unstable();
                        s.dedup();
                        if s.len() == 4 {
                            orders.push(o);
                        }
                    }
                }
            }
        }
        orders.push((1..1000).chain([0]).collect());
        for order in orders {
            let items: Vec<u32> = (0..order.len() as u32).map(|i| i * 10).collect();
            let want: Vec<u32> = order.iter().map(|&i| items[i as usize]).collect();
            let mut got = items.clone();
            permute(&mut got, &mut order.clone());
            assert_eq!(got, want);
        }
    }
}
