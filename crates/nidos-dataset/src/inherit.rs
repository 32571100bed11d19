//! The inheritance principle, as a search of the walked tree: files that apply to a data
//! file are searched from its directory up to the dataset root; a candidate shares the
//! suffix, has one of the target extensions, and its entities are a subset of the data
//! file's. Nothing is read here: merging the sidecars found is loading
//! ([`crate::load::sidecar`]), associations are [`crate::assoc`].

use crate::dataset::FileTree;
use crate::entry::{DatasetIssue, Severity};
use crate::index::entity_key;

/// What to look for.
pub(crate) struct Target<'a> {
    /// Required suffix (`None`: the source file's own suffix).
    pub suffix: Option<&'a str>,
    pub extensions: &'a [String],
    /// Entities a candidate may carry with any value (e.g. `space` for electrodes).
    pub free_entities: &'a [String],
    /// Search parent directories too (else only the file's own directory).
    pub inherit: bool,
}

/// The directories from a file's own up to the root (`/sub-01/anat/`, `/sub-01/`, `/`).
pub(crate) fn dir_chain(dir: &str) -> Vec<&str> {
    let mut out = vec![dir];
    let mut cur = dir.trim_end_matches('/');
    while let Some(i) = cur.rfind('/') {
        out.push(&dir[..=i]);
        cur = &cur[..i];
    }
    out.dedup();
    out
}

/// Candidates per directory, deepest first; levels without a candidate are skipped.
///
/// A candidate sits in the directory with the suffix, has one of the extensions, no
/// parts that are not entities, and entities that are a subset of the file's. Each
/// level's files of the suffix are scanned, unless the entity index is cheaper: when
/// no entity is free, a file's few entities give `2^n` subsets per extension to look
/// up, which beats scanning a directory with more files of the suffix than that.
pub(crate) fn walk_back(ds: &FileTree, src: usize, t: &Target<'_>) -> Vec<Vec<usize>> {
    let file = &ds.files[src];
    if t.suffix.is_none() && (file.name.suffix.is_none() || !file.name.stray.is_empty()) {
        return same_stem(ds, src, t.extensions);
    }
    let Some(suffix) = t.suffix.or(file.name.suffix.as_deref()) else {
        return Vec::new();
    };
    let chain = dir_chain(file.dir());
    let chain = if t.inherit { &chain[..] } else { &chain[..1] };
    let n = file.name.pairs.len();
    // (With free entities, or too many, the directory is always scanned.)
    let lookups = if t.free_entities.is_empty() && n <= MAX_SUBSET_ENTITIES {
        t.extensions.len() << n
    } else {
        usize::MAX
    };
    let mut levels = Vec::new();
    for dir in chain {
        let members = ds.by_suffix.members(&ds.files, dir, suffix);
        if members.is_empty() {
            continue;
        }
        let found: Vec<usize> = if members.len() > lookups {
            subset_lookup(ds, src, (dir, suffix), t.extensions)
        } else {
            members
                .iter()
                .map(|&i| i as usize)
                .filter(|&i| {
                    let c = &ds.files[i];
                    // A name with parts that are not entities (`dataset_description.json`)
                    // is never a candidate.
                    i != src
                        && c.name.stray.is_empty()
                        && t.extensions.iter().any(|e| e == &c.name.extension)
                        && c.name.entities_subset_of(&file.name, t.free_entities)
                })
                .collect()
        };
        if !found.is_empty() {
            levels.push(found);
        }
    }
    levels
}

/// Files with more entities than this are looked up by scanning their directory.
const MAX_SUBSET_ENTITIES: usize = 10;

