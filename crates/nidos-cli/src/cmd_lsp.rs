//! `nidos lsp`: the language server (crate `nidos-lsp`) over standard input and output.
//! An editor starts it with the dataset opened as its workspace (docs/editors.md).

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Accepted for editors that pass it; standard input/output is the only transport.
    #[arg(long)]
    stdio: bool,
}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    nidos_lsp::serve_stdio()?;
    Ok(ExitCode::SUCCESS)
}
