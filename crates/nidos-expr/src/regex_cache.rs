//! Compiled ECMAScript regular expressions for `match`: literal patterns are compiled
//! once at parse time; computed patterns go through a small process-wide cache.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use crate::regex_budget::{costly, record_over_budget, run_budgeted};

/// A pattern compiled with `regress` (no flags: the `new RegExp(p)` of JavaScript),
/// or the reason it does not compile. Compiled on first use, so a rule whose pattern is
/// never reached costs nothing at load.
///
/// Which engine searches (see `docs/reliability.md`, "Regular expressions"):
/// - the `regex` crate's automaton (linear time) when the pattern carries over to it
///   exactly (as in [`crate::full_match`]) and the search could be costly on the
///   backtracking engine: a long text, or a pattern with nested or repeated unbounded
///   quantifiers ([`costly`]). Otherwise the automaton is built only once a pattern has
///   searched [`AUTOMATON_AFTER`] texts: building costs more than a few dozen cheap
///   backtracking searches, so a small dataset never pays for it;
/// - the backtracking engine inline for a cheap pattern on a short text (its work is
///   then polynomial of low degree in at most [`SHORT_TEXT`] bytes);
/// - the backtracking engine under a time budget ([`BUDGET`](crate::regex_budget::BUDGET)) for the rest (lookaround
///   or back-references in a costly pattern, or on a long text). A search past the
///   budget gives no answer (`match` is null), and the pattern is marked: every later
///   search with it gives no answer at once, and [`over_budget`](crate::regex_budget::over_budget) names it.
#[derive(Debug)]
pub struct CompiledRegex {
    pattern: String,
    regex: OnceLock<Result<Arc<regress::Regex>, String>>,
    automaton: OnceLock<Option<regex::Regex>>,
    searches: AtomicU32,
    costly: bool,
    translates: bool,
    exhausted: AtomicBool,
}

/// How many searches a pattern runs on the backtracking engine before the automaton.
const AUTOMATON_AFTER: u32 = 64;

/// Texts up to this many bytes may be searched inline by the backtracking engine.
pub const SHORT_TEXT: usize = 256;

impl CompiledRegex {
    pub fn compile(pattern: &str) -> CompiledRegex {
        CompiledRegex {
            pattern: pattern.to_owned(),
            regex: OnceLock::new(),
            automaton: OnceLock::new(),
            searches: AtomicU32::new(0),
            costly: costly(pattern),
            translates: crate::full_match::translate(pattern).is_some(),
            exhausted: AtomicBool::new(false),
        }
    }

    fn compiled(&self) -> &Result<Arc<regress::Regex>, String> {
        self.regex.get_or_init(|| {
            regress::Regex::new(&self.pattern)
                .map(Arc::new)
                .map_err(|e| e.to_string())
        })
    }

    /// The compiled pattern, `None` when it is invalid.
    pub fn regex(&self) -> Option<&regress::Regex> {
        self.compiled().as_ref().ok().map(|r| r.as_ref())
    }

    /// Unanchored search. `None` when the pattern is invalid, or when the search ran
    /// past its budget (see the type's description).
    pub fn is_match(&self, text: &str) -> Option<bool> {
        // Validity is the ECMAScript engine's say, whichever engine searches.
        let re = self.compiled().as_ref().ok()?;
        if self.exhausted.load(Ordering::Relaxed) {
            return None;
        }
        let cheap = !self.costly && text.len() <= SHORT_TEXT;
        let warm = self.searches.load(Ordering::Relaxed) >= AUTOMATON_AFTER;
        if !warm && cheap {
            self.searches.fetch_add(1, Ordering::Relaxed);
            return Some(re.find(text).is_some());
        }
        if let Some(fast) = self.automaton() {
            return Some(fast.is_match(text));
        }
        if cheap {
            return Some(re.find(text).is_some());
        }
        let (re, text) = (re.clone(), text.to_owned());
        self.budgeted(move || re.find(&text).is_some())
    }

    /// Every match replaced by `text` (as [`regress::Regex::find_iter`] finds them),
    /// under the same bounds as [`CompiledRegex::is_match`]. `None` when the pattern is
    /// invalid or the replacement ran past its budget.
    pub fn replace_all(&self, s: &str, text: &str) -> Option<String> {
        let re = self.compiled().as_ref().ok()?;
        if self.exhausted.load(Ordering::Relaxed) {
            return None;
        }
        if !self.costly && s.len() <= SHORT_TEXT {
            return Some(replace_all(re, s, text));
        }
        let (re, s, text) = (re.clone(), s.to_owned(), text.to_owned());
        self.budgeted(move || replace_all(&re, &s, &text))
    }

    /// [`run_budgeted`]; past the budget the pattern is marked exhausted.
    fn budgeted<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let answer = run_budgeted(work);
        if answer.is_none() {
            self.exhausted.store(true, Ordering::Relaxed);
            record_over_budget(&self.pattern);
        }
        answer
    }

    fn automaton(&self) -> Option<&regex::Regex> {
        if !self.translates {
            return None;
        }
        self.automaton
            .get_or_init(|| {
                let spelled = crate::full_match::translate(&self.pattern)?;
                regex::Regex::new(&spelled).ok()
            })
            .as_ref()
    }
}

