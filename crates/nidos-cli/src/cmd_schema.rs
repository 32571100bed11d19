//! `nidos schema …`.

use std::process::ExitCode;

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// List the versions the bundled schema supports.
    Versions,
}

pub fn run(_cmd: Command) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`nidos schema` is not built yet")
}
