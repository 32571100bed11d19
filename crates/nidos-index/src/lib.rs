//! A columnar index of datasets: one row per file the schema accepts, with the dataset
//! it belongs to, every entity as a column, datatype, suffix, extension, path, size and
//! the merged sidecar (as JSON text, and a typed column for each key whose values are
//! scalars of one type), and the dataset's `status` (`ok`; `unreadable: …` or `not a
//! dataset: …` on the one row of a dataset that could not be indexed). Column names follow bids2table where it has the concept.
//!
//! ```ignore
//! use nidos_index::{find_roots, index_found, to_record_batch, write_parquet};
//! let schema = nidos_schema::Schema::bundled()?;
//! let mut sets = Vec::new();
//! for found in find_roots("archive".as_ref())? {
//!     // A dataset that cannot be read is one row saying why (its `status`).
//!     sets.push(index_found(&found, &schema, &Default::default()));
//! }
//! let batch = to_record_batch(&sets, &schema)?;
//! write_parquet(&batch, std::fs::File::create("index.parquet")?)?;
//! ```
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod error;
mod roots;
mod rows;
mod table;

pub use error::IndexError;
pub use roots::{find_roots, FoundDataset, Status};
pub use rows::{index_dataset, index_found, DatasetIndex, FileRow};
pub use table::{to_record_batch, write_parquet, METADATA_PREFIX};
