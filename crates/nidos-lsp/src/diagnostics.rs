//! A validation's issues as the editor's diagnostics: each at its exact place in its
//! file (the key or the value in JSON, the cell in TSV, the start of any other file),
//! and issues of a data file about a sidecar key also on the sidecar that holds (or
//! should hold) that key.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString, Range};
use nidos_validate::{Issue, Report, Severity};

use crate::json_map::{self, Member};
use crate::text::LineIndex;
use crate::tsv_map;
use crate::workspace::{Run, Workspace};

/// The diagnostics of every file that has any, by absolute path.
pub fn of_run(ws: &Workspace, run: &Run) -> HashMap<PathBuf, Vec<Diagnostic>> {
    let report = &run.validation.report;
    let mut by_file: BTreeMap<String, Vec<&Issue>> = BTreeMap::new();
    for issue in &report.issues {
        if issue.severity == Severity::Ignore {
            continue;
        }
        by_file
            .entry(file_of(&issue.location).to_owned())
            .or_default()
            .push(issue);
    }
    let mut out: HashMap<PathBuf, Vec<Diagnostic>> = HashMap::new();
    // Issues of data files placed on their sidecars, counted per sidecar and issue.
    let mut on_sidecars: BTreeMap<(String, String, String), (Diagnostic, usize)> = BTreeMap::new();
    let mut sidecars: HashMap<String, Placer<'_>> = HashMap::new();
    for (rel, issues) in &by_file {
        let path = ws.absolute(rel);
        let placer = Placer::new(ws, &path);
        let diags = out.entry(path.clone()).or_default();
        for issue in issues {
            diags.push(diagnostic(report, issue, placer.place(issue)));
            if let Some((sidecar, range)) = sidecar_place(ws, run, rel, issue, &mut sidecars) {
                let key = (
                    sidecar,
                    issue.code().to_string(),
                    issue.sub_code().to_string(),
                );
                on_sidecars
                    .entry(key)
                    .or_insert_with(|| (diagnostic(report, issue, range), 0))
                    .1 += 1;
            }
        }
    }
    for ((sidecar, _, _), (mut d, n)) in on_sidecars {
        d.message = if n == 1 {
            format!("{} (in a file that inherits this sidecar)", d.message)
        } else {
            format!("{} (in {n} files that inherit this sidecar)", d.message)
        };
        out.entry(ws.absolute(&sidecar)).or_default().push(d);
    }
    out
}

/// The file an issue location names (the dataset itself: its description).
fn file_of(location: &str) -> &str {
    if location == "/" || location.is_empty() {
        "/dataset_description.json"
    } else {
        location
    }
}

fn diagnostic(report: &Report, issue: &Issue, range: Range) -> Diagnostic {
    let code = issue.code().to_string();
    let mut message = issue
        .issue_message()
        .or_else(|| report.fallback_message(issue))
        .or_else(|| report.code_messages.get(&code).map(String::as_str))
        .unwrap_or(&code)
        .trim()
        .to_owned();
    if !issue.sub_code().is_empty() && !message.contains(issue.sub_code().as_str()) {
        message = format!("{}: {message}", issue.sub_code().as_str());
    }
    Diagnostic {
        range,
        severity: Some(match issue.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            _ => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(code)),
        source: Some("nidos".to_owned()),
        message,
        ..Diagnostic::default()
    }
}

/// Codes whose issue is about a value rather than a key.
fn about_value(code: &str) -> bool {
    [
        "VALUE",
        "SCHEMA",
        "TYPE",
        "INVALID",
        "FORMAT",
        "MISMATCH",
        "DEPRECATED",
    ]
    .iter()
    .any(|w| code.contains(w))
}

