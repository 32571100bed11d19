//! `nidos repl`: an interactive expression prompt.
//!
//! The line logic lives in [`Session::process`] (no terminal involved, unit-tested);
//! [`run`] only wires it to rustyline (history, multi-line input, completion).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use nidos_expr::scan::{Place, Scanner};
use nidos_expr::{Context, ObjectContext, Value};
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{CompletionType, Config, Editor, Helper};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A dataset to explore: `:file PATH` switches to the context of one of its files.
    pub dir: Option<PathBuf>,

    /// Do not read NIfTI headers for file contexts.
    #[arg(long = "ignore-nifti-headers", visible_alias = "ignoreNiftiHeaders")]
    pub ignore_nifti_headers: bool,

    #[command(flatten)]
    pub schema: crate::schema_arg::SchemaArgs,

    /// A JSON object bound as the root scope.
    #[arg(long, value_name = "FILE.json")]
    pub context: Option<PathBuf>,
}

const HELP: &str = "\
Type an expression to evaluate it against the current context, e.g.
  suffix == \"bold\" && sidecar.RepetitionTime > 1
Input continues on the next line while brackets or quotes are open.
Commands:
  :help         this text, and the list of functions
  :ctx          print the current context as JSON
  :file PATH    switch to the context of a dataset file
  :quit         leave (also Ctrl-D)
Tab completes function names, context fields, `name.` members and `:file` paths.";

/// How a file's context is obtained for `:file PATH`. The dataset crate plugs in
/// here: given the dataset root and a dataset-relative path, return that file's
/// context.
pub type FileContextLoader = std::rc::Rc<dyn Fn(&Path, &str) -> Result<Box<dyn Context>, String>>;

/// What the REPL prints for one input.
#[derive(Debug, PartialEq)]
pub enum Reply {
    /// A result or informational text (stdout).
    Output(String),
    /// An error message (stderr); the session continues.
    Error(String),
    /// Nothing to print (blank input).
    Nothing,
    /// Leave the REPL.
    Quit,
}

/// The state of a REPL session: the current context and where file contexts come from.
pub struct Session {
    ctx: Box<dyn Context>,
    dataset: Option<PathBuf>,
    file_loader: Option<FileContextLoader>,
    /// The dataset file whose context is current (`:file`), shown in the prompt.
    file: Option<String>,
}

impl Session {
    pub fn new(ctx: Box<dyn Context>) -> Session {
        Session {
            ctx,
            dataset: None,
            file_loader: None,
            file: None,
        }
    }

    /// The prompt: the current file's name when one is selected.
    pub fn prompt(&self) -> String {
        match &self.file {
            Some(f) => format!("nidos {}> ", file_name_part(f.trim_end_matches('/'))),
            None => PROMPT.to_string(),
        }
    }

    /// Whether context fields are read before `:file` chose a file of the dataset:
    /// they are all null then, which deserves a word.
    fn reads_fields_without_file(&self, expr: &nidos_expr::Expr) -> bool {
        self.dataset.is_some()
            && self.file.is_none()
            && self.ctx.names().is_empty()
            && !expr.root_names().is_empty()
    }

    /// Sets the dataset and the loader `:file` uses.
    pub fn with_dataset(mut self, dir: PathBuf, loader: Option<FileContextLoader>) -> Session {
        self.dataset = Some(dir);
        self.file_loader = loader;
        self
    }

