//! A columnar index of datasets: one row per file the schema accepts, with the dataset
//! it belongs to, every entity as a column, datatype, suffix, extension, path, size and
//! the merged sidecar (as JSON text, and a typed column for each key whose values are
//! scalars of one type). Column names follow bids2table where it has the concept.
//!
//! ```ignore
//! use nidos_index::{find_roots, index_dataset, to_record_batch, write_parquet};
//! let schema = nidos_schema::Schema::bundled()?;
//! let mut sets = Vec::new();
//! for found in find_roots("archive".as_ref())? {
//!     sets.push(index_dataset(&found.root, &found.name, &schema, &Default::default())?);
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
pub use roots::{find_roots, FoundDataset};
pub use rows::{index_dataset, DatasetIndex, FileRow};
pub use table::{to_record_batch, write_parquet, METADATA_PREFIX};
