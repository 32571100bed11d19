//! Loaders turn bytes into data. They never touch the filesystem themselves: each takes a byte
//! slice (a prefix the caller read) or an `impl Read`, and either returns the parsed value or a
//! [`LoadIssue`] carrying the standard's issue code, so the validator can report it directly.
//!
//! Architecture invariant: no loader panics or allocates without bound on any input. Binary
//! headers are read with checked slicing; compressed input is inflated only as far as needed.
//!
//! | module | input | output | issue codes |
//! |---|---|---|---|
//! | [`json`] | bytes | JSON object | `INVALID_JSON_ENCODING` (also a BOM, non-fatal), `JSON_INVALID`, `JSON_NOT_AN_OBJECT` |
//! | [`tsv`] | reader (plain or gzip) | [`tsv::Table`] | `INVALID_FILE_ENCODING`, `TSV_EMPTY_LINE`, `TSV_EQUAL_ROWS`, `TSV_COLUMN_HEADER_DUPLICATE`, `TSV_ERROR`, `GZ_NOT_GZIPPED`, `INVALID_GZIP`, `FILE_READ` |
//! | [`nifti`] | prefix bytes, or a `.nii.gz` reader | [`nifti::NiftiHeader`] | `NIFTI_HEADER_UNREADABLE` |
//! | [`gzip`] | prefix bytes | [`gzip::GzipHeader`] | `GZ_NOT_GZIPPED`, `INVALID_GZIP` |
//! | [`tiff`] | prefix bytes | [`tiff::TiffInfo`], [`tiff::OmeInfo`] | `TIFF_UNREADABLE` (nidos' own: the standard has none) |
//! | [`bval`], [`bvec`] | bytes | values and shape | `MALFORMED_BVAL`, `MALFORMED_BVEC` |
//!
//! Each parsed type has a `to_value()` giving the matching context field (`json`, `columns`,
//! `nifti_header`, `gzip`, `tiff`, `ome`, `associations.bval` / `bvec`).

use std::fmt;

pub mod bval;
pub mod bvec;
pub mod gzip;
pub mod json;
pub mod nifti;
pub mod tiff;
pub mod tsv;

mod bytes;
mod text;

/// How serious a load issue is: the schema's one severity type (a loader raises errors
/// and warnings; a configuration may later make an issue `Ignore`).
pub use nidos_schema::Severity;

/// A problem found while loading a file: the standard's issue code, a message, and where
/// (1-based line and column, when the format has lines).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadIssue {
    pub code: &'static str,
    pub message: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub severity: Severity,
}

impl LoadIssue {
    /// An error-level issue without location.
    pub fn error(code: &'static str, message: impl Into<String>) -> Self {
        LoadIssue {
            code,
            message: message.into(),
            line: None,
            column: None,
            severity: Severity::Error,
        }
    }

    /// A warning-level issue without location.
    pub fn warning(code: &'static str, message: impl Into<String>) -> Self {
        LoadIssue {
            severity: Severity::Warning,
            ..LoadIssue::error(code, message)
        }
    }

    /// Sets the 1-based line.
    pub fn at_line(mut self, line: usize) -> Self {
        self.line = Some(line);
        self
    }

    /// Sets the 1-based line and column.
    pub fn at(mut self, line: usize, column: usize) -> Self {
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    /// The issue as a JSON object (`code`, `severity`, `message`, and `line`/`column` when
    /// known); the shape the loader tests record as expected output.
    pub fn to_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("code".into(), self.code.into());
        m.insert("severity".into(), self.severity.as_str().into());
        m.insert("message".into(), self.message.clone().into());
        with_position(m, self.line, self.column)
    }
}

/// An issue's JSON object with `line` and `column` added at the end, where known.
pub(crate) fn with_position(
    mut m: serde_json::Map<String, serde_json::Value>,
    line: Option<usize>,
    column: Option<usize>,
) -> serde_json::Value {
    if let Some(l) = line {
        m.insert("line".into(), l.into());
    }
    if let Some(c) = column {
        m.insert("column".into(), c.into());
    }
    serde_json::Value::Object(m)
}

impl fmt::Display for LoadIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)?;
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, " (line {l}, column {c})"),
            (Some(l), None) => write!(f, " (line {l})"),
            _ => Ok(()),
        }
    }
}

impl std::error::Error for LoadIssue {}

/// A successfully loaded value with the non-fatal issues found on the way (for example a
/// byte-order mark in a JSON file, which is reported but does not stop parsing).
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded<T> {
    pub value: T,
    pub issues: Vec<LoadIssue>,
}

impl<T> Loaded<T> {
    /// A value without issues.
    pub fn clean(value: T) -> Self {
        Loaded {
            value,
            issues: Vec::new(),
        }
    }

    /// Maps the value, keeping the issues.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Loaded<U> {
        Loaded {
            value: f(self.value),
            issues: self.issues,
        }
    }
}
