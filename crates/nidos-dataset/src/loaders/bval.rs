//! `.bval` files: one row of b-values separated by whitespace (FSL layout).

use nidos_expr::{Object, Value};

use super::text::check_utf8;
use super::{LoadIssue, Loaded};

/// A cell is not a number, or the text is not readable.
pub const MALFORMED_BVAL: &str = "MALFORMED_BVAL";

/// A parsed `.bval` file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bval {
    /// The numbers of the first row.
    pub values: Vec<f64>,
    /// Number of non-blank rows.
    pub n_rows: usize,
    /// Number of values in the first row.
    pub n_cols: usize,
}

/// A whitespace-separated numeric matrix: rows are non-blank lines.
pub(crate) struct Matrix {
    pub rows: Vec<Vec<f64>>,
}

/// Parses whitespace-separated numbers; blank lines are skipped (LF or CRLF line ends).
pub(crate) fn parse_matrix(bytes: &[u8], code: &'static str) -> Result<Matrix, LoadIssue> {
    let text = check_utf8(bytes.strip_prefix(super::text::UTF8_BOM).unwrap_or(bytes))
        .map_err(|(m, l, c)| LoadIssue::error(code, m).at(l, c))?;
    let mut rows = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        let line_no = i + 1;
        let line = line.strip_suffix('\r').unwrap_or(line);
        let mut row = Vec::new();
        let mut col = 1usize;
        let mut rest = line;
        while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
            col += rest.get(..start).map_or(0, |s| s.chars().count());
            let tail = rest.get(start..).unwrap_or("");
            let end = tail.find(char::is_whitespace).unwrap_or(tail.len());
            let tok = tail.get(..end).unwrap_or("");
            match parse_number(tok) {
                Some(v) => row.push(v),
                None => {
                    return Err(
                        LoadIssue::error(code, format!("{tok:?} is not a number")).at(line_no, col)
                    )
                }
            }
            col += tok.chars().count();
            rest = tail.get(end..).unwrap_or("");
        }
        if !row.is_empty() {
            rows.push(row);
        }
    }
    Ok(Matrix { rows })
}

/// A finite decimal number (`12`, `-0.5`, `1e3`); `nan`, `inf` and anything else are rejected.
fn parse_number(tok: &str) -> Option<f64> {
    let ok = tok
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'));
    if !ok {
        return None;
    }
    tok.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Parses a `.bval` file.
pub fn read_bval(bytes: &[u8]) -> Result<Loaded<Bval>, LoadIssue> {
    let m = parse_matrix(bytes, MALFORMED_BVAL)?;
    let values = m.rows.first().cloned().unwrap_or_default();
    Ok(Loaded::clean(Bval {
        n_cols: values.len(),
        n_rows: m.rows.len(),
        values,
    }))
}

impl Bval {
    /// The `associations.bval` payload without `path` (the caller adds it).
    pub fn to_value(&self) -> Value {
        let mut o = Object::default();
        o.insert("n_cols".into(), Value::Number(self.n_cols as f64));
        o.insert("n_rows".into(), Value::Number(self.n_rows as f64));
        o.insert(
            "values".into(),
            Value::array(self.values.iter().map(|&v| Value::Number(v)).collect()),
        );
        Value::object(o)
    }

    /// The full `associations.bval` payload.
    pub fn to_value_with_path(&self, path: &str) -> Value {
        with_path(self.to_value(), path)
    }
}

pub(crate) fn with_path(v: Value, path: &str) -> Value {
    let mut o = Object::default();
    o.insert("path".into(), Value::str(path));
    if let Some(inner) = v.as_object() {
        for (k, v) in inner {
            o.insert(k.clone(), v.clone());
        }
    }
    Value::object(o)
}
