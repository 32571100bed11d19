//! `nidos fix`: applies the repairs the schema declares next to its issues (`fix:` on a
//! check, an error or a field requirement), the way code linters apply their fixes.
//!
//! ```ignore
//! let done = nidos_validate::validate("ds".as_ref(), &nidos_validate::Request::default())?;
//! let plan = nidos_fix::plan(&done, &nidos_fix::Options::default())?;
//! for edit in &plan.edits {
//!     print!("{}", nidos_fix::unified_diff(edit));
//! }
//! let lock = nidos_fix::DatasetLock::acquire("ds".as_ref(), std::time::Duration::from_secs(60), |_| {})?;
//! nidos_fix::apply(&plan, &lock)?; // each file swapped in atomically after a last check
//! ```
//!
//! Invariants: only JSON and TSV files are ever written (never a data file); a symbolic
//! link, or a file reached through one, is never written (it is reported instead); JSON
//! keeps its key order, every key the fix does not mean to change, and the file's
//! layout and line ends; every edit is idempotent, so a second run plans nothing; every
//! change answers an issue the validator reports. A run holds the dataset's lock; a file
//! changed by someone else while the run writes is refused, never overwritten; a
//! rewritten file keeps its owner, group and mode.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod apply;
mod diff;
mod json_edit;
mod lock;
mod ops;
mod plan;
mod regions;
mod text_edit;

use std::path::PathBuf;

pub use apply::{apply, Applied};
pub use diff::{escape_name, unified_diff};
pub use lock::DatasetLock;
pub use plan::{plan, plan_for, Change, FileEdit, Manual, Options, Plan};
pub use regions::replacements;

/// Why planning or applying failed.
#[derive(Debug, thiserror::Error)]
pub enum FixError {
    #[error(transparent)]
    Dataset(#[from] nidos_dataset::DatasetError),
    #[error("version {version} is not one the schema knows ({known})")]
    Version { version: String, known: String },
    #[error("{0} is read-only: nothing was written")]
    ReadOnly(PathBuf),
    #[error("{0} changed since the fixes were planned: nothing was written")]
    ChangedMeanwhile(PathBuf),
    #[error("another `nidos fix --apply`{holder} is writing {root}; waited {waited:.0} s, nothing was written")]
    Locked {
        root: PathBuf,
        holder: String,
        waited: f64,
    },
    #[error("{path} may not be written ({why}): nothing was written")]
    Unsafe { path: String, why: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("writing failed after {} file(s) were written: {source}", written.len())]
    Write {
        written: Vec<String>,
        source: nidos_dataset::write::ReplaceError,
    },
}
