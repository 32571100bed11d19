//! The lookup indexes of a walked file list: by directory and suffix, and by a hash of
//! each file's directory, suffix, extension and entities. They are the lowest layer of
//! the crate: plain functions of the file entries.

use std::hash::{BuildHasher, Hash, Hasher};

use rayon::prelude::*;

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

/// The entity index: (key, file index) pairs sorted by key, then index; the files of
/// one key are a run found by binary search. One flat list of 12 bytes per indexed file
/// (a hash map of vectors took about 100: its table's free room and a heap vector per
/// key, when most keys have one file).
#[derive(Debug, Default)]
pub(crate) struct EntityIndex {
    keys: Vec<u64>,
    files: Vec<u32>,
}

impl EntityIndex {
    /// The files of `key`, ascending.
    pub(crate) fn get(&self, key: u64) -> impl Iterator<Item = usize> + '_ {
        let start = self.keys.partition_point(|&k| k < key);
        let end = start + self.keys[start..].partition_point(|&k| k == key);
        self.files[start..end].iter().map(|&i| i as usize)
    }
}

/// [`crate::dataset::FileTree::by_entities`] of `files`. File indices are stored as
/// `u32`: files past the 2^32nd would be left out of both indexes (such a list would
/// not fit in memory: at least 200 bytes per entry).
pub(crate) fn entity_index(
    files: &[FileEntry],
    hasher: &foldhash::fast::RandomState,
) -> EntityIndex {
    let mut pairs: Vec<(u64, u32)> = files
        .par_iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let suffix = f.name.suffix.as_deref()?;
            if !f.name.stray.is_empty() {
                return None;
            }
            let pairs = f.name.sorted_pairs();
            let key = entity_key(hasher, (f.dir(), suffix, &f.name.extension), &pairs);
            Some((key, u32::try_from(i).ok()?))
        })
        .collect();
    pairs.par_sort_unstable();
    let (keys, files) = pairs.into_iter().unzip();
    EntityIndex { keys, files }
}

/// Directory → suffix → files (see [`crate::dataset::FileTree::by_suffix`]): one list
/// of the files that have a suffix, ordered by directory, suffix and file number, and
/// each directory's range of it. About 4 bytes per file and one entry per directory;
/// a map of maps (a table and a vector per directory and suffix) took some 460 bytes
/// per directory.
#[derive(Default)]
pub(crate) struct SuffixIndex {
    members: Vec<u32>,
    dirs: foldhash::HashMap<String, (u32, u32)>,
}

impl SuffixIndex {
    /// The numbers of the files directly in `dir` (`/sub-01/anat/`) with `suffix`,
    /// ascending; empty when there are none.
    pub(crate) fn members<'a>(&'a self, files: &[FileEntry], dir: &str, suffix: &str) -> &'a [u32] {
        let Some(&(start, end)) = self.dirs.get(dir) else {
            return &[];
        };
        let Some(range) = self.members.get(start as usize..end as usize) else {
            return &[];
        };
        let suffix_of = |i: &u32| suffix_at(files, *i);
        let lo = range.partition_point(|i| suffix_of(i) < suffix);
        let rest = range.get(lo..).unwrap_or(&[]);
        let hi = rest.partition_point(|i| suffix_of(i) == suffix);
        rest.get(..hi).unwrap_or(&[])
    }
}

fn suffix_at(files: &[FileEntry], i: u32) -> &str {
    files
        .get(i as usize)
        .and_then(|f| f.name.suffix.as_deref())
        .unwrap_or("")
}

