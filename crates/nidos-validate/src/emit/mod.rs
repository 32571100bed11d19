//! The report formats: one emitter per format, all from one model (a [`Report`] of
//! [`crate::Issue`]s, with [`crate::Severity`]), each writing as it goes.
//!
//! - [`text`]: for people, issues grouped by code, then the summary;
//! - [`json`]: the reference validator's shape, compact (issues rendered on the worker
//!   threads) or pretty;
//! - [`sarif`]: SARIF 2.1.0 for code-scanning dashboards, one result at a time, with the
//!   fixes of the run's fix plan ([`Fixes`]);
//! - [`html`]: one self-contained page with filters and charts.
//!
//! [`write`] picks the emitter; [`escape`] makes names from a dataset safe to print.

pub mod escape;
pub mod html;
pub mod json;
mod json_text;
pub mod sarif;
pub mod text;

pub(crate) use json_text::decimal;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use nidos_schema::Schema;

use crate::report::Report;

/// A report format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    /// Compact JSON.
    Json,
    /// Indented JSON.
    JsonPretty,
    Sarif,
    Html,
}

/// One region of a file and the text put in its place (offsets in bytes of the file as
/// it is; regions of one change in order, none overlapping).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replacement {
    pub offset: usize,
    pub length: usize,
    pub text: String,
}

/// A proposed change to one file that repairs an issue.
#[derive(Clone, Copy, Debug)]
pub struct FixView<'a> {
    /// Dataset-relative, with a leading `/`.
    pub path: &'a str,
    pub description: &'a str,
    pub replacements: &'a [Replacement],
}

/// The fixes of a run's issues, by (code, location) of the issue they answer.
pub type Fixes<'a> = BTreeMap<(&'a str, &'a str), Vec<FixView<'a>>>;

/// What a report is written from.
pub struct Emit<'a> {
    /// The dataset directory as given (SARIF anchors its locations there).
    pub root: &'a Path,
    pub report: &'a Report,
    /// Derivative datasets' reports, by folder name.
    pub derivatives: &'a [(String, Report)],
    /// The rules that applied (the text and HTML reports say what they expect of a
    /// field or column).
    pub schema: Option<&'a Schema>,
    /// Fixes of the root dataset's issues (SARIF).
    pub fixes: Option<&'a Fixes<'a>>,
    /// Every location of every issue (text).
    pub verbose: bool,
    /// Terminal colours (text).
    pub color: bool,
}

/// Writes the report in `format`.
pub fn write(out: &mut impl Write, format: Format, e: &Emit<'_>) -> std::io::Result<()> {
    match format {
        Format::Json | Format::JsonPretty => {
            let mut view = e.report.json();
            for (name, r) in e.derivatives {
                view = view.derivative(name, r);
            }
            if format == Format::Json {
                view.write_compact(out)?;
            } else {
                serde_json::to_writer_pretty(&mut *out, &view)?;
            }
            out.write_all(b"\n")
        }
        Format::Html => html::write_html(out, e.report, e.derivatives, e.schema),
        Format::Sarif => {
            let none = Fixes::new();
            let fixes = e.fixes.unwrap_or(&none);
            sarif::write_sarif(out, e.root, e.report, e.derivatives, fixes)?;
            out.write_all(b"\n")
        }
        Format::Text => text::write_report(out, e),
    }
}

/// The code's explanation: the report's message, else the engine's (never empty).
pub(crate) fn code_message(r: &Report, code: &str) -> String {
    crate::explain::explain(code, r.code_messages.get(code).map(String::as_str))
}

/// `1 file`, `2 files`: a count with its word, for the human-readable reports.
pub(crate) fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}
