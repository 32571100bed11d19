//! The walked tree of a dataset and its lookup indexes: which files and directories
//! there are, found by path, suffix or entities. Nothing here reads a file's content
//! (that is [`crate::load`], the layer above, which owns the caches).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use crate::entry::{DatasetError, DatasetIssue, FileEntry, OpenOptions};
use crate::filename::{datatype_of, parse_name, ParsedName};
use crate::fs::{Fs, Kind};
use crate::index::{entity_index, suffix_index, EntityIndex, SuffixIndex};
use crate::kinds::Kinds;
use crate::schema_info::SchemaInfo;

/// A walked dataset: its files sorted by path, its directories and the indexes that
/// inheritance lookups use.
pub struct FileTree {
    pub(crate) root: PathBuf,
    pub(crate) fs: Arc<dyn Fs>,
    pub(crate) opts: OpenOptions,
    pub(crate) info: Arc<SchemaInfo>,
    pub(crate) files: Vec<FileEntry>,
    /// Directory → suffix → indices of the files directly in it with that suffix (the
    /// candidates of inheritance lookups, found without scanning the directory).
    pub(crate) by_suffix: SuffixIndex,
    /// [`crate::index::entity_key`] (a hash of directory, suffix, extension and sorted
    /// entities) → files, so a lookup tries each subset of a file's entities instead of
    /// every file with the suffix. Lookups check the files they find.
    pub(crate) by_entities: EntityIndex,
    pub(crate) entity_hasher: foldhash::fast::RandomState,
    /// Each file's kind (suffix, extension, datatype).
    pub(crate) kinds: Kinds,
    /// File numbers by a hash of their path ([`FileTree::index_of`]), made when first
    /// needed: only the numbers are kept (4 bytes and a control byte per slot), the
    /// paths compared are the files'.
    by_path: OnceLock<hashbrown::HashTable<u32>>,
    /// Whether some directory is listed as a file (with a trailing `/`).
    dir_files: bool,
    /// Every directory path (without trailing `/`; the root is absent).
    pub(crate) dir_paths: HashSet<String>,
    pub(crate) issues: Vec<DatasetIssue>,
    pub(crate) sub_dirs: Vec<String>,
    /// `sub-XX` → its `ses-YY` directories.
    pub(crate) ses_dirs: HashMap<String, Vec<String>>,
}

impl std::fmt::Debug for FileTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileTree")
            .field("root", &self.root)
            .field("files", &self.files.len())
            .field("issues", &self.issues.len())
            .finish()
    }
}

impl FileTree {
    /// Walks the dataset at `root` with the brand, directory rules and entities of `info`
    /// and builds the indexes.
    pub(crate) fn walk(
        root: &Path,
        info: Arc<SchemaInfo>,
        opts: &OpenOptions,
    ) -> Result<FileTree, DatasetError> {
        let fs = opts.fs.clone();
        let canon = fs.canonicalize(root).map_err(|source| DatasetError::Root {
            path: root.to_path_buf(),
            source,
        })?;
        let meta = fs.metadata(&canon).map_err(|source| DatasetError::Root {
            path: root.to_path_buf(),
            source,
        })?;
        if meta.kind != Some(crate::fs::Kind::Dir) {
            return Err(DatasetError::NotADirectory(root.to_path_buf()));
        }
        let walked = crate::walk::walk(fs.as_ref(), &canon, &info);
        let mut files = walked.files;
        // Paths are unique: an unstable sort gives the same order without a scratch copy.
        files.par_sort_unstable_by(|a, b| a.path.cmp(&b.path));
        files.shrink_to_fit();
        files.par_iter_mut().for_each(|f| {
            f.datatype = datatype_of(&f.path, &info.names).map(str::to_string);
        });
        // The two lookup indexes are built side by side.
        let entity_hasher = foldhash::fast::RandomState::default();
        let ((by_entities, by_suffix), kinds) = rayon::join(
            || {
                rayon::join(
                    || entity_index(&files, &entity_hasher),
                    || suffix_index(&files),
                )
            },
            || Kinds::of(&files),
        );
        let mut sub_dirs: Vec<String> = walked
            .dirs
            .iter()
            .filter_map(|d| d.strip_prefix('/'))
            .filter(|d| !d.contains('/') && d.starts_with("sub-"))
            .map(str::to_string)
            .collect();
        sub_dirs.sort();
        let mut ses_dirs: HashMap<String, Vec<String>> = HashMap::new();
        for d in &walked.dirs {
            let parts: Vec<&str> = d.trim_start_matches('/').split('/').collect();
            if let [sub, ses] = parts.as_slice() {
                if sub.starts_with("sub-") && ses.starts_with("ses-") {
                    ses_dirs
                        .entry(sub.to_string())
                        .or_default()
                        .push(ses.to_string());
                }
            }
        }
        for v in ses_dirs.values_mut() {
            v.sort();
        }
        let mut issues = walked.issues;
        issues.sort();
        let dir_files = files.iter().any(|f| f.is_dir);
        Ok(FileTree {
            root: canon,
            fs,
            opts: opts.clone(),
            info,
            files,
            by_suffix,
            by_entities,
            entity_hasher,
            kinds,
            by_path: OnceLock::new(),
            dir_files,
            dir_paths: walked.dirs.into_iter().collect(),
            issues,
            sub_dirs,
            ses_dirs,
        })
    }

