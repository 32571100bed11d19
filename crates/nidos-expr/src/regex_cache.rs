//! Compiled ECMAScript regular expressions for `match`: literal patterns are compiled
//! once at parse time; computed patterns go through a small process-wide cache.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

/// A pattern compiled with `regress` (no flags: the `new RegExp(p)` of JavaScript),
/// or the reason it does not compile. Compiled on first use, so a rule whose pattern is
/// never reached costs nothing at load.
#[derive(Debug)]
pub struct CompiledRegex {
    pattern: String,
    regex: OnceLock<Result<regress::Regex, String>>,
}

impl CompiledRegex {
    pub fn compile(pattern: &str) -> CompiledRegex {
        CompiledRegex {
            pattern: pattern.to_owned(),
            regex: OnceLock::new(),
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
        match self.compiled() {
            Ok(re) => Some(re.find(text).is_some()),
            Err(_) => None,
        }
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
