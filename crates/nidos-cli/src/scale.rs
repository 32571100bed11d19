//! How large a dataset is, judged before the walk from one directory listing. The run
//! fits its memory (`huge_pages`) and its worker threads (`workers`) to the answer.

use std::path::Path;

/// Top-level entries from which a dataset counts as large (about 250 subjects).
const LARGE: usize = 256;

/// Whether `dataset` holds at least [`LARGE`] top-level entries (subjects, mostly).
/// An unreadable directory counts as small; the walk reports it.
pub fn is_large(dataset: &Path) -> bool {
    std::fs::read_dir(dataset).is_ok_and(|entries| entries.take(LARGE).count() >= LARGE)
}
