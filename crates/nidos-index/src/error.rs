//! Why an index could not be built or written.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{path}: not a directory")]
    NotADirectory { path: PathBuf },
    #[error("{path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: no dataset found (no directory holding a dataset_description.json)")]
    NoDataset { path: PathBuf },
    #[error("{root}: {source}")]
    Query {
        root: PathBuf,
        #[source]
        source: nidos_dataset::query::QueryError,
    },
    #[error("building the table: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    #[error("writing Parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
}
