//! What a session keeps to patch a report that carries later-version notes
//! ([`crate::later`]): the summary's count of the issues the newest rules add (kept
//! from the keys of the applied and the newest reports), and where the files that can
//! change a note are (the scopes of the issues of [`crate::pinning`]'s codes).
//!
//! A patch keeps the notes as they are only when no issue of those codes comes or goes
//! and no file validated again lies in the scope of one: a note depends on how the
//! later versions judge the files of its scope, and, through the order in which the
//! versions are tried, on the set of such issues.

use crate::issue::{FastMap, FastSet, Issue};

/// The key an issue is recognised by across two reports (as [`crate::later`] has it).
type Key = (String, String, String);

fn key(i: &Issue) -> Key {
    (
        i.code().to_string(),
        i.sub_code().to_string(),
        i.location.to_string(),
    )
}

/// The kept counts and scopes (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct LaterIndex {
    /// Issue key of the applied report → how many issues have it.
    applied: FastMap<Key, u32>,
    /// Issue key of the newest rules' report → how many issues have it.
    newest: FastMap<Key, u32>,
    /// The newest rules' issues whose key the applied report lacks.
    pub(crate) more: usize,
    /// The scopes of the applied report's issues of versioned codes.
    scopes: FastSet<String>,
}

impl LaterIndex {
    /// The index of the `applied` report's issues and the `newest` rules' issues.
    pub(crate) fn build(applied: &[Issue], newest: &[Issue]) -> LaterIndex {
        let mut index = LaterIndex::default();
        for i in applied {
            *index.applied.entry(key(i)).or_insert(0) += 1;
            if let Some(scope) = crate::pinning::versioned_scope(i) {
                index.scopes.insert(scope);
            }
        }
        for i in newest {
            *index.newest.entry(key(i)).or_insert(0) += 1;
        }
        index.more = index
            .newest
            .iter()
            .filter(|(k, _)| !index.applied.contains_key(*k))
            .map(|(_, n)| *n as usize)
            .sum();
        index
    }

    /// Whether the file at `path` lies in the scope of an issue of a versioned code.
    pub(crate) fn covers(&self, path: &str) -> bool {
        if self.scopes.contains(path) {
            return true;
        }
        path.match_indices('/')
            .any(|(at, _)| self.scopes.contains(&path[..=at]))
    }

    /// Takes in the issues gone from and come into the applied report and the newest
    /// rules' report, and counts again what the newest rules add.
    pub(crate) fn apply(
        &mut self,
        gone: &[Issue],
        came: &[Issue],
        resolved: &[Issue],
        new: &[Issue],
    ) {
        let keys: FastSet<Key> = gone
            .iter()
            .chain(came)
            .chain(resolved)
            .chain(new)
            .map(key)
            .collect();
        let part = |index: &LaterIndex, k: &Key| match index.applied.get(k) {
            Some(_) => 0,
            None => index.newest.get(k).map_or(0, |n| *n as usize),
        };
        let before: usize = keys.iter().map(|k| part(self, k)).sum();
        fn add(map: &mut FastMap<Key, u32>, issues: &[Issue]) {
            for i in issues {
                *map.entry(key(i)).or_insert(0) += 1;
            }
        }
        fn take(map: &mut FastMap<Key, u32>, issues: &[Issue]) {
            for i in issues {
                let k = key(i);
                if let Some(n) = map.get_mut(&k) {
                    *n -= 1;
                    if *n == 0 {
                        map.remove(&k);
                    }
                }
            }
        }
        add(&mut self.applied, came);
        take(&mut self.applied, gone);
        add(&mut self.newest, new);
        take(&mut self.newest, resolved);
        let after: usize = keys.iter().map(|k| part(self, k)).sum();
        self.more = self.more + after - before;
    }
}