    /// Handles one complete input (an expression or a `:command`).
    pub fn process(&mut self, input: &str) -> Reply {
        let line = input.trim();
        if line.is_empty() {
            return Reply::Nothing;
        }
        if let Some(cmd) = line.strip_prefix(':') {
            let (name, arg) = match cmd.split_once(char::is_whitespace) {
                Some((n, a)) => (n, a.trim()),
                None => (cmd, ""),
            };
            return match name {
                "q" | "quit" | "exit" => Reply::Quit,
                "h" | "help" => Reply::Output(help_text()),
                "ctx" | "context" => Reply::Output(context_json(self.ctx.as_ref())),
                "file" if arg.is_empty() => Reply::Error("usage: :file PATH".into()),
                "file" => self.switch_file(arg),
                other => Reply::Error(format!(
                    "unknown command `:{}` (try :help)",
                    crate::cmd_eval::clip_for_display(other)
                )),
            };
        }
        match nidos_expr::parse(input) {
            Ok(expr) => {
                let mut out = String::new();
                for name in expr.unknown_functions() {
                    out.push_str(&format!("warning: unknown function `{name}` gives null\n"));
                }
                if self.reads_fields_without_file(&expr) {
                    out.push_str(
                        "hint: no file selected, so every context field is null; \
                         choose one with `:file PATH` (Tab completes paths)\n",
                    );
                }
                let before = nidos_expr::regex_over_budget().len();
                let value = nidos_expr::eval(&expr, self.ctx.as_ref());
                for p in nidos_expr::regex_over_budget().iter().skip(before) {
                    out.push_str(&format!(
                        "warning: the pattern {} ran past the regular-expression time budget: its match is null\n",
                        crate::cmd_eval::clip_for_display(&serde_json::Value::String(p.clone()).to_string())
                    ));
                }
                out.push_str(&value.to_json().to_string());
                Reply::Output(out)
            }
            Err(e) => Reply::Error(crate::cmd_eval::render_parse_error(input, &e)),
        }
    }

    fn switch_file(&mut self, path: &str) -> Reply {
        let (Some(dataset), Some(loader)) = (&self.dataset, self.file_loader.clone()) else {
            return Reply::Error("no dataset loaded".into());
        };
        match loader(dataset, path) {
            Ok(ctx) => {
                self.ctx = ctx;
                self.file = Some(path.to_string());
                Reply::Output(format!("context: {path}"))
            }
            Err(e) => Reply::Error(e),
        }
    }

    /// Completion candidates for the word that ends at `pos`: functions and root
    /// names, or the members of the object before a `.`.
    pub fn complete(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        let before = line.get(..pos).unwrap_or(line);
        if let Some(arg) = before
            .strip_prefix(":file")
            .filter(|rest| rest.starts_with(char::is_whitespace))
        {
            let arg = arg.trim_start();
            return (pos - file_name_part(arg).len(), self.complete_path(arg));
        }
        let start = before
            .char_indices()
            .rev()
            .find(|(_, c)| !(c.is_alphanumeric() || matches!(c, '_' | '$' | '.')))
            .map(|(i, c)| i + c.len_utf8())
            .unwrap_or(0);
        let word = &before[start..];
        if let Some((object, partial)) = word.rsplit_once('.') {
            let Ok(expr) = nidos_expr::parse(object) else {
                return (pos, Vec::new());
            };
            let keys: Vec<String> = match nidos_expr::eval(&expr, self.ctx.as_ref()) {
                Value::Object(o) => o
                    .keys()
                    .filter(|k| k.starts_with(partial))
                    .cloned()
                    .collect(),
                _ => Vec::new(),
            };
            return (pos - partial.len(), keys);
        }
        let mut out: Vec<String> = nidos_expr::registry::function_names()
            .filter(|f| f.starts_with(word))
            .map(|f| format!("{f}("))
            .collect();
        let mut names = self.ctx.names();
        names.extend(["true", "false", "null"].map(String::from));
        names.sort();
        out.extend(names.into_iter().filter(|n| n.starts_with(word)));
        (start, out)
    }
}

impl Session {
    /// The entries of the dataset directory `partial` points into whose names start
    /// with its last component (directories with a trailing `/`), sorted; hidden ones
    /// only when that component starts with a dot.
    fn complete_path(&self, partial: &str) -> Vec<String> {
        let Some(root) = &self.dataset else {
            return Vec::new();
        };
        let name = file_name_part(partial);
        let dir = partial[..partial.len() - name.len()].trim_start_matches('/');
        if dir.split('/').any(|c| c == "..") {
            return Vec::new();
        }
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            return Vec::new();
        };
        let mut out: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let n = e.file_name().to_string_lossy().to_string();
                if !n.starts_with(name) || (n.starts_with('.') && !name.starts_with('.')) {
                    return None;
                }
                let is_dir = e.path().is_dir();
                Some(if is_dir { format!("{n}/") } else { n })
            })
            .collect();
        out.sort();
        out
    }
}