    /// The kind of file `idx` (see [`crate::kinds`]): files of one suffix, extension and
    /// datatype share it. `None` past the last file.
    pub fn kind_of(&self, idx: usize) -> Option<u32> {
        self.kinds.of_file(idx)
    }

    /// How many kinds of files the dataset has.
    pub fn kind_count(&self) -> usize {
        self.kinds.count()
    }

    /// The dataset root (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// All files, sorted by path (ignored and opaque ones included, flagged).
    pub fn files(&self) -> &[FileEntry] {
        &self.files
    }

    /// Problems found while walking (unreadable entries, links).
    pub fn issues(&self) -> Vec<DatasetIssue> {
        self.issues.clone()
    }

    /// The schema facts in use.
    pub fn schema_info(&self) -> &Arc<SchemaInfo> {
        &self.info
    }

    /// The options the dataset was opened with.
    pub fn options(&self) -> &OpenOptions {
        &self.opts
    }

    /// The subject folders (`sub-01`), sorted.
    pub fn sub_dirs(&self) -> &[String] {
        &self.sub_dirs
    }

    /// A file by dataset-relative path (`/sub-01/anat/x.nii` or `sub-01/anat/x.nii`).
    pub fn find(&self, path: &str) -> Option<&FileEntry> {
        self.index_of(path).map(|i| &self.files[i])
    }

    /// The index of a file in [`FileTree::files`]. A directory treated as a file is found
    /// with or without its trailing `/`.
    pub fn index_of(&self, path: &str) -> Option<usize> {
        let owned;
        let path = if path.starts_with('/') {
            path
        } else {
            owned = format!("/{path}");
            &owned
        };
        self.find_exact(path).or_else(|| {
            if path.ends_with('/') || !self.dir_files {
                return None;
            }
            self.find_exact(&format!("{path}/"))
                .filter(|&i| self.files[i].is_dir)
        })
    }

    /// The index of the file whose path is `path`, found by the hash of the path.
    fn find_exact(&self, path: &str) -> Option<usize> {
        let by_path = self.by_path.get_or_init(|| path_table(&self.files));
        look_up(&self.files, by_path, path)
    }

    /// Subject directories (`sub-01`, …) at the root, sorted.
    pub fn subject_dirs(&self) -> &[String] {
        &self.sub_dirs
    }

    /// Every directory of the dataset (`/sub-01/anat`, no trailing `/`), sorted.
    pub fn directories(&self) -> Vec<&str> {
        let mut dirs: Vec<&str> = self.dir_paths.iter().map(String::as_str).collect();
        dirs.sort_unstable();
        dirs
    }

    /// Whether a dataset-relative path (leading `/`, no `..`) names a file or directory.
    pub fn path_exists(&self, path: &str) -> bool {
        let p = path.trim_end_matches('/');
        p.is_empty() || self.index_of(p).is_some() || self.dir_paths.contains(p)
    }

    /// The absolute path of a dataset-relative path.
    pub(crate) fn abs(&self, rel: &str) -> PathBuf {
        self.root
            .join(rel.trim_start_matches('/').trim_end_matches('/'))
    }

    /// The datatypes of validated files, sorted.
    pub fn datatypes(&self) -> Vec<String> {
        let set: BTreeSet<&str> = self.validated_datatypes().collect();
        set.into_iter().map(str::to_string).collect()
    }

