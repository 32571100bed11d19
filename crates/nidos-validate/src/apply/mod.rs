//! Applies the schema's selector-based rules (checks, sidecar/JSON field rules, tabular
//! rules) to one file's context.

use std::sync::Mutex;

use nidos_expr::{eval, Context};
use nidos_schema::CheckRule;

use crate::issue::{FastMap, Issue, Severity, Sym};

mod fields;
mod patterns;
mod prepared;
mod signature;
mod tabular;

pub(crate) use fields::{apply_fields, keep_strongest_missing};
pub(crate) use prepared::Prepared;
pub(crate) use tabular::{apply_tabular, TableView};

/// What the rules need of a file beyond the expression context.
pub(crate) struct FileFacts<'a> {
    pub path: &'a str,
    /// `path`, shared by the file's issues.
    pub location: &'a Sym,
    pub extension: &'a str,
    /// The sidecar that supplied each merged key.
    pub sidecar_origin: &'a dyn Fn(&str) -> Option<&'a str>,
    pub derivative_dataset: bool,
}

/// Dataset-wide memory of (sidecar, key) pairs whose value was already checked, so a
/// bad value in a shared sidecar is checked and reported once.
///
/// Which file reports it must not depend on which worker thread gets there first: the
/// issue is produced after the per-file pass, as the first file in path order that
/// reaches the pair would have produced it (its path in `affects`, its rule id).
#[derive(Default)]
pub(crate) struct Seen {
    /// origin → key → what was found, in shards chosen by the origin (workers rarely
    /// wait for each other).
    checked: [Mutex<SeenMap>; SEEN_SHARDS],
    /// Chooses an origin's shard.
    shards: foldhash::fast::RandomState,
}

type SeenMap = FastMap<String, FastMap<String, SeenValue>>;
const SEEN_SHARDS: usize = 16;

struct SeenValue {
    /// The smallest path of a file that reached the pair, with the rule it applied and
    /// whether that was a sidecar rule (which names the file in `affects`).
    path: Sym,
    rule: Sym,
    sidecar_rule: bool,
    /// The metadata name and the violation message (None: the value is valid).
    name: Sym,
    message: Option<String>,
}

/// Who reaches a (sidecar, key) pair of [`Seen`]: the file, the rule it applies, whether
/// that is a sidecar rule, and the metadata name.
pub(crate) struct Visit<'a> {
    pub path: &'a Sym,
    pub rule: &'a Sym,
    pub sidecar_rule: bool,
    pub name: &'a Sym,
}

impl Seen {
    fn get_or_check(
        &self,
        origin: &str,
        key: &str,
        visit: Visit<'_>,
        check: impl FnOnce() -> Option<String>,
    ) {
        let Visit {
            path,
            rule,
            sidecar_rule,
            name,
        } = visit;
        let update = |map: &mut SeenMap| -> bool {
            match map.get_mut(origin).and_then(|m| m.get_mut(key)) {
                Some(v) => {
                    if path < &v.path {
                        v.path = path.clone();
                        v.rule = rule.clone();
                        v.sidecar_rule = sidecar_rule;
                    }
                    true
                }
                None => false,
            }
        };
        let shard = {
            use std::hash::BuildHasher;
            let h = self.shards.hash_one(origin);
            &self.checked[(h as usize) % SEEN_SHARDS]
        };
        let Ok(mut map) = shard.lock() else {
            return;
        };
        if update(&mut map) {
            return;
        }
        // Check without holding the lock; another worker may check the same pair
        // meanwhile, with the same result.
        drop(map);
        let message = check();
        let Ok(mut map) = shard.lock() else {
            return;
        };
        if update(&mut map) {
            return;
        }
        map.entry(origin.to_string()).or_default().insert(
            key.to_string(),
            SeenValue {
                path: path.clone(),
                rule: rule.clone(),
                sidecar_rule,
                name: name.clone(),
                message,
            },
        );
    }

    /// The JSON_SCHEMA_VALIDATION_ERROR issues of every bad value.
    pub(crate) fn into_issues(self) -> Vec<Issue> {
        let mut out = Vec::new();
        let shards = self.checked.into_iter();
        for (origin, keys) in shards.flat_map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        {
            let location = Sym::from(origin);
            for (_, v) in keys {
                if let Some(message) = v.message {
                    out.push(bad_value(
                        &location,
                        &v.name,
                        &v.rule,
                        message,
                        v.sidecar_rule.then_some(&v.path),
                    ));
                }
            }
        }
        out
    }

    /// Every pair reached, as [`SeenEntry`]s (an incremental run keeps them per file and
    /// merges them as one run's map would have, see [`crate::incremental`]).
    pub(crate) fn into_entries(self) -> Vec<SeenEntry> {
        let mut out = Vec::new();
        let shards = self.checked.into_iter();
        for (origin, keys) in shards.flat_map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        {
            for (key, v) in keys {
                out.push(SeenEntry {
                    origin: origin.clone(),
                    key,
                    path: v.path,
                    rule: v.rule,
                    sidecar_rule: v.sidecar_rule,
                    name: v.name,
                    message: v.message,
                });
            }
        }
        out
    }
}

/// One (sidecar, key) pair of [`Seen`] and what the file that reached it found.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct SeenEntry {
    pub origin: String,
    pub key: String,
    pub path: Sym,
    pub rule: Sym,
    pub sidecar_rule: bool,
    pub name: Sym,
    pub message: Option<String>,
}

impl SeenEntry {
    /// The issue of a bad value (none for a valid one), as [`Seen::into_issues`] makes it.
    pub(crate) fn issue(&self) -> Option<Issue> {
        let message = self.message.clone()?;
        let location = Sym::from(self.origin.as_str());
        let affects = self.sidecar_rule.then_some(&self.path);
        Some(bad_value(
            &location, &self.name, &self.rule, message, affects,
        ))
    }
}

/// A JSON_SCHEMA_VALIDATION_ERROR of a sidecar value, naming the file that reached it.
fn bad_value(
    location: &Sym,
    name: &Sym,
    rule: &Sym,
    message: String,
    affects: Option<&Sym>,
) -> Issue {
    let mut issue = Issue::new("JSON_SCHEMA_VALIDATION_ERROR", Severity::Error, location)
        .sub(name)
        .rule(rule)
        .message(message);
    if let Some(path) = affects {
        issue.extra_mut().affects.push(path.to_string());
    }
    issue
}

pub(crate) fn apply_check(
    rule: &CheckRule,
    ctx: &dyn Context,
    facts: &FileFacts<'_>,
    out: &mut Vec<Issue>,
) {
    let all_hold = rule.checks.iter().all(|c| match &c.parsed {
        Some(e) => eval(e, ctx).truthy(),
        None => false,
    });
    if all_hold {
        return;
    }
    let (code, severity) = match &rule.issue {
        Some(spec) if !spec.code.is_empty() => {
            (spec.code.clone(), spec.level.unwrap_or(Severity::Error))
        }
        _ => ("CHECK_ERROR".to_string(), Severity::Error),
    };
    out.push(Issue::new(code, severity, facts.location).rule(&rule.id));
}

fn level_severity(level: nidos_schema::Level) -> Option<Severity> {
    match level {
        nidos_schema::Level::Required => Some(Severity::Error),
        nidos_schema::Level::Recommended => Some(Severity::Warning),
        _ => None,
    }
}