/// The last path component being typed (after the last `/`).
fn file_name_part(partial: &str) -> &str {
    partial.rsplit('/').next().unwrap_or(partial)
}

fn help_text() -> String {
    let mut s = String::from(HELP);
    s.push_str("\nFunctions:\n");
    for entry in nidos_expr::registry::REGISTRY {
        if !entry.name.contains('_') {
            s.push_str(&format!("  {}\n", entry.summary));
        }
    }
    s.truncate(s.trim_end().len());
    s
}

/// The context as a JSON object of its root names.
fn context_json(ctx: &dyn Context) -> String {
    let map: serde_json::Map<String, serde_json::Value> = ctx
        .names()
        .into_iter()
        .map(|n| {
            let v = ctx.lookup(&n).to_json();
            (n, v)
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::Value::Object(map)).unwrap_or_default()
}

/// Whether the input is unfinished: an open bracket or string, or a trailing binary
/// operator. Commands are always complete.
/// (The REPL itself reads line by line through [`Pending`]; this is its whole-text form.)
#[cfg(test)]
pub fn needs_more(input: &str) -> bool {
    let trimmed = input.trim();
    if trimmed.starts_with(':') || trimmed.is_empty() {
        return false;
    }
    let mut depth: i64 = 0;
    let mut string_open = false;
    for (_, c, place) in nidos_expr::scan::scan(input) {
        match place {
            Place::Open => string_open = true,
            Place::Close => string_open = false,
            Place::Inside => {}
            Place::Code => match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            },
        }
    }
    string_open || depth > 0
}

struct ReplHelper {
    session: Session,
}

impl Completer for ReplHelper {
    type Candidate = Pair;
    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let (start, words) = self.session.complete(line, pos);
        Ok((
            start,
            words
                .into_iter()
                .map(|w| Pair {
                    display: w.clone(),
                    replacement: w,
                })
                .collect(),
        ))
    }
}

impl Hinter for ReplHelper {
    type Hint = String;
}

impl Highlighter for ReplHelper {}

/// Every line is accepted as typed: an unfinished input continues on the next line
/// under the continuation prompt ([`Pending`]), which a terminal and a pipe show alike.
impl Validator for ReplHelper {
    fn validate(&self, _ctx: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        Ok(ValidationResult::Valid(None))
    }
}

const PROMPT: &str = "nidos> ";
const CONTINUATION_PROMPT: &str = "  ...> ";

/// The lines of an input still open (unbalanced brackets or quotes; a `:command` or a
/// blank line is always complete).
/// Lines are scanned once, as they arrive (the scanner's state carries over), so a long
/// continued input costs linear time; past [`nidos_expr::MAX_SOURCE_BYTES`] it is dropped.
#[derive(Default)]
pub struct Pending {
    text: String,
    scanner: Scanner,
    depth: i64,
}

impl Pending {
    /// Whether an unfinished input waits for more lines.
    pub fn is_open(&self) -> bool {
        !self.text.is_empty()
    }

    /// Adds a line; returns the whole input once it is complete, or `Err` with a
    /// message when the input has grown past the length limit (it is then dropped).
    pub fn push(&mut self, line: &str) -> Result<Option<String>, String> {
        let first = !self.is_open();
        if first {
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with(':') {
                return Ok(Some(line.to_string()));
            }
        } else {
            self.text.push('\n');
            self.scan('\n');
        }
        if self.text.len() + line.len() > nidos_expr::MAX_SOURCE_BYTES {
            let total = self.text.len() + line.len();
            *self = Pending::default();
            return Err(format!(
                "error: input too long ({total} bytes or more; the limit is {} bytes): dropped",
                nidos_expr::MAX_SOURCE_BYTES
            ));
        }
        self.text.push_str(line);
        line.chars().for_each(|c| self.scan(c));
        if self.scanner.in_string() || self.depth > 0 {
            return Ok(None);
        }
        let input = std::mem::take(&mut self.text);
        *self = Pending::default();
        Ok(Some(input))
    }

    fn scan(&mut self, c: char) {
        if self.scanner.place(c) == Place::Code {
            match c {
                '(' | '[' | '{' => self.depth += 1,
                ')' | ']' | '}' => self.depth -= 1,
                _ => {}
            }
        }
    }
}

