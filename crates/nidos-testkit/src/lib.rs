//! Helpers shared by the tests of the nidos crates (each takes it as a dev-dependency):
//! the case files and case folders of a data directory, listed in a stable order, and
//! copies of folders.
//! Test code: it panics on what it cannot read.

use std::path::{Path, PathBuf};

/// The entries of `dir` that `keep` accepts, sorted by path. Panics if `dir` cannot be
/// read.
pub fn sorted_entries(dir: &Path, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            e.unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .path()
        })
        .filter(|p| keep(p))
        .collect();
    out.sort();
    out
}

/// The files of `dir` whose extension is `ext` (`"yaml"`, without the dot), sorted.
pub fn files_with_extension(dir: &Path, ext: &str) -> Vec<PathBuf> {
    sorted_entries(dir, |p| p.extension().is_some_and(|x| x == ext))
}

/// The sub-directories of `dir`, sorted.
pub fn sub_directories(dir: &Path) -> Vec<PathBuf> {
    sorted_entries(dir, Path::is_dir)
}

/// Copies the folder `from` to `to` (created), files and sub-folders. Panics on what it
/// cannot read or write.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
