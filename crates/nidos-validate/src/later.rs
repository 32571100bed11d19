//! A validation with the bundled rules pinned to an older version than the newest: how
//! many more issues the newest rules report (the summary says so, and how to see them),
//! and which issues only a later version would not raise. [`crate::pinning`] decides the
//! latter; this module gives it the later versions' rules and validates the dataset with
//! them.

use std::cmp::Ordering;
use std::sync::Arc;

use nidos_schema::Schema;

use crate::engine::{Engine, Options};
use crate::pinning::{explain_later_versions, Declared, Recheck};
use crate::report::Report;

/// The key an issue is recognised by across two reports.
fn issue_key(i: &crate::issue::Issue) -> (&str, &str, &str) {
    (i.code(), i.sub_code(), &i.location)
}

/// Whether a supported version comes after the one `schema` holds (the notes of
/// [`explain`] have something to say).
pub(crate) fn any_later(schema: &Schema) -> bool {
    !later_than(schema).is_empty()
}

/// The supported versions after the one `schema` holds, oldest first.
fn later_than(schema: &Schema) -> Vec<String> {
    let mut later: Vec<String> = schema
        .supported_versions
        .iter()
        .filter(|v| nidos_schema::compare_versions(v, &schema.version) == Ordering::Greater)
        .cloned()
        .collect();
    later.sort_by(|a, b| nidos_schema::compare_versions(a, b));
    later
}

/// The newest supported version's rules, when a later version than `schema`'s is
/// supported: loaded once per process and kept until it exits (an incremental session
/// validates with them beside the applied rules, and sessions come and go).
pub(crate) fn newest_rules(schema: &Schema) -> Option<&'static Arc<Schema>> {
    static KEPT: std::sync::Mutex<Vec<&'static Arc<Schema>>> = std::sync::Mutex::new(Vec::new());
    let newest = later_than(schema).pop()?;
    let brand = &schema.brand.name;
    let mut kept = KEPT.lock().ok()?;
    if let Some(s) = kept
        .iter()
        .find(|s| s.version == newest && s.brand.name == *brand)
    {
        return Some(*s);
    }
    let loaded = Schema::bundled_for(Some(brand), Some(&newest)).ok()?;
    let loaded: &'static Arc<Schema> = Box::leak(Box::new(Arc::new(loaded)));
    kept.push(loaded);
    Some(loaded)
}

/// The options of the newest rules' run over the whole dataset (HED left out: it does
/// not depend on the version).
pub(crate) fn newest_options(opts: &Options) -> Options {
    Options {
        progress: None,
        skip_hed: true,
        only_under: None,
        only_kinds: None,
        ..opts.clone()
    }
}

/// With the bundled rules pinned to the version the dataset declares, says how many more
/// issues the newest rules report ([`crate::report::NewestRules`], in the summary) and
/// which issues only a later version would not raise (see [`crate::pinning`]). The
/// phases are told to `opts.phases`. `newest`: the newest rules and their report of the
/// whole dataset ([`newest_options`]), when the caller has them.
pub(crate) fn explain(
    report: &mut Report,
    schema: &Schema,
    ds: &nidos_dataset::Dataset,
    opts: &Options,
    dir: &std::path::Path,
    open: &nidos_dataset::OpenOptions,
    newest_run: Option<(&Arc<Schema>, &Report)>,
) {
    let key = schema.brand.version_key.clone();
    let brand = schema.brand.name.clone();
    let later = later_than(schema);
    let Some(newest) = later.last().cloned() else {
        return;
    };
    let later: Vec<&str> = later.iter().map(String::as_str).collect();
    // What was loaded stays until the process exits (freeing a tree of parsed
    // expressions costs about a tenth of loading it).
    // A version is loaded once (the newest serves the count and the notes).
    let kept: std::cell::RefCell<Vec<Arc<Schema>>> =
        std::cell::RefCell::new(newest_run.iter().map(|(s, _)| Arc::clone(s)).collect());
    let load = |v: &str| {
        if let Some(s) = kept.borrow().iter().find(|s| s.version == v) {
            return Some(s.clone());
        }
        let schema = Schema::bundled_for(Some(&brand), Some(v))
            .ok()
            .map(Arc::new);
        kept.borrow_mut().extend(schema.clone());
        opts.lap(|| format!("later versions: load {v}"));
        schema
    };
    // The newest rules on the whole dataset (HED left out: it does not depend on the
    // version): the issues they add are counted for the summary, and the notes below
    // reuse the run for the newest version.
    let owned;
    let full = match newest_run {
        Some((_, r)) => Some(r),
        None => {
            owned = load(&newest).and_then(|s| {
                let whole = newest_options(opts);
                let again = nidos_dataset::Dataset::open_again(dir, &s, open, ds).ok()?;
                let r = Engine::new(&s).validate_dataset(&again, &whole);
                opts.lap(|| format!("newest rules: validate {newest}"));
                Some(r)
            });
            owned.as_ref()
        }
    };
    if let Some(full) = full {
        let applied: crate::issue::FastSet<_> = report.issues.iter().map(issue_key).collect();
        let more = full
            .issues
            .iter()
            .filter(|i| !applied.contains(&issue_key(i)))
            .count();
        report.summary.newest_rules = Some(crate::report::NewestRules {
            version: newest.clone(),
            more,
        });
    }
    let Some(declared) = nidos_dataset::read_description(dir)
        .and_then(|v| v.get(&key).and_then(|v| v.as_str()).map(str::to_string))
    else {
        std::mem::forget(kept);
        return;
    };
    let kept_changes = std::cell::RefCell::new(Vec::new());
    let changes = || {
        let changes = nidos_schema::bundled_changes(Some(&brand))
            .ok()
            .map(Arc::new);
        kept_changes.borrow_mut().extend(changes.clone());
        opts.lap(|| "later versions: what each version changes".to_owned());
        changes
    };
    // Only the issues of `VERSIONED_CODES` are compared, never HED's: the later versions'
    // runs leave HED unchecked, and validate only the files where those issues can arise,
    // with only the kinds of rules that decide them.
    let validate = |s: &Schema, recheck: &Recheck| {
        if s.version == newest {
            // The whole run covers every scope and kind a recheck asks for.
            if let Some(full) = full {
                return Some(full.clone());
            }
        }
        let quiet = Options {
            progress: None,
            skip_hed: true,
            only_under: Some(std::sync::Arc::new(recheck.scope.clone())),
            only_kinds: Some(std::sync::Arc::new(recheck.kinds.clone())),
            ..opts.clone()
        };
        // What the first run parsed is parsed again only if the later rules walk the
        // dataset differently.
        let again = nidos_dataset::Dataset::open_again(dir, s, open, ds);
        let engine = Engine::new(s);
        opts.lap(|| format!("later versions: open dataset, prepare {}", s.version));
        let report = engine.validate_dataset(&again.ok()?, &quiet);
        opts.lap(|| format!("later versions: validate {}", s.version));
        Some(report)
    };
    explain_later_versions(
        report,
        schema,
        &Declared {
            version: &declared,
            version_key: &key,
        },
        &later,
        &changes,
        &load,
        &validate,
    );
    std::mem::forget(kept);
    std::mem::forget(kept_changes);
}
