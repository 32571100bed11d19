//! HED annotations: when `dataset_description.json` names `HEDVersion`, every tabular file with
//! HED (a `HED` column, or `HED` entries in the sidecars it inherits) is checked by `nidos-hed`,
//! and its findings become `HED_ERROR` / `HED_WARNING` issues with the HED code as sub-code.
//!
//! Locations follow the reference: a sidecar issue at the sidecar that holds the key and at the
//! table it applies to; a row issue at the table with its line; a schema that cannot be loaded
//! once for the dataset, with an empty location, and nothing else checked.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use foldhash::{HashMap, HashSet};
use nidos_dataset::{Dataset, FileContext, FileEntry, SidecarMerge};
use nidos_expr::Context;
use nidos_hed::check::Checker;
use nidos_hed::defs::Definitions;
use nidos_hed::events::{
    check_events, EventsCheck, EventsTable, SharedPieces, SidecarHed, SidecarIssue,
};
use nidos_hed::{HedIssue, HedSchemas, SchemaSource};

use crate::issue::{Issue, Severity, Sym};

fn to_issue(h: &HedIssue, location: impl Into<Sym>, detail: &str) -> Issue {
    to_issue_at(h, location, detail, None)
}

/// The issue of `h`; with a line, the message ends in ` (TSV line N)` after `detail`.
fn to_issue_at(h: &HedIssue, location: impl Into<Sym>, detail: &str, line: Option<usize>) -> Issue {
    Codes::default().issue(h, location.into(), detail, line)
}

/// The interned codes a table's HED issues use, looked up once per table instead of once
/// per issue (a table may give thousands).
#[derive(Default)]
struct Codes {
    warning: Option<Sym>,
    error: Option<Sym>,
    subs: Vec<(&'static str, Sym)>,
}

impl Codes {
    fn code(&mut self, warning: bool) -> Sym {
        let (slot, text) = if warning {
            (&mut self.warning, "HED_WARNING")
        } else {
            (&mut self.error, "HED_ERROR")
        };
        slot.get_or_insert_with(|| Sym::intern(text)).clone()
    }

    fn sub(&mut self, code: &'static str) -> Sym {
        // The same static text is usually the same pointer: no byte comparison then.
        if let Some((_, s)) = self
            .subs
            .iter()
            .find(|(c, _)| std::ptr::eq(*c, code) || *c == code)
        {
            return s.clone();
        }
        let s = Sym::intern(code);
        self.subs.push((code, s.clone()));
        s
    }