    /// The datatype of each validated file that has one (repeated, in file order).
    fn validated_datatypes(&self) -> impl Iterator<Item = &str> {
        self.files
            .iter()
            .filter(|f| f.validated())
            .filter_map(|f| f.datatype.as_deref())
    }

    /// The modalities of the datatypes present, sorted.
    pub fn modalities(&self) -> Vec<String> {
        let set: BTreeSet<&str> = self
            .validated_datatypes()
            .filter_map(|d| self.info.modalities.get(d).map(String::as_str))
            .collect();
        set.into_iter().map(str::to_string).collect()
    }

    /// [`derivative_datasets`] of this dataset, read through its filesystem.
    pub fn derivative_datasets(&self) -> Vec<String> {
        derivative_datasets(self.fs.as_ref(), &self.root)
    }

    /// Parses a name the way the walker does (used for paths not in the tree).
    pub fn parse_name(name: &str, is_dir: bool) -> ParsedName {
        parse_name(name, is_dir)
    }

    /// Resolves `path` under rule `rule` (see [`nidos_expr::Context::exists`]) from the file at
    /// `idx`; `None` for an unknown rule.
    pub fn exists_from(&self, idx: usize, rule: &str, path: &str) -> Option<bool> {
        let file = self.files.get(idx);
        let (base, rel): (String, &str) = match rule {
            "dataset" => (String::new(), path),
            "stimuli" => ("/stimuli".into(), path),
            "subject" => {
                let sub = file.and_then(|f| subject_of(&f.path));
                match sub {
                    Some(s) => (format!("/{s}"), path),
                    None => return Some(false),
                }
            }
            "file" => match file {
                Some(f) => (f.dir().trim_end_matches('/').to_string(), path),
                None => return Some(false),
            },
            r if r.ends_with("-uri") => {
                // `<scheme>-uri`: a URI of that scheme naming this dataset (empty
                // dataset name); schemes compare case-insensitively (RFC 3986).
                let wanted = r.trim_end_matches("-uri");
                let Some((scheme, rest)) = path.split_once(':') else {
                    return Some(false);
                };
                if !scheme.eq_ignore_ascii_case(wanted) {
                    return Some(false);
                }
                let Some((dsname, rel)) = rest.split_once(':') else {
                    return Some(false);
                };
                if !dsname.is_empty() {
                    return Some(false);
                }
                (String::new(), rel)
            }
            _ => return None,
        };
        let joined = if rel.starts_with('/') && rule == "dataset" {
            rel.to_string()
        } else {
            format!("{base}/{rel}")
        };
        match normalize(&joined) {
            Some(p) => Some(self.path_exists(&p)),
            None => Some(false),
        }
    }
}

/// The derivative datasets of the dataset at `root`: the `derivatives/<name>` directories
/// holding a `dataset_description.json` file, as `derivatives/<name>`, sorted. The one
/// finder of the crate and the command line (`validate --recursive`, queries with
/// derivatives). It reads through `fs`, not the walked tree, so it finds them when the
/// walk left `derivatives/` out (`validate --prune`). As the walk does, it skips names
/// starting with `.` and links that leave the dataset (nothing outside the root is read).
pub fn derivative_datasets(fs: &dyn Fs, root: &Path) -> Vec<String> {
    let Ok(root) = fs.canonicalize(root) else {
        return Vec::new();
    };
    let base = root.join("derivatives");
    let Ok(mut names) = fs.read_dir(&base) else {
        return Vec::new();
    };
    names.sort_unstable();
    let is = |p: &Path, kind: Kind| fs.metadata(p).is_ok_and(|m| m.kind == Some(kind));
    names
        .into_iter()
        .filter(|name| !name.starts_with('.'))
        .filter(|name| {
            let dir = base.join(name);
            fs.canonicalize(&dir).is_ok_and(|c| c.starts_with(&root))
                && is(&dir, Kind::Dir)
                && is(&dir.join("dataset_description.json"), Kind::File)
        })
        .map(|name| format!("derivatives/{name}"))
        .collect()
}

/// Collapses `.` and `..`; `None` when the path climbs above the root.
fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            c => parts.push(c),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// The numbers of `files` in a table by the hash of their paths (the hashes made on the
/// workers). Files past `u32::MAX` are left out ([`look_up`] searches for those).
fn path_table(files: &[FileEntry]) -> hashbrown::HashTable<u32> {
    let hashes: Vec<u64> = files
        .par_iter()
        .map(|f| PATH_HASH.hash_one(f.path.as_str()))
        .collect();
    let mut table = hashbrown::HashTable::with_capacity(hashes.len());
    let rehash = |&i: &u32| hashes.get(i as usize).copied().unwrap_or(0);
    for (i, &h) in hashes.iter().enumerate() {
        if let Ok(i) = u32::try_from(i) {
            table.insert_unique(h, i, rehash);
        }
    }
    table
}