/// Replaces every match, left to right; an empty match replaces the empty string at
/// that position and the search goes on one character further (as JavaScript does).
fn replace_all(re: &regress::Regex, s: &str, text: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for m in re.find_iter(s) {
        let r = m.range();
        out.push_str(&s[last..r.start]);
        out.push_str(text);
        last = r.end;
    }
    out.push_str(&s[last..]);
    out
}

const CACHE_LIMIT: usize = 1024;

/// Pattern → compiled form. Looked up at every evaluation of a pattern computed at run
/// time, so hashed with foldhash (the standard SipHash cost more than the match).
type Cache = HashMap<String, Arc<CompiledRegex>, foldhash::fast::RandomState>;

fn cache() -> &'static RwLock<Cache> {
    static CACHE: OnceLock<RwLock<Cache>> = OnceLock::new();
    CACHE.get_or_init(|| RwLock::new(Cache::default()))
}

/// The compiled form of a pattern computed at evaluation time.
pub fn cached(pattern: &str) -> Arc<CompiledRegex> {
    if let Ok(map) = cache().read() {
        if let Some(re) = map.get(pattern) {
            return re.clone();
        }
    }
    let compiled = Arc::new(CompiledRegex::compile(pattern));
    if let Ok(mut map) = cache().write() {
        if map.len() >= CACHE_LIMIT {
            // Patterns computed from data are rare; dropping everything keeps this simple.
            map.clear();
        }
        map.insert(pattern.to_string(), compiled.clone());
    }
    compiled
}

#[cfg(test)]
mod tests {
    use super::{costly, CompiledRegex, AUTOMATON_AFTER};
    use crate::full_match::tests::{schema_patterns, PATTERNS, SCHEMA_TEXTS, TEXTS};
    use crate::regex_budget::BUDGET;
    use std::sync::atomic::Ordering;

    fn agree(p: &str, texts: &[&str]) {
        let cold = CompiledRegex::compile(p);
        let warm = CompiledRegex::compile(p);
        warm.searches.store(AUTOMATON_AFTER, Ordering::Relaxed);
        let slow = regress::Regex::new(p).ok();
        for t in texts {
            let want = slow.as_ref().map(|re| re.find(t).is_some());
            assert_eq!(cold.is_match(t), want, "pattern {p:?} on {t:?}");
            assert_eq!(warm.is_match(t), want, "pattern {p:?} on {t:?}");
        }
    }

    #[test]
    fn searches_agree_with_the_ecmascript_engine() {
        for p in PATTERNS {
            // The exponential ones only on short texts here.
            let texts: Vec<&str> = TEXTS.iter().copied().filter(|t| t.len() < 20).collect();
            agree(p, &texts);
        }
        // The schema's extension test runs on the automaton.
        assert!(CompiledRegex::compile(r"\.nii(\.gz)?$")
            .automaton()
            .is_some());
    }

    #[test]
    fn searches_agree_on_every_schema_pattern() {
        let texts: Vec<&str> = SCHEMA_TEXTS.iter().chain(TEXTS).copied().collect();
        for p in schema_patterns() {
            agree(&p, &texts);
        }
    }

    #[test]
    fn costly_patterns_are_told_apart() {
        for p in [
            r"(a+)+$",
            r"(a|b)*c",
            r"(a?){30}",
            r".*.*x",
            r"a+b+",
            r"(a)\1",
            r"^(a*)*\1b",
        ] {
            assert!(costly(p), "{p}");
        }
        for p in [
            r"\.nii(\.gz)?$",
            r"\d{4}-\d{2}",
            r"(?!/)[0-9a-zA-Z+/_\-.]+",
            r"[+*]+",
            r"\*\+x*",
            r"sub-[a-z]+_",
        ] {
            assert!(!costly(p), "{p}");
        }
    }

    #[test]
    fn exponential_searches_stay_bounded() {
        let evil = format!("{}!", "a".repeat(40));
        // Translates: the automaton answers at once.
        let start = std::time::Instant::now();
        assert_eq!(
            CompiledRegex::compile("(a+)+$").is_match(&evil),
            Some(false)
        );
        // A back-reference keeps it on the backtracking engine: the budget ends it.
        let re = CompiledRegex::compile(r"^(a*)*\1b");
        assert_eq!(re.is_match(&evil), None);
        assert!(start.elapsed() < BUDGET * 3, "{:?}", start.elapsed());
        // Marked: the next search gives no answer without running.
        assert_eq!(re.is_match("ab"), None);
        assert!(crate::regex_budget::over_budget().contains(&r"^(a*)*\1b".to_string()));
        // A costly pattern on a short text that finishes in time answers.
        assert_eq!(
            CompiledRegex::compile(r"^(a*)*\1b").is_match("aab"),
            Some(true)
        );
    }
}