    /// The issue of `h` (see [`to_issue_at`]).
    fn issue(&mut self, h: &HedIssue, location: Sym, detail: &str, line: Option<usize>) -> Issue {
        let (code, sub_code) = (self.code(h.warning), self.sub(h.code));
        let severity = if h.warning {
            Severity::Warning
        } else {
            Severity::Error
        };
        let mut issue = Issue::of_parts((&code, &sub_code, None), severity, location);
        issue.extra = Some(Box::new(crate::issue::IssueExtra {
            issue_message: Some(message(h, detail, line).into_boxed_str()),
            line,
            affects: Vec::new(),
        }));
        issue
    }
}

/// `[CODE] message detail`, then ` (TSV line N)` with a line; in one allocation.
fn message(h: &HedIssue, detail: &str, line: Option<usize>) -> String {
    const LINE: &str = " (TSV line ";
    // The exact length, so that boxing the text does not reallocate it.
    let digits = |mut n: usize| {
        let mut d = 1;
        while n >= 10 {
            n /= 10;
            d += 1;
        }
        d
    };
    let mut message = String::with_capacity(
        h.code.len()
            + h.message.len()
            + detail.len()
            + 3
            + line.map_or(0, |n| LINE.len() + digits(n) + 1),
    );
    message.push('[');
    message.push_str(h.code);
    message.push_str("] ");
    message.push_str(&h.message);
    message.push_str(detail);
    if let Some(n) = line {
        message.push_str(LINE);
        push_decimal(&mut message, n);
        message.push(')');
    }
    message
}

/// Appends `n` in decimal (see [`crate::emit::decimal`]).
fn push_decimal(s: &mut String, n: usize) {
    for &d in crate::emit::decimal(n as u64, &mut [0u8; 20]) {
        s.push(char::from(d));
    }
}

/// What checking a dataset's HED annotations needs, prepared before the per-file pass: the
/// schemas `HEDVersion` names, the definitions of all its sidecars (dataset-wide, so gathered
/// first), and what its tables share. Each table is then checked by the per-file pass while
/// it holds the table ([`HedRun::check_table`]), so no table is parsed twice.
pub(crate) struct HedRun {
    schemas: HedSchemas,
    defs: Definitions,
    memo: SidecarMemo,
}

/// The dataset's HED run: `Ok(None)` when it declares no `HEDVersion`, the one issue (with an
/// empty location) when the schemas cannot be loaded, and then nothing else is checked.
pub(crate) fn prepare(ds: &Dataset, schema_dirs: &[PathBuf]) -> Result<Option<HedRun>, Issue> {
    let version = ds
        .dataset_value()
        .get("dataset_description")
        .get("HEDVersion");
    if version.is_null() {
        return Ok(None);
    }
    let source = SchemaSource::new(schema_dirs.to_vec());
    // The schemas load while the sidecars are read.
    let (schemas, sidecars) = rayon::join(
        || source.load_versions(&version.to_json()),
        || hed_sidecars(ds),
    );
    let schemas = match schemas {
        Ok(s) => s,
        // The HED specification ties a schema that cannot be loaded to the annotations
        // that need it: a dataset that names a HEDVersion but carries no HED is not
        // failed for it.
        Err(_) if sidecars.is_empty() && !carries_hed(ds) => return Ok(None),
        Err(issue) => return Err(to_issue(&issue, "", "")),
    };
    let defs = dataset_definitions(&sidecars, &schemas);
    Ok(Some(HedRun {
        schemas,
        defs,
        memo: SidecarMemo::new(rayon::current_num_threads()),
    }))
}

/// Starts decoding, on a worker thread, the bundled HED schemas that the dataset at `root`
/// declares in `HEDVersion`, so that [`prepare`] finds them decoded: a run calls it before
/// loading its rules, which take one thread. Does nothing when the description cannot be
/// read (validation reports that).
pub fn prefetch(root: &std::path::Path) {
    // A description is a few hundred bytes; a huge one is left to the validation proper,
    // as is one that is not a regular file inside the dataset.
    let Ok(bytes) =
        nidos_dataset::guarded::read_in_dataset(root, "dataset_description.json", 1 << 20)
    else {
        return;
    };
    let Ok(serde_json::Value::Object(mut description)) = serde_json::from_slice(&bytes) else {
        return;
    };
    if let Some(version) = description.remove("HEDVersion") {
        rayon::spawn(move || SchemaSource::prefetch(&version));
    }
}

impl HedRun {
    /// Checks the HED of the file `ctx` is for, when it is a table (nothing otherwise).
    /// The per-file pass ranks the issues located at the table like its own (rank order is
    /// path order, so the report order is the same either way).
    pub(crate) fn check_table(&self, ctx: &FileContext<'_>, out: &mut Vec<Issue>) {
        if ctx.entry().is_some_and(is_table) {
            check_table(ctx, &self.schemas, &self.defs, &self.memo, out);
        }
    }
}

fn is_table(f: &FileEntry) -> bool {
    f.validated() && f.name.extension == ".tsv"
}

/// The JSON sidecars of the dataset with a `HED` member in some entry, in path order.
/// Read on all threads: the JSON files are parsed here, once for the whole run (the
/// per-file pass finds them parsed).
fn hed_sidecars(ds: &Dataset) -> Vec<serde_json::Value> {
    use rayon::prelude::*;
    (0..ds.files().len())
        .into_par_iter()
        .filter_map(|i| {
            let f = &ds.files()[i];
            if !f.validated() || f.name.extension != ".json" {
                return None;
            }
            let ctx = ds.context_at(i);
            let json = ctx.lookup("json");
            // Only entries with a `HED` member give strings (see `SidecarHed::read`).
            let has_hed = json.as_object().is_some_and(|o| {
                o.values()
                    .any(|v| v.as_object().is_some_and(|e| e.contains_key("HED")))
            });
            has_hed.then(|| json.to_json())
        })
        .collect()
}

/// Whether some file of the dataset carries HED besides the sidecar entries
/// [`hed_sidecars`] finds: a table with a `HED` column, or a JSON file with a top-level
/// `HED` key (the description of such a column). Asked only when the schemas cannot be
/// loaded, so reading every table's header then costs nothing on a dataset that loads.
fn carries_hed(ds: &Dataset) -> bool {
    use rayon::prelude::*;
    (0..ds.files().len()).into_par_iter().any(|i| {
        let f = &ds.files()[i];
        if !f.validated() {
            return false;
        }
        let ext = f.name.extension.as_str();
        if ext == ".json" {
            let ctx = ds.context_at(i);
            let json = ctx.lookup("json");
            json.as_object().is_some_and(|o| o.contains_key("HED"))
        } else if ext == ".tsv" || ext == ".tsv.gz" {
            let ctx = ds.context_at(i);
            ctx.table()
                .is_some_and(|t| t.headers.iter().any(|h| h == "HED"))
        } else {
            false
        }
    })
}

/// Definitions from the `HED` entries of the sidecars `hed_sidecars` gave.
fn dataset_definitions(sidecars: &[serde_json::Value], schemas: &HedSchemas) -> Definitions {
    let empty = Definitions::default();
    let gatherer = Checker::new(schemas, &empty);
    let mut defs = Definitions::default();
    let mut ignored = Vec::new();
    for json in sidecars {
        let mut shape = Vec::new();
        let sidecar = SidecarHed::read(json, &mut shape);
        for (_, s) in sidecar.strings() {
            defs.gather(&gatherer, s, &mut ignored);
        }
    }
    defs
}

/// What the `HED` entries of one merged sidecar give: the same for every table that inherits
/// it, so each distinct sidecar is checked once per dataset.
struct SidecarChecked {
    sidecar: SidecarHed,
    /// Shape problems and the checks of its strings.
    issues: Vec<SidecarIssue>,
    /// Definitions named twice within the sidecar.
    dup: Vec<HedIssue>,
}

/// What the tables of one dataset share: checked sidecars by the files merged (the merged
/// object is a function of them, root first), checked pieces of row annotations.
struct SidecarMemo {
    sidecars: Mutex<HashMap<Vec<String>, Arc<SidecarChecked>>>,
    /// One set of pieces per worker thread: the tables a thread checks share its set, and
    /// no two threads touch one piece (a set for all made the threads take turns at its
    /// lock and pass the pieces' reference counts from core to core: a HED-heavy dataset
    /// checked its tables 20 to 60 % slower on two threads than on one). A piece is a
    /// function of its text, so which set has it never changes a result.
    pieces: Vec<SharedPieces>,
}

impl SidecarMemo {
    fn new(threads: usize) -> Self {
        SidecarMemo {
            sidecars: Mutex::default(),
            pieces: (0..threads.max(1))
                .map(|_| SharedPieces::default())
                .collect(),
        }
    }

