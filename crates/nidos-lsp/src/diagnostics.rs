//! A validation's issues as the editor's diagnostics: each at its exact place in its
//! file (the key or the value in JSON, the cell in TSV, the start of any other file),
//! and issues of a data file about a sidecar key also on the sidecar that holds (or
//! should hold) that key, counted over the files that inherit it.
//!
//! [`Published`] keeps what it placed, per file, so an update re-places only the files
//! whose issues or text changed, and re-counts only the sidecars they reach.

use std::collections::{BTreeMap, HashMap, HashSet};

use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString, Range};
use nidos_dataset::Dataset;
use nidos_schema::Schema;
use nidos_validate::incremental::Delta;
use nidos_validate::{Issue, Report, Severity};

use crate::json_map::{self, Member};
use crate::text::LineIndex;
use crate::tsv_map;
use crate::workspace::Workspace;

/// An issue of a data file placed on a sidecar.
#[derive(Clone, Debug, PartialEq)]
struct Contribution {
    sidecar: String,
    key: String,
    value: bool,
    template: Diagnostic,
}

/// What one file's issues give.
#[derive(Default)]
struct FileDiags {
    /// The issues they were made from (to tell whether they changed).
    issues: Vec<Issue>,
    own: Vec<Diagnostic>,
    contributions: Vec<Contribution>,
}

/// Aggregation key of sidecar diagnostics: (sidecar, code, sub-code).
type SidecarKey = (String, String, String);

/// The diagnostics placed so far, and the last ones published per file.
#[derive(Default)]
pub struct Published {
    files: HashMap<String, FileDiags>,
    /// Sidecar diagnostics: the first template and how many files contribute.
    counts: BTreeMap<SidecarKey, (Contribution, usize)>,
    /// The last published list of every file that has one.
    sent: HashMap<String, Vec<Diagnostic>>,
}

/// The inputs of an update.
pub struct Inputs<'a> {
    pub ws: &'a Workspace,
    pub report: &'a Report,
    pub dataset: &'a Dataset,
    pub schema: &'a Schema,
}

/// What an update looks at again.
#[derive(Clone, Copy)]
pub enum Changed<'a> {
    /// Every file (after a whole validation).
    All,
    /// The files whose text changed, and the report's changes since the last update
    /// (in the order they happened).
    Since {
        edited: &'a HashSet<String>,
        deltas: &'a [Delta],
    },
}

impl Published {
    /// Updates after a validation. Returns the files whose diagnostics differ from
    /// those last published, with their new lists (empty: cleared).
    pub fn update(
        &mut self,
        inp: &Inputs<'_>,
        changed: Changed<'_>,
    ) -> Vec<(String, Vec<Diagnostic>)> {
        // The issues of the files to look at again, by file.
        let (mut fresh, look): (HashMap<String, Vec<Issue>>, Vec<String>) = match changed {
            Changed::All => (by_file(inp.report), self.files.keys().cloned().collect()),
            Changed::Since { edited, deltas } => (self.patched(edited, deltas), Vec::new()),
        };
        let edited = |rel: &str| match changed {
            Changed::All => false,
            Changed::Since { edited, .. } => edited.contains(rel),
        };
        let mut look: Vec<String> = look.into_iter().chain(fresh.keys().cloned()).collect();
        look.sort();
        look.dedup();
        let mut touched: HashSet<String> = HashSet::new();
        for rel in look {
            let issues = fresh.remove(&rel).unwrap_or_default();
            let same = self
                .files
                .get(&rel)
                .is_some_and(|f| f.issues == issues && !edited(&rel));
            if same {
                continue;
            }
            let diags = (!issues.is_empty()).then(|| place_file(inp, &rel, issues));
            // Take the old file's contributions out of the counts.
            if let Some(old) = self.files.remove(&rel) {
                for c in old.contributions {
                    let key = (c.sidecar, code_of(&c.template), c.key);
                    if let Some(entry) = self.counts.get_mut(&key) {
                        entry.1 -= 1;
                        if entry.1 == 0 {
                            self.counts.remove(&key);
                        }
                    }
                    touched.insert(key.0);
                }
            }
            if let Some(diags) = diags {
                for c in &diags.contributions {
                    touched.insert(c.sidecar.clone());
                    let key = (c.sidecar.clone(), code_of(&c.template), c.key.clone());
                    self.counts.entry(key).or_insert_with(|| (c.clone(), 0)).1 += 1;
                }
                self.files.insert(rel.clone(), diags);
            }
            touched.insert(rel);
        }
        let mut touched: Vec<String> = touched.into_iter().collect();
        // The edited files first (what the user is looking at), then in path order.
        touched.sort_by(|a, b| edited(b).cmp(&edited(a)).then_with(|| a.cmp(b)));
        self.lists(inp, touched)
    }

    /// The last published list of every file that has one.
    #[cfg(test)]
    pub fn sent(&self) -> &HashMap<String, Vec<Diagnostic>> {
        &self.sent
    }

