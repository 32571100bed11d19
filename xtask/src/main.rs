//! `cargo xtask`: project chores (conformance, bench).

fn main() -> anyhow::Result<()> {
    let task = std::env::args().nth(1).unwrap_or_default();
    match task.as_str() {
        _ => anyhow::bail!("usage: cargo xtask <conformance|bench>"),
    }
}
