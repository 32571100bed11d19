//! Which files a change touches: the files whose recorded inputs changed.
//!
//! A file's result depends on
//! - its own name and content;
//! - the content of the files it used (merged sidecars, associated files: recorded);
//! - the names in the folders on its line (the folders above it, where inheritance
//!   and associations look, and those below it, where a reverse association such as
//!   the data files an events file applies to looks);
//! - when its rules read them ([`crate::cleaned::reads`]): the `dataset` object, its
//!   subject's `subject` object, and the presence of files anywhere (`exists()`);
//! - with HED, the definitions of every sidecar with `HED` entries (tables only).

use std::collections::HashSet;

use nidos_dataset::FileEntry;

use super::pass::FileResult;
use crate::cleaned::reads;

/// What changed between two states of a dataset.
#[derive(Debug, Default)]
pub(crate) struct Changes<'a> {
    /// Files whose content changed (dataset-relative paths).
    pub edited: HashSet<&'a str>,
    /// Paths created, removed or renamed (a rename is its two paths), files or folders.
    pub moved: Vec<&'a str>,
    /// The folder each of `moved` changes the names of: a file's folder, a folder's
    /// self (with trailing `/`).
    pub anchors: Vec<String>,
    /// The `dataset` object changed.
    pub dataset: bool,
    /// The subjects whose `subject` object changed (`sub-01`).
    pub subjects: HashSet<String>,
    /// The HED definitions may have changed: every table is checked again.
    pub hed: bool,
}

/// The folder of a dataset-relative path, with a trailing `/` (`/` for the root).
pub(crate) fn folder(path: &str) -> &str {
    let path = path.trim_end_matches('/');
    match path.rfind('/') {
        Some(i) => &path[..=i],
        None => "/",
    }
}

/// One folder (with trailing `/`) is the other or lies under it.
fn on_one_line(a: &str, b: &str) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// The subject folder of a path (`sub-01` for `/sub-01/anat/x.nii`).
fn subject(path: &str) -> Option<&str> {
    let first = path.trim_start_matches('/').split('/').next()?;
    first.starts_with("sub-").then_some(first)
}

/// Whether `file` (its record, `None` when it has none: a new file) must be checked
/// again after `changes`.
pub(crate) fn touched(
    file: &FileEntry,
    record: Option<&FileResult>,
    changes: &Changes<'_>,
) -> bool {
    let Some(record) = record else {
        return true;
    };
    let path = file.path.as_str();
    if changes.edited.contains(path)
        || record
            .used
            .iter()
            .any(|u| changes.edited.contains(u.as_str()))
    {
        return true;
    }
    if changes.hed && file.name.extension == ".tsv" {
        return true;
    }
    if changes.dataset && record.reads & reads::DATASET != 0 {
        return true;
    }
    if record.reads & reads::SUBJECT != 0
        && subject(path).is_some_and(|s| changes.subjects.contains(s))
    {
        return true;
    }
    if changes.moved.is_empty() {
        return false;
    }
    if record.reads & reads::NAMES != 0 {
        return true;
    }
    let own = folder(path);
    changes.anchors.iter().any(|a| on_one_line(own, a))
        || changes
            .moved
            .iter()
            .any(|m| record.used.iter().any(|u| u == m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_and_lines() {
        assert_eq!(folder("/sub-01/anat/x.nii"), "/sub-01/anat/");
        assert_eq!(folder("/x.json"), "/");
        assert_eq!(folder("/sub-01/"), "/");
        assert!(on_one_line("/sub-01/anat/", "/"));
        assert!(on_one_line("/", "/sub-01/anat/"));
        assert!(!on_one_line("/sub-01/anat/", "/sub-02/"));
        assert_eq!(subject("/sub-01/anat/x.nii"), Some("sub-01"));
        assert_eq!(subject("/participants.tsv"), None);
    }
}