impl Helper for ReplHelper {}

fn history_path() -> Option<PathBuf> {
    let home = std::env::var_os("HOME")?;
    Some(PathBuf::from(home).join(".nidos_history"))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let ctx: Box<dyn Context> = match &args.context {
        Some(path) => Box::new(crate::cmd_eval::load_json_context(path)?),
        None => Box::new(ObjectContext::default()),
    };
    let mut session = Session::new(ctx);
    if let Some(dir) = &args.dir {
        // The schema (and what choosing it has to say, such as a brand warning) once
        // for the session, not at every `:file`.
        let loaded = crate::schema_arg::load_for_dataset(&args.schema, dir)?;
        loaded.print_warnings("");
        let schema = std::rc::Rc::new(loaded.schema);
        let ignore_headers = args.ignore_nifti_headers;
        let loader: FileContextLoader = std::rc::Rc::new(move |dir: &Path, file: &str| {
            crate::cmd_eval::open_file_with(&schema, dir, file, ignore_headers)
                .map(|opened| Box::new(opened) as Box<dyn Context>)
                .map_err(|e| format!("{e:#}"))
        });
        session = session.with_dataset(dir.clone(), Some(loader));
    }
    // Tab lists the candidates (then completes their common prefix) rather than
    // cycling through them one by one.
    let config = Config::builder()
        .auto_add_history(false)
        .completion_type(CompletionType::List)
        .build();
    let mut rl: Editor<ReplHelper, DefaultHistory> = Editor::with_config(config)?;
    rl.set_helper(Some(ReplHelper { session }));
    let history = history_path();
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    println!("nidos expression REPL — :help for help, :quit to leave");
    let mut pending = Pending::default();
    loop {
        let prompt = match rl.helper() {
            _ if pending.is_open() => CONTINUATION_PROMPT.to_string(),
            Some(helper) => helper.session.prompt(),
            None => PROMPT.to_string(),
        };
        match rl.readline(&prompt) {
            Ok(line) => {
                let input = match pending.push(&line) {
                    Ok(Some(input)) => input,
                    Ok(None) => continue,
                    Err(message) => {
                        eprintln!("{message}");
                        continue;
                    }
                };
                if !input.trim().is_empty() {
                    let _ = rl.add_history_entry(input.as_str());
                }
                let Some(helper) = rl.helper_mut() else { break };
                match helper.session.process(&input) {
                    Reply::Output(s) => println!("{s}"),
                    Reply::Error(s) => eprintln!("{s}"),
                    Reply::Nothing => {}
                    Reply::Quit => break,
                }
            }
            // Ctrl-C drops an unfinished multi-line input.
            Err(ReadlineError::Interrupted) => {
                pending = Pending::default();
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                eprintln!("error: {e}");
                break;
            }
        }
    }
    if let Some(h) = &history {
        // An unwritable home directory just means no history.
        let _ = rl.save_history(h);
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session {
        let json = serde_json::json!({"suffix": "bold", "sidecar": {"EchoTime": 0.03, "Echo": 1}});
        Session::new(Box::new(ObjectContext::from_json(&json)))
    }

    #[test]
    fn evaluates_expressions() {
        let mut s = session();
        assert_eq!(s.process("suffix == 'bold'"), Reply::Output("true".into()));
        assert_eq!(
            s.process("sidecar.EchoTime * 1000"),
            Reply::Output("30".into())
        );
        assert_eq!(s.process("  "), Reply::Nothing);
    }

    #[test]
    fn errors_keep_the_session() {
        let mut s = session();
        match s.process("1 +") {
            Reply::Error(e) => assert!(e.contains("expected"), "{e}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(s.process("1 + 1"), Reply::Output("2".into()));
        assert!(matches!(s.process(":nope"), Reply::Error(_)));
    }

    #[test]
    fn commands() {
        let mut s = session();
        assert_eq!(s.process(":quit"), Reply::Quit);
        assert_eq!(
            s.process(":file sub-01/anat/sub-01_T1w.nii.gz"),
            Reply::Error("no dataset loaded".into())
        );
        match s.process(":ctx") {
            Reply::Output(o) => {
                let v: serde_json::Value = serde_json::from_str(&o).unwrap();
                assert_eq!(v["sidecar"]["Echo"], 1);
            }
            other => panic!("{other:?}"),
        }
        match s.process(":help") {
            Reply::Output(o) => assert!(o.contains("intersects(a, b)"), "{o}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn file_hook() {
        fn loader(_: &Path, file: &str) -> Result<Box<dyn Context>, String> {
            let json = serde_json::json!({ "path": file });
            Ok(Box::new(ObjectContext::from_json(&json)))
        }
        let mut s = session().with_dataset(PathBuf::from("/ds"), Some(std::rc::Rc::new(loader)));
        assert!(matches!(s.process(":file a.json"), Reply::Output(_)));
        assert_eq!(s.process("path"), Reply::Output("\"a.json\"".into()));
    }

    #[test]
    fn multi_line_until_balanced() {
        assert!(needs_more("intersects([suffix],"));
        assert!(needs_more("(a &&\n b"));
        assert!(needs_more("match(x, 'abc"));
        assert!(!needs_more("match(x, '(')"));
        assert!(!needs_more("(a &&\n b)"));
        assert!(!needs_more(":help"));
        let mut s = session();
        assert_eq!(
            s.process("(suffix ==\n  'bold')"),
            Reply::Output("true".into())
        );
    }

    #[test]
    fn continuation_collects_lines_until_balanced() {
        let mut p = Pending::default();
        assert!(!p.is_open());
        assert_eq!(p.push("intersects([suffix],"), Ok(None));
        assert!(p.is_open());
        assert_eq!(
            p.push("  ['bold'])"),
            Ok(Some("intersects([suffix],\n  ['bold'])".into()))
        );
        assert!(!p.is_open());
        assert_eq!(p.push(":help"), Ok(Some(":help".into())));
        // A string spanning lines keeps its brackets out of the count.
        assert_eq!(p.push("f('(\\'"), Ok(None));
        assert_eq!(p.push("x')"), Ok(Some("f('(\\'\nx')".into())));
    }

    #[test]
    fn continuation_is_linear_and_bounded() {
        let mut p = Pending::default();
        assert_eq!(p.push("["), Ok(None));
        let mut outcome = Ok(None);
        for _ in 0..100_000 {
            outcome = p.push("1,");
            if outcome.is_err() {
                break;
            }
        }
        assert!(outcome.is_err_and(|m| m.contains("too long")));
        assert!(!p.is_open());
    }

    #[test]
    fn file_paths_complete_from_the_dataset() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sub-01/anat")).unwrap();
        std::fs::create_dir_all(dir.path().join("sub-02")).unwrap();
        std::fs::write(dir.path().join("sub-01/anat/sub-01_T1w.nii.gz"), b"").unwrap();
        std::fs::write(dir.path().join("sub-01/anat/sub-01_T1w.json"), b"{}").unwrap();
        std::fs::write(dir.path().join(".hidden"), b"").unwrap();
        let s = session().with_dataset(dir.path().to_path_buf(), None);
        let (start, c) = s.complete(":file su", 8);
        assert_eq!(
            (start, c),
            (6, vec!["sub-01/".to_string(), "sub-02/".to_string()])
        );
        let line = ":file sub-01/anat/sub-01_T1w.n";
        let (start, c) = s.complete(line, line.len());
        assert_eq!(start, ":file sub-01/anat/".len());
        assert_eq!(c, vec!["sub-01_T1w.nii.gz".to_string()]);
        let (_, c) = s.complete(":file /sub-01/", 14);
        assert_eq!(c, vec!["anat/".to_string()]);
        let (_, c) = s.complete(":file ../", 9);
        assert!(c.is_empty());
    }

    #[test]
    fn completion() {
        let s = session();
        let (start, c) = s.complete("1 + inter", 9);
        assert_eq!(start, 4);
        assert_eq!(c, vec!["intersects(".to_string()]);
        let (_, c) = s.complete("suf", 3);
        assert_eq!(c, vec!["suffix".to_string()]);
        let (start, c) = s.complete("sidecar.Ec", 10);
        assert_eq!(start, 8);
        assert_eq!(c, vec!["EchoTime".to_string(), "Echo".to_string()]);
    }
}
