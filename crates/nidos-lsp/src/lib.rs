//! `nidos lsp`: a Language Server Protocol server for a dataset opened in an editor.
//! Diagnostics follow every edit (unsaved text counts), at the key or value of a JSON
//! document, the cell of a table, or the start of any other file; hover tells what the
//! rules of the dataset's version say of a key, column or entity; completion offers the
//! keys, columns and values the rules expect; code actions are `nidos fix`'s repairs.
//!
//! Modules, each using only those listed before it:
//! - `text`: offsets ↔ protocol positions; `json_map`, `tsv_map`: where keys, values and
//!   cells are in a document;
//! - `workspace`: the dataset root, its open documents, and `View`, what the answers
//!   read of the current validation (an incremental session fed the documents' text);
//! - `expected`: the keys and columns the rules expect of one file;
//! - `diagnostics`, `hover`, `complete`, `actions`: the answers;
//! - `server`: the protocol loop; `transport`: its framing over stdio, each message
//!   bounded.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod actions;
mod complete;
mod diagnostics;
mod expected;
mod hover;
mod json_map;
#[cfg(test)]
mod published_cases;
mod server;
mod text;
mod transport;
mod tsv_map;
mod workspace;

pub use server::serve;

/// Serves one client over standard input and output until it exits.
pub fn serve_stdio() -> anyhow::Result<()> {
    let (connection, threads) = transport::stdio();
    let served = serve(connection);
    // The reader's error (a malformed or oversized message) says more than the server's.
    threads
        .join()
        .map_err(|e| anyhow::anyhow!("nidos lsp: reading the client's messages: {e}"))?;
    served
}
