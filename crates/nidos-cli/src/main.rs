//! The `nidos` command line. Each subcommand lives in its own `cmd_*.rs` module with an
//! `Args` struct (clap) and a `run` function returning the process exit code.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd_context;
mod cmd_eval;
mod cmd_repl;
mod cmd_schema;
mod cmd_validate;
mod schema_arg;

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Validate(a) => cmd_validate::run(a),
        Command::Eval(a) => cmd_eval::run(a),
        Command::Repl(a) => cmd_repl::run(a),
        Command::Context(a) => cmd_context::run(a),
        Command::Schema(c) => cmd_schema::run(c),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("nidos: {e:#}");
            ExitCode::from(2)
        }
    }
}
