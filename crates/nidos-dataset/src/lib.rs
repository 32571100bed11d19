//! Datasets on disk: the file tree, file names, sidecar inheritance, associations,
//! file loaders, and the lazily built per-file context that rule expressions read.
//!
//! ```ignore
//! use nidos_dataset::{Dataset, OpenOptions};
//! use nidos_expr::Context;
//! let schema = nidos_schema::load_path("schema.json".as_ref())?;
//! let ds = Dataset::open("my-dataset".as_ref(), &schema, &OpenOptions::default())?;
//! for f in ds.files().iter().filter(|f| f.validated()) {
//!     let ctx = ds.context(f);
//!     println!("{} {}", f.path, ctx.lookup("suffix"));
//! }
//! ```
//!
//! Architecture invariants: nothing is read outside the dataset root through a context
//! (`exists()` works on the walked tree; links leaving the dataset are never read); each
//! file's content is parsed at most once per dataset; a bad file is an issue, never a panic.
//!
//! Layers, each module using only those before it (no import cycles):
//! `fs` (with `guarded`, the one guarded open), `filename`, `loaders`, `entry`, `schema_info` (plain types) → `walk` → `index`
//! (lookup indexes) → `dataset` ([`FileTree`]: walk and indexes) → `inherit` (the
//! inheritance search over the tree) → `load` ([`Dataset`]: the tree plus the caches of
//! parsed content; sidecar merging; dataset-level values) → `assoc` (associations) →
//! `context` ([`FileContext`]) → `opened`, `query`. `build_path`, `write` and `prune_fs` (a
//! filesystem that leaves `sourcedata/` and `derivatives/` out) stand apart.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod assoc;
pub mod build_path;
pub mod context;
pub mod dataset;
pub mod entry;
pub mod filename;
pub mod fs;
pub mod guarded;
mod index;
pub mod inherit;
pub mod kinds;
pub mod load;
pub mod loaders;
pub mod opened;
pub mod prune_fs;
pub mod query;
pub mod rules;
pub mod schema_info;
mod walk;
pub mod write;

pub use context::{FileContext, CONTEXT_NAMES};
pub use dataset::{derivative_datasets, FileTree};
pub use entry::{DatasetError, DatasetIssue, FileEntry, OpenOptions, Severity};
pub use filename::{parse_name, NameTable, ParsedName};
pub use fs::{Fs, MemFs, OsFs};
pub use guarded::read_description;
pub use load::sidecar::{SidecarMerge, SidecarOverride};
pub use load::Dataset;
pub use opened::{display_json, locate, open_file_context, OpenedFile};
pub use prune_fs::PruneFs;
pub use rules::rules_for;
pub use schema_info::SchemaInfo;

#[cfg(test)]
mod tests {
    /// The validator shares one dataset across threads (rayon).
    #[test]
    fn dataset_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<crate::Dataset>();
        fn check_send<T: Send>() {}
        check_send::<crate::FileContext<'static>>();
    }
}