/// The key an issue names: its sub-code, or the word before a colon that starts its
/// message (`RepetitionTime: must be …`).
fn key_named(issue: &Issue) -> Option<String> {
    if !issue.sub_code().is_empty() {
        return Some(issue.sub_code().to_string());
    }
    let msg = issue.issue_message()?;
    let head = msg.split(':').next()?.trim();
    let head = head.split(['/', '[', ' ']).next()?;
    (!head.is_empty() && head.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then(|| head.to_owned())
}

/// Places issues in one file's text.
struct Placer<'t> {
    text: Option<std::borrow::Cow<'t, str>>,
    lines: Option<LineIndex>,
    members: Vec<Member>,
    tsv: bool,
}

impl<'t> Placer<'t> {
    fn new(ws: &'t Workspace, path: &std::path::Path) -> Placer<'t> {
        let name = path.to_string_lossy();
        let json = name.ends_with(".json");
        let tsv = name.ends_with(".tsv");
        let text = if json || tsv { ws.text_of(path) } else { None };
        let lines = text.as_deref().map(LineIndex::new);
        let members = match (&text, json) {
            (Some(t), true) => json_map::members(t),
            _ => Vec::new(),
        };
        Placer {
            text,
            lines,
            members,
            tsv,
        }
    }

    fn place(&self, issue: &Issue) -> Range {
        let (Some(text), Some(lines)) = (self.text.as_deref(), &self.lines) else {
            return Range::default();
        };
        if self.tsv {
            return place_in_table(text, lines, issue);
        }
        self.place_key(key_named(issue).as_deref(), about_value(issue.code()))
    }

    /// The range of `key`'s value (`value`) or name in a JSON document; for a key that
    /// is missing, the document's opening brace.
    fn place_key(&self, key: Option<&str>, value: bool) -> Range {
        let (Some(text), Some(lines)) = (self.text.as_deref(), &self.lines) else {
            return Range::default();
        };
        if let Some(m) = key.and_then(|k| json_map::find_key(&self.members, k)) {
            let (s, e) = if value { m.value } else { m.key };
            return lines.range(text, s, e);
        }
        match text.find('{') {
            Some(i) => lines.range(text, i, i + 1),
            None => Range::default(),
        }
    }
}

/// The cell (or line, or header cell) of a table an issue names.
fn place_in_table(text: &str, lines: &LineIndex, issue: &Issue) -> Range {
    let header = lines.line(text, 0).map(|(_, l)| l).unwrap_or("");
    let column = key_named(issue)
        .and_then(|k| header.split('\t').position(|h| h == k))
        .or_else(|| {
            // A column named in the message.
            let msg = issue.issue_message()?;
            header
                .split('\t')
                .position(|h| !h.is_empty() && msg.contains(&format!("'{h}'")))
        });
    let row = issue
        .line_number()
        .map(|n| n.saturating_sub(1))
        .unwrap_or(0);
    let Some((start, line)) = lines.line(text, row) else {
        return Range::default();
    };
    match column.and_then(|c| tsv_map::cells(start, line).get(c).copied()) {
        Some((s, e)) => lines.range(text, s, e),
        None => lines.range(text, start, start + line.len()),
    }
}

/// Where an issue of a data file about a sidecar key also belongs: the sidecar that
/// set the key's value, or, for a missing key, the deepest sidecar that applies.
/// `placers` keeps each sidecar's text once for the whole run.
fn sidecar_place<'w>(
    ws: &'w Workspace,
    run: &Run,
    rel: &str,
    issue: &Issue,
    placers: &mut HashMap<String, Placer<'w>>,
) -> Option<(String, Range)> {
    if rel.ends_with(".json") || rel.ends_with(".tsv") {
        return None;
    }
    let key = key_named(issue)?;
    run.validation.schema.metadata_def(&key)?;
    let ds = &run.validation.dataset;
    let ctx = ds.context(ds.find(rel)?);
    let merge = ctx.sidecar_merge();
    let sidecar = merge
        .sources
        .get(&key)
        .or_else(|| merge.files.last())?
        .clone();
    let placer = placers
        .entry(sidecar.clone())
        .or_insert_with(|| Placer::new(ws, &ws.absolute(&sidecar)));
    let range = placer.place_key(Some(&key), about_value(issue.code()));
    Some((sidecar, range))
}
