//! Rust errors as Python exceptions.

use pyo3::exceptions::{PyFileNotFoundError, PyValueError};
use pyo3::PyErr;

/// A `ValueError` carrying the error's message (with its causes).
pub fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// `FileNotFoundError` when the path is absent, else a `ValueError`.
pub fn dataset_error(path: &std::path::Path, e: impl std::fmt::Display) -> PyErr {
    if !path.exists() {
        PyFileNotFoundError::new_err(format!("{}: no such directory", path.display()))
    } else {
        value_error(format!("{}: {e}", path.display()))
    }
}
