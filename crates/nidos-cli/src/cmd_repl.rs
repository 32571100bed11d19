//! `nidos repl`: an interactive expression prompt.
//!
//! The line logic lives in [`Session::process`] (no terminal involved, unit-tested);
//! [`run`] only wires it to rustyline (history, multi-line input, completion).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use nidos_expr::{Context, ObjectContext, Value};
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Config, Editor, Helper};

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
Tab completes function names, context fields and `name.` members.";

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
}

impl Session {
    pub fn new(ctx: Box<dyn Context>) -> Session {
        Session {
            ctx,
            dataset: None,
            file_loader: None,
        }
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
                other => Reply::Error(format!("unknown command `:{other}` (try :help)")),
            };
        }
        match nidos_expr::parse(input) {
            Ok(expr) => {
                let mut out = String::new();
                for name in expr.unknown_functions() {
                    out.push_str(&format!("warning: unknown function `{name}` gives null\n"));
                }
                let value = nidos_expr::eval(&expr, self.ctx.as_ref());
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
                Reply::Output(format!("context: {path}"))
            }
            Err(e) => Reply::Error(e),
        }
    }

    /// Completion candidates for the word that ends at `pos`: functions and root
    /// names, or the members of the object before a `.`.
    pub fn complete(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        let before = line.get(..pos).unwrap_or(line);
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
pub fn needs_more(input: &str) -> bool {
    let trimmed = input.trim();
    if trimmed.starts_with(':') || trimmed.is_empty() {
        return false;
    }
    let mut depth: i64 = 0;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in input.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            },
        }
    }
    quote.is_some() || depth > 0
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

impl Validator for ReplHelper {
    fn validate(&self, ctx: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        Ok(if needs_more(ctx.input()) {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Valid(None)
        })
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
        let schema = args.schema.clone();
        let ignore_headers = args.ignore_nifti_headers;
        let loader: FileContextLoader = std::rc::Rc::new(move |dir: &Path, file: &str| {
            crate::cmd_eval::open_dataset_file(&schema, dir, file, ignore_headers)
                .map(|opened| Box::new(opened) as Box<dyn Context>)
                .map_err(|e| format!("{e:#}"))
        });
        session = session.with_dataset(dir.clone(), Some(loader));
    }
    let config = Config::builder().auto_add_history(false).build();
    let mut rl: Editor<ReplHelper, DefaultHistory> = Editor::with_config(config)?;
    rl.set_helper(Some(ReplHelper { session }));
    let history = history_path();
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    println!("nidos expression REPL — :help for help, :quit to leave");
    loop {
        match rl.readline("nidos> ") {
            Ok(line) => {
                if !line.trim().is_empty() {
                    let _ = rl.add_history_entry(line.as_str());
                }
                let Some(helper) = rl.helper_mut() else { break };
                match helper.session.process(&line) {
                    Reply::Output(s) => println!("{s}"),
                    Reply::Error(s) => eprintln!("{s}"),
                    Reply::Nothing => {}
                    Reply::Quit => break,
                }
            }
            Err(ReadlineError::Interrupted) => continue,
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
