//! `.bvec` files: three rows (x, y, z) of gradient directions separated by whitespace.

use nidos_expr::{Object, Value};

use super::bval::{parse_matrix, with_path};
use super::{LoadIssue, Loaded};

/// A cell is not a number, or the text is not readable.
pub const MALFORMED_BVEC: &str = "MALFORMED_BVEC";

/// A parsed `.bvec` file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bvec {
    /// The rows (normally three: x, y, z).
    pub rows: Vec<Vec<f64>>,
    /// Number of non-blank rows.
    pub n_rows: usize,
    /// Number of values in the first row.
    pub n_cols: usize,
}

/// Parses a `.bvec` file. Rows of unequal length are kept as read (the rules compare shapes).
pub fn read_bvec(bytes: &[u8]) -> Result<Loaded<Bvec>, LoadIssue> {
    let m = parse_matrix(bytes, MALFORMED_BVEC)?;
    Ok(Loaded::clean(Bvec {
        n_rows: m.rows.len(),
        n_cols: m.rows.first().map_or(0, Vec::len),
        rows: m.rows,
    }))
}

impl Bvec {
    /// The `associations.bvec` payload without `path` (the caller adds it).
    pub fn to_value(&self) -> Value {
        let mut o = Object::default();
        o.insert("n_cols".into(), Value::Number(self.n_cols as f64));
        o.insert("n_rows".into(), Value::Number(self.n_rows as f64));
        Value::object(o)
    }

    /// The full `associations.bvec` payload.
    pub fn to_value_with_path(&self, path: &str) -> Value {
        with_path(self.to_value(), path)
    }
}