/// [`crate::dataset::FileTree::by_suffix`] of `files`.
pub(crate) fn suffix_index(files: &[FileEntry]) -> SuffixIndex {
    // Each file's directory and suffix are found once, then the (directory, suffix,
    // number) triples sorted on the worker threads: the order is total (numbers are
    // unique), so an unstable sort leaves the numbers of one suffix ascending.
    let mut keyed: Vec<(&str, &str, u32)> = files
        .par_iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let suffix = f.name.suffix.as_deref()?;
            Some((f.dir(), suffix, u32::try_from(i).ok()?))
        })
        .collect();
    keyed.par_sort_unstable();
    let mut dirs = foldhash::HashMap::default();
    let mut start = 0;
    while let Some(&(dir, _, _)) = keyed.get(start) {
        let len = keyed[start..].partition_point(|k| k.0 == dir);
        // (`u32` bounds: at most `u32::MAX` numbers are indexed.)
        dirs.insert(dir.to_string(), (start as u32, (start + len) as u32));
        start += len;
    }
    let members = keyed.into_iter().map(|(_, _, i)| i).collect();
    SuffixIndex { members, dirs }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filename::parse_name;

    fn entry(path: &str) -> FileEntry {
        FileEntry::at(path)
    }

    /// Every indexed file is found under its own key, with exactly the files that share
    /// that key (ascending); names with stray parts or no suffix are not indexed, and an
    /// absent key finds nothing.
    #[test]
    fn entity_index_finds_each_key_run() {
        let paths = [
            "/README",
            "/dataset_description.json",
            "/task-a_bold.json",
            "/task-b_bold.json",
            "/sub-01/func/sub-01_task-a_bold.json",
            "/sub-01/func/sub-01_task-a_bold.nii.gz",
            "/sub-01/func/sub-01_task-b_bold.json",
            "/sub-02/func/sub-02_task-a_bold.json",
        ];
        let files: Vec<FileEntry> = paths.iter().map(|p| entry(p)).collect();
        let hasher = foldhash::fast::RandomState::default();
        let index = entity_index(&files, &hasher);
        let mut indexed = 0;
        for (i, f) in files.iter().enumerate() {
            let key_of = |g: &FileEntry| {
                let suffix = g.name.suffix.as_deref().unwrap_or("");
                entity_key(
                    &hasher,
                    (g.dir(), suffix, &g.name.extension),
                    &g.name.sorted_pairs(),
                )
            };
            let found: Vec<usize> = index.get(key_of(f)).collect();
            if f.name.suffix.is_none() || !f.name.stray.is_empty() {
                assert!(!found.contains(&i), "{} indexed", f.path);
                continue;
            }
            indexed += 1;
            let want: Vec<usize> = (0..files.len())
                .filter(|&j| {
                    let g = &files[j];
                    g.name.suffix.is_some() && g.name.stray.is_empty() && key_of(g) == key_of(f)
                })
                .collect();
            assert_eq!(found, want, "{}", f.path);
        }
        assert_eq!(indexed, 7);
        let absent = entity_key(&hasher, ("/x/", "bold", ".json"), &[("sub", "99")]);
        assert_eq!(index.get(absent).count(), 0);
    }

    /// Each (directory, suffix) finds exactly the files directly in that directory with
    /// that suffix, ascending, wherever subdirectories split a directory's files.
    #[test]
    fn suffix_index_finds_each_directory_and_suffix() {
        let paths = [
            "/README",
            "/dataset_description.json",
            "/sub-01/anat/sub-01_T1w.json",
            "/sub-01/anat/sub-01_T1w.nii.gz",
            "/sub-01/func/sub-01_task-a_bold.json",
            "/sub-01/func/sub-01_task-a_bold.nii.gz",
            "/sub-01/func/sub-01_task-a_events.tsv",
            "/sub-01/func/sub-01_task-b_bold.json",
            "/sub-01/sub-01_scans.tsv",
            "/sub-02/func/sub-02_task-a_bold.json",
            "/task-a_bold.json",
            "/task-a_events.json",
            "/task-b_bold.json",
        ];
        let files: Vec<FileEntry> = paths.iter().map(|p| entry(p)).collect();
        let index = suffix_index(&files);
        let mut keys: Vec<(&str, &str)> = files
            .iter()
            .filter_map(|f| Some((f.dir(), f.name.suffix.as_deref()?)))
            .collect();
        keys.extend([
            ("/", "T1w"),
            ("/sub-03/func/", "bold"),
            ("/sub-01/", "bold"),
        ]);
        for (dir, suffix) in keys {
            let want: Vec<u32> = (0..files.len() as u32)
                .filter(|&j| {
                    let g = &files[j as usize];
                    g.dir() == dir && g.name.suffix.as_deref() == Some(suffix)
                })
                .collect();
            let found = index.members(&files, dir, suffix);
            assert_eq!(found, &want[..], "{dir} {suffix}");
        }
        assert_eq!(index.members(&files, "/", "bold"), &[10, 12]);
        assert_eq!(index.members(&files, "/sub-01/func/", "bold"), &[4, 5, 7]);
    }

    /// A file's stem is its path without the extension, for files and directory-files.
    #[test]
    fn path_stem() {
        assert_eq!(
            entry("/sub-01/anat/sub-01_T1w.nii.gz").path_stem(),
            "/sub-01/anat/sub-01_T1w"
        );
        assert_eq!(entry("/README").path_stem(), "/README");
        let mut dir = entry("/sub-01/micr/sub-01_SPIM.ome.zarr/");
        dir.name = parse_name("sub-01_SPIM.ome.zarr", true);
        assert_eq!(dir.path_stem(), "/sub-01/micr/sub-01_SPIM");
    }
}
