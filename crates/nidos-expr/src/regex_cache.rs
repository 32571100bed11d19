//! Compiled ECMAScript regular expressions for `match`: literal patterns are compiled
//! once at parse time; computed patterns go through a small process-wide cache.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

/// A pattern compiled with `regress` (no flags: the `new RegExp(p)` of JavaScript),
/// or the reason it does not compile. Compiled on first use, so a rule whose pattern is
/// never reached costs nothing at load. Searches run on the `regex` crate's automaton
/// when the pattern carries over to it exactly (as in [`crate::full_match`]): the
/// backtracking engine allocates for every search, and `match` runs for most files
/// (the associations' selectors test extensions with it). The automaton is built only
/// once a pattern has searched [`AUTOMATON_AFTER`] texts: building costs more than a
/// few dozen backtracking searches, so a small dataset never pays for it.
#[derive(Debug)]
pub struct CompiledRegex {
    pattern: String,
    regex: OnceLock<Result<regress::Regex, String>>,
    automaton: OnceLock<Option<regex::Regex>>,
    searches: AtomicU32,
}

/// How many searches a pattern runs on the backtracking engine before the automaton.
const AUTOMATON_AFTER: u32 = 64;

impl CompiledRegex {
    pub fn compile(pattern: &str) -> CompiledRegex {
        CompiledRegex {
            pattern: pattern.to_owned(),
            regex: OnceLock::new(),
            automaton: OnceLock::new(),
            searches: AtomicU32::new(0),
        }
    }

    fn compiled(&self) -> &Result<regress::Regex, String> {
        self.regex
            .get_or_init(|| regress::Regex::new(&self.pattern).map_err(|e| e.to_string()))
    }

    /// The compiled pattern, `None` when it is invalid.
    pub fn regex(&self) -> Option<&regress::Regex> {
        self.compiled().as_ref().ok()
    }

    /// Unanchored search. `None` when the pattern is invalid.
    pub fn is_match(&self, text: &str) -> Option<bool> {
        // Validity is the ECMAScript engine's say, whichever engine searches.
        let re = self.compiled().as_ref().ok()?;
        let warm = self.searches.load(Ordering::Relaxed) >= AUTOMATON_AFTER;
        if !warm {
            self.searches.fetch_add(1, Ordering::Relaxed);
        }
        let fast = if warm { self.automaton() } else { None };
        Some(match fast {
            Some(fast) => fast.is_match(text),
            None => re.find(text).is_some(),
        })
    }

    fn automaton(&self) -> Option<&regex::Regex> {
        self.automaton
            .get_or_init(|| {
                let spelled = crate::full_match::translate(&self.pattern)?;
                regex::Regex::new(&spelled).ok()
            })
            .as_ref()
    }
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
    use super::{CompiledRegex, AUTOMATON_AFTER};
    use crate::full_match::tests::{PATTERNS, TEXTS};
    use std::sync::atomic::Ordering;

    #[test]
    fn searches_agree_with_the_ecmascript_engine() {
        for p in PATTERNS {
            let cold = CompiledRegex::compile(p);
            let warm = CompiledRegex::compile(p);
            warm.searches.store(AUTOMATON_AFTER, Ordering::Relaxed);
            let slow = regress::Regex::new(p).ok();
            for t in TEXTS {
                let want = slow.as_ref().map(|re| re.find(t).is_some());
                assert_eq!(cold.is_match(t), want, "pattern {p:?} on {t:?}");
                assert_eq!(warm.is_match(t), want, "pattern {p:?} on {t:?}");
            }
        }
        // The schema's extension test runs on the automaton.
        assert!(CompiledRegex::compile(r"\.nii(\.gz)?$")
            .automaton()
            .is_some());
    }
}
