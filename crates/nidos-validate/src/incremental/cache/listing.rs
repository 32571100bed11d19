//! The cheap pass of a cached run: every entry under a folder with its stamp (one
//! `lstat` each, a link's target `stat`ed too), the folders read in parallel. Nothing is
//! parsed and no rule is needed: a run over an unchanged dataset compares the listing's
//! hash with the stored one and stops there.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// What a file is on disk, as the result cache tells a file's versions apart: what a
/// link points to (the link itself when it is broken).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct Identity {
    size: u64,
    mtime_ns: i128,
    inode: u64,
}

impl Identity {
    /// The identity of the file at `path`; `None` when it cannot be read.
    pub(crate) fn of(path: &Path) -> Option<Identity> {
        let m = std::fs::metadata(path)
            .or_else(|_| std::fs::symlink_metadata(path))
            .ok()?;
        Some(Identity::from_meta(&m))
    }

    fn from_meta(m: &std::fs::Metadata) -> Identity {
        Identity {
            size: m.size(),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
            inode: m.ino(),
        }
    }
}

/// One entry of a listing: its path (dataset-relative, `/a/b`), its identity, and what
/// else its own `lstat` says (change time, mode; a write that keeps size and
/// modification time still moves the change time).
#[derive(Hash)]
struct Entry {
    path: String,
    id: Identity,
    ctime_ns: i128,
    mode: u32,
}

/// Every entry under a folder (see the module documentation).
pub struct Listing {
    /// Sorted by path.
    entries: Vec<Entry>,
    /// False when the listing cannot vouch for the folder: a link to a folder (not
    /// followed here), an entry that could not be read or whose name is not UTF-8.
    complete: bool,
    hash: u64,
}

impl Listing {
    /// Lists the folder `root` (or stamps the file `root`).
    pub fn take(root: &Path) -> Listing {
        let (mut entries, complete) = match std::fs::symlink_metadata(root) {
            Ok(m) if m.is_dir() => folder(root, ""),
            Ok(m) => (vec![entry(String::new(), root, &m, &mut true)], true),
            Err(_) => (Vec::new(), false),
        };
        entries.par_sort_unstable_by(|a, b| a.path.cmp(&b.path));
        let mut h = std::hash::DefaultHasher::new();
        entries.len().hash(&mut h);
        for e in &entries {
            e.hash(&mut h);
        }
        complete.hash(&mut h);
        Listing {
            entries,
            complete,
            hash: h.finish(),
        }
    }

    /// A hash of every entry and stamp (equal listings, equal hashes).
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Whether the hash vouches for the whole folder (see [`Listing::complete`]).
    pub fn complete(&self) -> bool {
        self.complete
    }

    /// Each entry's identity by path.
    pub(crate) fn identities(&self) -> HashMap<&str, Identity> {
        self.entries
            .iter()
            .map(|e| (e.path.as_str(), e.id))
            .collect()
    }
}

/// The entries under the folder `abs` (dataset-relative `rel`), its sub-folders listed
/// in parallel; and whether all could be read.
fn folder(abs: &Path, rel: &str) -> (Vec<Entry>, bool) {
    let Ok(read) = std::fs::read_dir(abs) else {
        return (Vec::new(), false);
    };
    let mut complete = true;
    let mut out = Vec::new();
    let mut below = Vec::new();
    for item in read {
        let Ok(item) = item else {
            complete = false;
            continue;
        };
        let name = item.file_name();
        let (Some(name), Ok(meta)) = (name.to_str(), item.metadata()) else {
            complete = false;
            continue;
        };
        let path = format!("{rel}/{name}");
        let here = item.path();
        if meta.is_dir() {
            below.push((here.clone(), path.clone()));
        }
        out.push(entry(path, &here, &meta, &mut complete));
    }
    let parts: Vec<(Vec<Entry>, bool)> = below
        .into_par_iter()
        .map(|(abs, rel)| folder(&abs, &rel))
        .collect();
    for (entries, whole) in parts {
        out.extend(entries);
        complete &= whole;
    }
    (out, complete)
}

/// The entry at `path` (its `lstat` is `meta`); a link's identity is its target's.
fn entry(path: String, abs: &Path, meta: &std::fs::Metadata, complete: &mut bool) -> Entry {
    let mut id = Identity::from_meta(meta);
    if meta.file_type().is_symlink() {
        if let Ok(target) = std::fs::metadata(abs) {
            // What lies behind a link to a folder is not listed: no vouching.
            *complete &= !target.is_dir();
            id = Identity::from_meta(&target);
        }
    }
    Entry {
        path,
        id,
        ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
        mode: meta.mode(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_changes_with_any_entry() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/x.json"), "{}").unwrap();
        let first = Listing::take(dir.path());
        assert!(first.complete());
        assert_eq!(first.hash(), Listing::take(dir.path()).hash());
        assert_eq!(first.identities().len(), 2);
        std::fs::write(dir.path().join("a/x.json"), "{ }").unwrap();
        assert_ne!(first.hash(), Listing::take(dir.path()).hash());
        let second = Listing::take(dir.path());
        std::fs::create_dir(dir.path().join("b")).unwrap();
        assert_ne!(second.hash(), Listing::take(dir.path()).hash());
        std::os::unix::fs::symlink(dir.path().join("a"), dir.path().join("c")).unwrap();
        assert!(!Listing::take(dir.path()).complete());
    }
}
