//! The lookup indexes of a walked file list: by directory and suffix, and by a hash of
//! each file's directory, suffix, extension and entities. They are the lowest layer of
//! the crate: plain functions of the file entries.

use std::hash::{BuildHasher, Hash, Hasher};

use crate::entry::FileEntry;

/// The index key of a file: a hash of its directory, suffix, extension and entities
/// sorted by key (distinct tuples rarely share one; lookups check what they find).
pub(crate) fn entity_key(
    state: &impl BuildHasher,
    (dir, suffix, extension): (&str, &str, &str),
    sorted_pairs: &[(&str, &str)],
) -> u64 {
    let mut h = state.build_hasher();
    (dir, suffix, extension).hash(&mut h);
    for pair in sorted_pairs {
        pair.hash(&mut h);
    }
    h.finish()
}

/// [`crate::dataset::FileTree::by_entities`] of `files`.
pub(crate) fn entity_index(
    files: &[FileEntry],
    hasher: &foldhash::fast::RandomState,
) -> foldhash::HashMap<u64, Vec<usize>> {
    let mut index: foldhash::HashMap<u64, Vec<usize>> = foldhash::HashMap::default();
    index.reserve(files.len());
    for (i, f) in files.iter().enumerate() {
        if let (Some(suffix), true) = (f.name.suffix.as_deref(), f.name.stray.is_empty()) {
            let pairs = f.name.sorted_pairs();
            let key = entity_key(hasher, (f.dir(), suffix, &f.name.extension), &pairs);
            index.entry(key).or_default().push(i);
        }
    }
    index
}

/// Directory → suffix → files (see [`crate::dataset::FileTree::by_suffix`]).
pub(crate) type SuffixIndex = foldhash::HashMap<String, foldhash::HashMap<String, Vec<usize>>>;

/// [`crate::dataset::FileTree::by_suffix`] of `files`.
pub(crate) fn suffix_index(files: &[FileEntry]) -> SuffixIndex {
    let mut index = SuffixIndex::default();
    for (i, f) in files.iter().enumerate() {
        let Some(suffix) = f.name.suffix.as_deref() else {
            continue;
        };
        // (Keys are copied only for a directory or suffix not seen before.)
        let dir = match index.get_mut(f.dir()) {
            Some(d) => d,
            None => index.entry(f.dir().to_string()).or_default(),
        };
        match dir.get_mut(suffix) {
            Some(members) => members.push(i),
            None => {
                dir.insert(suffix.to_string(), vec![i]);
            }
        }
    }
    index
}
