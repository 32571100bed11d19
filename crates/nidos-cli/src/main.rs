//! The `nidos` command line. Each subcommand lives in its own `cmd_*.rs` module with an
//! `Args` struct (clap) and a `run` function returning the process exit code.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The allocator: a validation run makes millions of small, short-lived allocations
/// (strings of names, cells and messages) from several threads, which mimalloc serves
/// with per-thread free lists (see docs/performance.md). It asks for transparent huge
/// pages on its regions; `huge_pages` turns them off for large datasets. Its 2.x line
/// (feature `v2`): with huge pages every 2 MiB region the allocator touches is zeroed
/// whole, and 3.x spreads a small run over more of them (ds001: peak 43–47 MB against
/// 35–39 MB, ~1 ms more), for no gain on large datasets (docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod closest;
mod cmd_context;
mod cmd_entities;
mod cmd_eval;
mod cmd_fix;
mod cmd_index;
mod cmd_init;
mod cmd_ls;
mod cmd_lsp;
mod cmd_path;
mod cmd_repl;
mod cmd_schema;
mod cmd_validate;
/// Names from a dataset made safe to print (the library's, shared by every command).
use nidos_validate::emit::escape;
mod huge_pages;
mod scale;
mod schema_arg;
mod schema_changelog;
mod schema_fetch;
mod timer;
mod watch;
mod workers;

#[derive(Parser)]
#[command(
    name = "nidos",
    version,
    about = "Validate, query and explore Std / BIDS datasets"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validate a dataset against the schema's rules.
    Validate(cmd_validate::Args),
    /// Evaluate a rule expression, or run a file of expression test cases.
    Eval(cmd_eval::Args),
    /// Interactive expression prompt.
    Repl(cmd_repl::Args),
    /// Print the full evaluation context of one file of a dataset as JSON.
    Context(cmd_context::Args),
    /// Inspect, check, compare and export schemas.
    #[command(subcommand)]
    Schema(cmd_schema::Command),
    /// List the files of a dataset the schema accepts, with entities and metadata.
    Ls(cmd_ls::Args),
    /// The values each entity takes in a dataset.
    Entities(cmd_entities::Args),
    /// The canonical relative path of a file from its entities, suffix and extension.
    Path(cmd_path::Args),
    /// Write a Parquet index (one row per file) of datasets, or of folders of datasets.
    Index(cmd_index::Args),
    /// Create a minimal valid dataset.
    Init(cmd_init::Args),
    /// Show (or with --apply, write) the schema's fixes for a dataset's issues.
    Fix(cmd_fix::Args),
    /// A Language Server Protocol server over standard input/output, for editors.
    Lsp(cmd_lsp::Args),
}

fn main() -> ExitCode {
    nidos_bundled::install();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Validate(a) => cmd_validate::run(a),
        Command::Eval(a) => cmd_eval::run(a),
        Command::Repl(a) => cmd_repl::run(a),
        Command::Context(a) => cmd_context::run(a),
        Command::Schema(c) => cmd_schema::run(c),
        Command::Ls(a) => cmd_ls::run(a),
        Command::Entities(a) => cmd_entities::run(a),
        Command::Path(a) => cmd_path::run(a),
        Command::Init(a) => cmd_init::run(a),
        Command::Fix(a) => cmd_fix::run(a),
        Command::Index(a) => cmd_index::run(a),
        Command::Lsp(a) => cmd_lsp::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("nidos: {}", escape::keep_lines(&error_chain(&e)));
            ExitCode::from(2)
        }
    }
}

/// The error and its causes joined by `: `, leaving out a cause whose text the message
/// before it already ends with (errors that print their source inside their own text).
fn error_chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !out.is_empty() && out.ends_with(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}