/// The file of `files` (sorted by path) whose path is `path`, through `by_path` (see
/// [`path_table`]); by binary search past the files it holds.
fn look_up(files: &[FileEntry], by_path: &hashbrown::HashTable<u32>, path: &str) -> Option<usize> {
    let found = by_path.find(PATH_HASH.hash_one(path), |&i| {
        files.get(i as usize).is_some_and(|f| f.path == path)
    });
    match found {
        Some(&i) => Some(i as usize),
        None if files.len() <= u32::MAX as usize => None,
        None => files.binary_search_by(|f| f.path.as_str().cmp(path)).ok(),
    }
}

/// The hasher of [`FileTree::index_of`]'s paths.
const PATH_HASH: foldhash::fast::FixedState =
    foldhash::fast::FixedState::with_seed(0x006e_6964_6f73);

/// The subject directory (`sub-01`) a dataset-relative path is under.
pub(crate) fn subject_of(path: &str) -> Option<&str> {
    let first = path.trim_start_matches('/').split('/').next()?;
    (first.starts_with("sub-") && path.trim_start_matches('/').len() > first.len()).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::MemFs;

    /// Every path is found through the table, with or without other paths of the same
    /// hash; an absent path is not found.
    #[test]
    fn paths_are_found_by_hash() {
        let paths = [
            "/README",
            "/sub-01/anat/a.nii",
            "/sub-01/anat/b.nii",
            "/sub-02/",
        ];
        let files: Vec<FileEntry> = paths.iter().map(|p| FileEntry::at(p)).collect();
        let table = path_table(&files);
        for (i, p) in paths.iter().enumerate() {
            assert_eq!(look_up(&files, &table, p), Some(i), "{p}");
        }
        assert_eq!(look_up(&files, &table, "/sub-01/anat/c.nii"), None);
        assert_eq!(look_up(&files, &table, "/sub-02"), None);
        // Every number under the hash of `/README`, as if all paths collided there: the
        // look-up compares paths and picks `/README`'s own number among them; the other
        // paths, looked up by their own hashes, are not there.
        let mut collided = hashbrown::HashTable::new();
        for i in (0..files.len() as u32).rev() {
            collided.insert_unique(PATH_HASH.hash_one("/README"), i, |_| {
                PATH_HASH.hash_one("/README")
            });
        }
        assert_eq!(look_up(&files, &collided, "/README"), Some(0));
        assert_eq!(look_up(&files, &collided, "/sub-01/anat/b.nii"), None);
    }

    /// Derivative datasets: directories under `derivatives/` with a description file,
    /// links inside the dataset followed, dot names and links leaving it skipped.
    #[test]
    fn derivative_datasets_found() {
        let mut fs = MemFs::new();
        let desc = "dataset_description.json";
        fs.add_file("/ds/dataset_description.json", "{}");
        fs.add_file(format!("/ds/derivatives/b/{desc}"), "{}");
        fs.add_file(format!("/ds/derivatives/a/{desc}"), "{}");
        fs.add_file("/ds/derivatives/no-desc/x.txt", "x");
        fs.add_dir(format!("/ds/derivatives/desc-is-dir/{desc}"));
        fs.add_file(format!("/ds/derivatives/.hidden/{desc}"), "{}");
        fs.add_file(format!("/elsewhere/{desc}"), "{}");
        fs.add_symlink("/ds/derivatives/outside", "../../elsewhere");
        fs.add_file(format!("/ds/sourcedata/c/{desc}"), "{}");
        fs.add_symlink("/ds/derivatives/inside", "../sourcedata/c");
        fs.add_file("/ds/derivatives/file.txt", "x");
        assert_eq!(
            derivative_datasets(&fs, Path::new("/ds")),
            ["derivatives/a", "derivatives/b", "derivatives/inside"]
        );
        assert!(derivative_datasets(&fs, Path::new("/ds/derivatives/a")).is_empty());
        assert!(derivative_datasets(&fs, Path::new("/absent")).is_empty());
    }
}