/// A name that is not entities plus a suffix (`phenotype/celf-5.tsv`,
/// `phenotype/acds_adult.tsv`) has no inheritance chain: only the file of the same stem
/// with one of the extensions, in its own directory, applies to it.
fn same_stem(ds: &FileTree, src: usize, extensions: &[String]) -> Vec<Vec<usize>> {
    let file = &ds.files[src];
    let found: Vec<usize> = extensions
        .iter()
        .filter(|e| **e != file.name.extension)
        .filter_map(|e| ds.index_of(&format!("{}{e}", file.path_stem())))
        .collect();
    if found.is_empty() {
        Vec::new()
    } else {
        vec![found]
    }
}

/// The candidates of one level of [`walk_back`] through the entity index: each subset
/// of the file's entities is looked up directly (ascending, without duplicates).
fn subset_lookup(
    ds: &FileTree,
    src: usize,
    (dir, suffix): (&str, &str),
    extensions: &[String],
) -> Vec<usize> {
    let pairs = ds.files[src].name.sorted_pairs();
    let n = pairs.len();
    let mut subset: Vec<(&str, &str)> = Vec::with_capacity(n);
    let mut found = Vec::new();
    for ext in extensions {
        for mask in 0u32..(1u32 << n) {
            subset.clear();
            subset.extend((0..n).filter(|b| mask & (1 << b) != 0).map(|b| pairs[b]));
            let key = entity_key(&ds.entity_hasher, (dir, suffix, ext), &subset);
            found.extend(ds.by_entities.get(key).filter(|&i| {
                let c = &ds.files[i];
                i != src
                    && c.dir() == dir
                    && c.name.suffix.as_deref() == Some(suffix)
                    && c.name.extension == *ext
                    && c.name.sorted_pairs() == subset
            }));
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// Picks one candidate of a level: the only one, or the one whose entities equal the
/// source's; `None` when the level is ambiguous.
pub(crate) fn pick(ds: &FileTree, src: usize, cands: &[usize]) -> Option<usize> {
    if cands.len() == 1 {
        return Some(cands[0]);
    }
    let file = &ds.files[src].name;
    let exact: Vec<usize> = cands
        .iter()
        .copied()
        .filter(|&i| ds.files[i].name.pairs.len() == file.pairs.len())
        .collect();
    (exact.len() == 1).then(|| exact[0])
}

pub(crate) fn ambiguity(ds: &FileTree, src: usize, what: &str, cands: &[usize]) -> DatasetIssue {
    let names: Vec<&str> = cands.iter().map(|&i| ds.files[i].path.as_str()).collect();
    DatasetIssue::new(
        "MULTIPLE_INHERITABLE_FILES",
        Severity::Error,
        &ds.files[src].path,
        format!(
            "more than one {what} applies at the same level: {}",
            names.join(", ")
        ),
    )
}

/// The sidecars that apply to file `src` (indices into [`FileTree::files`], root first),
/// and an issue for each level where more than one applies and none is picked (that
/// level is left out of the chain). Empty for a JSON file: sidecars inherit nothing.
pub(crate) fn sidecar_chain(tree: &FileTree, src: usize) -> (Vec<usize>, Vec<DatasetIssue>) {
    let mut issues = Vec::new();
    let Some(file) = tree.files.get(src) else {
        return (Vec::new(), issues);
    };
    if file.name.extension == ".json" {
        return (Vec::new(), issues);
    }
    let exts = [".json".to_string()];
    let t = Target {
        suffix: None,
        extensions: &exts,
        free_entities: &[],
        inherit: true,
    };
    let mut chain = Vec::new();
    for level in walk_back(tree, src, &t) {
        match pick(tree, src, &level) {
            Some(i) => chain.push(i),
            None => issues.push(ambiguity(tree, src, "sidecar", &level)),
        }
    }
    chain.reverse();
    (chain, issues)
}

#[cfg(test)]
mod tests {
    use super::dir_chain;

    #[test]
    fn chain() {
        assert_eq!(
            dir_chain("/sub-01/anat/"),
            ["/sub-01/anat/", "/sub-01/", "/"]
        );
        assert_eq!(dir_chain("/"), ["/"]);
    }
}