    /// The current issues of the edited files and of those the report's changes
    /// concern: the issues last placed with the changes applied, in report order.
    fn patched(&self, edited: &HashSet<String>, deltas: &[Delta]) -> HashMap<String, Vec<Issue>> {
        let placed = |file: &str| {
            self.files
                .get(file)
                .map(|f| f.issues.clone())
                .unwrap_or_default()
        };
        let mut fresh: HashMap<String, Vec<Issue>> =
            edited.iter().map(|f| (f.clone(), placed(f))).collect();
        for delta in deltas {
            let changes = delta.resolved.iter().map(|i| (i, false));
            for (issue, new) in changes.chain(delta.new.iter().map(|i| (i, true))) {
                if issue.severity == Severity::Ignore {
                    continue;
                }
                let file = file_of(&issue.location);
                let list = fresh.entry(file.to_owned()).or_insert_with(|| placed(file));
                if new {
                    list.push(issue.clone());
                } else if let Some(at) = list.iter().position(|i| i == issue) {
                    list.remove(at);
                }
            }
        }
        for list in fresh.values_mut() {
            list.sort_by(|a, b| a.cmp_in_report(b, false));
        }
        fresh
    }

    /// The lists of the `touched` files that differ from those last published, in the
    /// order given.
    fn lists(&mut self, inp: &Inputs<'_>, touched: Vec<String>) -> Vec<(String, Vec<Diagnostic>)> {
        // Each touched file's list: its own diagnostics, then those it holds as a
        // sidecar.
        let mut out = Vec::new();
        for rel in touched {
            let mut list: Vec<Diagnostic> = self
                .files
                .get(&rel)
                .map(|f| f.own.clone())
                .unwrap_or_default();
            // The counts are keyed by sidecar first: those of `rel` are one range.
            let from = (rel.clone(), String::new(), String::new());
            let held: Vec<(&Contribution, usize)> = self
                .counts
                .range(from..)
                .take_while(|((sidecar, _, _), _)| *sidecar == rel)
                .map(|(_, (c, n))| (c, *n))
                .collect();
            if !held.is_empty() {
                let placer = Placer::new(inp.ws, &inp.ws.absolute(&rel));
                for (c, n) in held {
                    let mut d = c.template.clone();
                    d.range = placer.place_key(Some(&c.key), c.value);
                    d.message = if n == 1 {
                        format!("{} (in a file that inherits this sidecar)", d.message)
                    } else {
                        format!("{} (in {n} files that inherit this sidecar)", d.message)
                    };
                    list.push(d);
                }
            }
            let before = self.sent.get(&rel).map(Vec::as_slice).unwrap_or(&[]);
            if list.as_slice() == before {
                continue;
            }
            if list.is_empty() {
                self.sent.remove(&rel);
            } else {
                self.sent.insert(rel.clone(), list.clone());
            }
            out.push((rel, list));
        }
        out
    }
}

/// One file's diagnostics, made from its issues.
fn place_file(inp: &Inputs<'_>, rel: &str, issues: Vec<Issue>) -> FileDiags {
    let placer = Placer::new(inp.ws, &inp.ws.absolute(rel));
    let own = issues
        .iter()
        .map(|i| diagnostic(inp.report, i, placer.place(i)))
        .collect();
    let contributions = contributions(inp, rel, &issues);
    FileDiags {
        issues,
        own,
        contributions,
    }
}

/// The issues of a report to show, by file, in report order.
fn by_file(report: &Report) -> HashMap<String, Vec<Issue>> {
    let mut out: HashMap<String, Vec<Issue>> = HashMap::new();
    for issue in &report.issues {
        if issue.severity != Severity::Ignore {
            let file = file_of(&issue.location);
            out.entry(file.to_owned()).or_default().push(issue.clone());
        }
    }
    out
}

fn code_of(d: &Diagnostic) -> String {
    match &d.code {
        Some(NumberOrString::String(s)) => s.clone(),
        _ => String::new(),
    }
}

/// The file an issue location names (the dataset itself: its description).
pub fn file_of(location: &str) -> &str {
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

/// The issues of data file `rel` about sidecar keys, each with the sidecar that set the
/// key's value or, for a missing key, the deepest sidecar that applies.
fn contributions(inp: &Inputs<'_>, rel: &str, issues: &[Issue]) -> Vec<Contribution> {
    if rel.ends_with(".json") || rel.ends_with(".tsv") {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut ctx = None;
    for issue in issues {
        let Some(key) = key_named(issue) else {
            continue;
        };
        if inp.schema.metadata_def(&key).is_none() {
            continue;
        }
        let ctx = match &ctx {
            Some(c) => c,
            None => {
                let Some(entry) = inp.dataset.find(rel) else {
                    return out;
                };
                ctx.insert(inp.dataset.context(entry))
            }
        };
        let merge = ctx.sidecar_merge();
        let Some(sidecar) = merge.sources.get(&key).or_else(|| merge.files.last()) else {
            continue;
        };
        out.push(Contribution {
            sidecar: sidecar.clone(),
            value: about_value(issue.code()),
            template: diagnostic(inp.report, issue, Range::default()),
            key,
        });
    }
    out
}