    /// The calling thread's pieces (the first set's off the worker threads).
    fn pieces(&self) -> Option<&SharedPieces> {
        let thread = rayon::current_thread_index().unwrap_or(0);
        self.pieces.get(thread % self.pieces.len().max(1))
    }
}

fn sidecar_checked(
    merge: &SidecarMerge,
    schemas: &HedSchemas,
    defs: &Definitions,
    memo: &SidecarMemo,
) -> Arc<SidecarChecked> {
    let key = merge.files.as_slice();
    if let Some(found) = memo.sidecars.lock().ok().and_then(|m| m.get(key).cloned()) {
        return found;
    }
    let json = merge.value.to_json();
    let mut issues: Vec<SidecarIssue> = Vec::new();
    let sidecar = SidecarHed::read(&json, &mut issues);
    let checker = Checker::new(schemas, defs);
    let mut dup = Vec::new();
    let mut local = Definitions::default();
    for (_, s) in sidecar.strings() {
        local.gather(&checker, s, &mut dup);
    }
    issues.extend(sidecar.check(&checker));
    let checked = Arc::new(SidecarChecked {
        sidecar,
        issues,
        dup,
    });
    if let Ok(mut m) = memo.sidecars.lock() {
        m.insert(key.to_vec(), checked.clone());
    }
    checked
}

fn check_table(
    ctx: &FileContext<'_>,
    schemas: &HedSchemas,
    defs: &Definitions,
    memo: &SidecarMemo,
    out: &mut Vec<Issue>,
) {
    let Some(entry) = ctx.entry() else {
        return;
    };
    // One shared copy of the table's path for all its issues.
    let location = &Sym::from(entry.path.as_str());
    let merge = ctx.sidecar_merge();
    let Some(table) = ctx.table() else {
        return;
    };
    let header = &table.headers;
    let checked = sidecar_checked(merge, schemas, defs, memo);
    let sidecar = &checked.sidecar;
    if !sidecar.applies_to(header) && checked.issues.is_empty() {
        return;
    }
    let checker = Checker::new(schemas, defs);
    let sidecar_issues = &checked.issues;
    let dup = &checked.dup;
    let fallback = merge.files.last().cloned().unwrap_or_default();
    let mut failed = false;
    for si in sidecar_issues {
        failed |= !si.issue.warning;
        let origin = merge
            .sources
            .get(&si.key)
            .cloned()
            .unwrap_or_else(|| fallback.clone());
        let detail = format!(" (sidecar key \"{}\")", si.key);
        if !origin.is_empty() {
            out.push(to_issue(&si.issue, &origin, &detail));
        }
        out.push(to_issue(&si.issue, location, &detail));
    }
    for d in dup {
        failed = true;
        out.push(to_issue(d, &fallback, ""));
        out.push(to_issue(d, location, ""));
    }
    if failed {
        return;
    }
    let mut codes = Codes::default();
    let mut rows = RowIssues::new(out.len());
    let check = EventsCheck {
        checker: &checker,
        sidecar,
        shared: memo.pieces(),
    };
    let cell = |r: usize, c: usize| table.cell(r, c);
    let codes_of_columns = table.codes();
    let events = EventsTable {
        header,
        n_rows: table.kept_rows(),
        cell: &cell,
        codes: &codes_of_columns,
    };
    check_events(&check, &events, &mut |line, h| {
        let issue = codes.issue(h, location.clone(), "", line);
        match line {
            // The table's issues without a row (one per column at most) are each given
            // once: only row issues can repeat.
            None => out.push(issue),
            Some(_) => rows.push(out, issue),
        }
    });
}

/// The key that makes two row issues of a table the same issue: line, code, message (the
/// message names the code and, with a line, ends in it, so it tells them apart alone).
type RowKey = (Option<usize>, String, String);

fn row_key(issue: &Issue) -> RowKey {
    (
        issue.line_number(),
        issue.sub_code().as_str().to_string(),
        issue.issue_message().unwrap_or_default().to_string(),
    )
}

/// Adds a table's row issues to the report's list, each once (an issue repeated with the same
/// line, code and message is left out, the first kept). The checks give them line by line in
/// increasing order, then those across rows: while lines do not go back, an issue can only
/// repeat one of its own line, the last few added, and is compared with those alone; from the
/// first issue whose line goes back, every issue is kept in a set.
struct RowIssues {
    /// Where the table's row issues start in the list.
    start: usize,
    /// Where the issues of the latest line start, and that line.
    block: usize,
    line: Option<Option<usize>>,
    /// All the row issues so far, once a line went back.
    set: Option<HashSet<RowKey>>,
}

impl RowIssues {
    fn new(start: usize) -> Self {
        RowIssues {
            start,
            block: start,
            line: None,
            set: None,
        }
    }

    fn push(&mut self, out: &mut Vec<Issue>, issue: Issue) {
        let line = issue.line_number();
        if self.set.is_none() {
            match self.line {
                Some(l) if l == line => {
                    let same = |o: &Issue| {
                        o.sub_code().as_str() == issue.sub_code().as_str()
                            && o.issue_message() == issue.issue_message()
                    };
                    if !out.get(self.block..).unwrap_or_default().iter().any(same) {
                        out.push(issue);
                    }
                    return;
                }
                Some(l) if l > line => {
                    let set = out
                        .get(self.start..)
                        .unwrap_or_default()
                        .iter()
                        .map(row_key)
                        .collect();
                    self.set = Some(set);
                }
                _ => {
                    self.block = out.len();
                    self.line = Some(line);
                    out.push(issue);
                    return;
                }
            }
        }
        if let Some(set) = &mut self.set {
            if set.insert(row_key(&issue)) {
                out.push(issue);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each worker thread of the pool gets a set of pieces of its own; a thread outside
    /// any pool gets the first.
    #[test]
    fn each_worker_thread_has_its_own_pieces() {
        let memo = SidecarMemo::new(3);
        let address = |p: Option<&SharedPieces>| p.map_or(0, |p| p as *const SharedPieces as usize);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let mut seen = pool.broadcast(|_| address(memo.pieces()));
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 3);
        assert_eq!(address(memo.pieces()), address(memo.pieces.first()));
        assert_eq!(SidecarMemo::new(0).pieces.len(), 1);
    }

    /// The message and line of a row issue: as `format!` words them.
    #[test]
    fn row_issue_messages() {
        let h = HedIssue::warning("SIDECAR_KEY_MISSING", "value \"1\" has none");
        for line in [
            None,
            Some(0),
            Some(2),
            Some(10),
            Some(934),
            Some(usize::MAX),
        ] {
            let issue = to_issue_at(&h, "/e.tsv", "", line);
            let want = match line {
                Some(n) => format!("[SIDECAR_KEY_MISSING] value \"1\" has none (TSV line {n})"),
                None => "[SIDECAR_KEY_MISSING] value \"1\" has none".to_string(),
            };
            assert_eq!(issue.issue_message(), Some(want.as_str()));
            assert_eq!(issue.line_number(), line);
            assert_eq!(issue.sub_code().as_str(), "SIDECAR_KEY_MISSING");
            assert_eq!(issue.severity, Severity::Warning);
            assert_eq!(issue.code().as_str(), "HED_WARNING");
        }
    }

    /// One table's `Codes` words each message as `format!` does whatever the issue before:
    /// the same code and message, the same code with another message, another code with the
    /// same message, texts that end alike.
    #[test]
    fn row_issue_messages_in_runs() {
        let issues = [
            HedIssue::warning("SIDECAR_KEY_MISSING", "value \"1\" has none"),
            HedIssue::warning("SIDECAR_KEY_MISSING", "value \"1\" has none"),
            HedIssue::warning("SIDECAR_KEY_MISSING", "value \"2\" has none"),
            HedIssue::error("TAG_INVALID", "value \"2\" has none"),
            HedIssue::error("TAG_INVALID", "\"2\" has none"),
            HedIssue::error("AB", "xyz"),
            HedIssue::error("A", "B] xyz"),
            HedIssue::error("AB", "xyz"),
            HedIssue::error("A", " xyz"),
            HedIssue::error("A", ""),
            HedIssue::warning("SIDECAR_KEY_MISSING", "value \"1\" has none"),
        ];
        let mut codes = Codes::default();
        for (i, h) in issues.iter().enumerate() {
            for line in [Some(i + 2), None, Some(1000 + i)] {
                let got = codes.issue(h, Sym::from("/e.tsv"), "", line);
                let want = match line {
                    Some(n) => format!("[{}] {} (TSV line {n})", h.code, h.message),
                    None => format!("[{}] {}", h.code, h.message),
                };
                assert_eq!(got.issue_message(), Some(want.as_str()), "issue {i}");
                assert_eq!(got.line_number(), line);
                assert_eq!(got.sub_code().as_str(), h.code);
            }
        }
    }

    /// The streaming filter of repeated row issues keeps what a set of (line, code, message)
    /// over all of them keeps, in the same order: repeats within a line, lines in order, a
    /// line with no line number first, then lines that go back (the checks across rows),
    /// repeating earlier ones or not.
    #[test]
    fn row_issues_drop_what_a_set_drops() {
        let w = |code: &'static str, msg: &str| HedIssue::warning(code, msg.to_string());
        let a = w("TAG_INVALID", "a");
        let b = w("TAG_INVALID", "b");
        let c = w("TAG_EXPRESSION_REPEATED", "a");
        // One case a line.
        #[rustfmt::skip]
        let cases: Vec<Vec<(Option<usize>, &HedIssue)>> = vec![
            vec![],
            vec![(None, &a), (None, &a), (Some(2), &a)],
            vec![(Some(2), &a), (Some(2), &b), (Some(2), &a), (Some(3), &a)],
            vec![(Some(2), &a), (Some(2), &c), (Some(3), &b), (Some(3), &b)],
            vec![(Some(2), &a), (Some(4), &b), (Some(2), &a), (Some(3), &a)],
            vec![(Some(2), &a), (Some(5), &b), (Some(5), &b), (Some(3), &c), (Some(5), &b)],
            vec![(None, &a), (Some(2), &a), (None, &a), (None, &b), (Some(9), &c), (Some(9), &c)],
            vec![(Some(7), &a), (Some(7), &a), (Some(8), &b), (Some(8), &a), (Some(7), &a), (Some(6), &b)],
        ];
        for (n, case) in cases.iter().enumerate() {
            // A sidecar issue before the table's row issues: not part of the filter.
            let before = to_issue(&a, "/e.tsv", "");
            let mut out = vec![before.clone()];
            let mut rows = RowIssues::new(out.len());
            let mut codes = Codes::default();
            for &(line, h) in case {
                rows.push(&mut out, codes.issue(h, Sym::from("/e.tsv"), "", line));
            }
            let mut seen = HashSet::default();
            let mut want = vec![row_key(&before)];
            for &(line, h) in case {
                if seen.insert((line, h.code, h.message.clone())) {
                    want.push(row_key(&to_issue_at(h, "/e.tsv", "", line)));
                }
            }
            let got: Vec<RowKey> = out.iter().map(row_key).collect();
            assert_eq!(got, want, "case {n}");
        }
    }
}
