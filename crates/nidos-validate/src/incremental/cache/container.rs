//! The cache file's layout, read and written.
//!
//! ```text
//! magic "NIDOSRC\0" | format: u32 LE | index length: u64 LE | parts length: u64 LE
//! index (postcard [`Index`]) | parts (JSON lines) | stored reports, one after another
//! ```
//!
//! The index is all a run over an unchanged dataset reads before copying one stored
//! report out; the parts are read only when something changed. Every length is checked
//! against the file's size before anything is used: a file cut short is "truncated".

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

const MAGIC: &[u8; 8] = b"NIDOSRC\0";
/// The layout this build reads and writes (1 was a JSON-lines file).
pub(super) const FORMAT: u32 = 2;
const PREAMBLE: u64 = 8 + 4 + 8 + 8;

/// What a run reads first.
#[derive(Serialize, Deserialize)]
pub(super) struct Index {
    /// The nidos version that wrote it (named in the warning when it differs).
    pub nidos: String,
    /// The run's key before any rule is loaded ([`super::run_key`]).
    pub run_key: u64,
    /// The dataset's listing ([`super::Listing::hash`]) the parts were made from.
    pub listing: u64,
    /// The reports stored, in the order of their bytes after the parts.
    pub outputs: Vec<Output>,
}

/// One stored report: the bytes one output format wrote, and what the run said beside.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Output {
    /// What chose the bytes (format, options of the emitter): the caller's key.
    pub emit_key: u64,
    /// Whether the report has errors.
    pub failed: bool,
    /// The run's warnings (choosing the rules).
    pub warnings: Vec<String>,
    pub len: u64,
}

/// A cache file opened, its index read and its size checked.
pub(super) struct Opened {
    file: File,
    pub index: Index,
    /// Where the parts begin, and their length.
    parts_at: u64,
    parts_len: u64,
}

/// Opens the cache file at `path` (`Ok(None)`: there is none yet; `Err`: why it is not
/// used).
pub(super) fn open(path: &Path) -> Result<Option<Opened>, String> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read it: {e}")),
    };
    let size = file
        .metadata()
        .map_err(|e| format!("cannot read it: {e}"))?
        .len();
    let mut head = Vec::with_capacity(PREAMBLE as usize);
    (&mut file)
        .take(PREAMBLE)
        .read_to_end(&mut head)
        .map_err(|e| format!("cannot read it: {e}"))?;
    let magic_len = head.len().min(MAGIC.len());
    if head.is_empty() {
        return Err("it is empty".into());
    }
    if head.starts_with(b"{\"format\"") {
        return Err("it is of another format (the JSON lines of nidos-result-cache-1)".into());
    }
    if head[..magic_len] != MAGIC[..magic_len] {
        return Err("it is not a nidos result cache".into());
    }
    if (head.len() as u64) < PREAMBLE {
        return Err(format!("it is truncated ({size} bytes)"));
    }
    let word = |at: usize, n: usize| {
        head[at..at + n]
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
    };
    let format = word(8, 4);
    if format != u64::from(FORMAT) {
        return Err(format!(
            "it is of another format (version {format}; this nidos reads {FORMAT})"
        ));
    }
    let (index_len, parts_len) = (word(12, 8), word(20, 8));
    let truncated = |expected: u64| format!("it is truncated ({size} of {expected} bytes)");
    let after_index = PREAMBLE.saturating_add(index_len);
    if after_index > size {
        return Err(truncated(after_index));
    }
    let mut bytes = Vec::new();
    (&mut file)
        .take(index_len)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    let index: Index =
        postcard::from_bytes(&bytes).map_err(|e| format!("its index does not parse ({e})"))?;
    let expected = index
        .outputs
        .iter()
        .fold(after_index.saturating_add(parts_len), |n, o| {
            n.saturating_add(o.len)
        });
    if size < expected {
        return Err(truncated(expected));
    }
    if size > expected {
        return Err(format!(
            "it is damaged ({size} bytes where its index says {expected})"
        ));
    }
    Ok(Some(Opened {
        file,
        index,
        parts_at: after_index,
        parts_len,
    }))
}

impl Opened {
    /// The parts' bytes.
    pub(super) fn parts(&mut self) -> Result<Vec<u8>, String> {
        let at = self.parts_at;
        self.file
            .seek(SeekFrom::Start(at))
            .map_err(|e| format!("cannot read it: {e}"))?;
        let mut bytes = Vec::new();
        (&mut self.file)
            .take(self.parts_len)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read it: {e}"))?;
        if bytes.len() as u64 != self.parts_len {
            return Err("it is truncated".into());
        }
        Ok(bytes)
    }

    /// The stored report `which` (an index into `index.outputs`), as a reader.
    pub(super) fn output(mut self, which: usize) -> std::io::Result<std::io::Take<File>> {
        let at = self.parts_at.saturating_add(self.parts_len)
            + self.index.outputs[..which]
                .iter()
                .fold(0u64, |n, o| n.saturating_add(o.len));
        let len = self.index.outputs.get(which).map_or(0, |o| o.len);
        self.file.seek(SeekFrom::Start(at))?;
        Ok(self.file.take(len))
    }
}

/// Writes a cache file at `path`: a temporary file in its folder, renamed over the old
/// one (a reader never sees a partial file).
pub(super) fn write(
    path: &Path,
    index: &Index,
    parts: &[u8],
    outputs: &[&[u8]],
) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    {
        let index_bytes = postcard::to_allocvec(index).map_err(std::io::Error::other)?;
        let mut out = std::io::BufWriter::with_capacity(1 << 16, tmp.as_file_mut());
        out.write_all(MAGIC)?;
        out.write_all(&FORMAT.to_le_bytes())?;
        out.write_all(&(index_bytes.len() as u64).to_le_bytes())?;
        out.write_all(&(parts.len() as u64).to_le_bytes())?;
        out.write_all(&index_bytes)?;
        out.write_all(parts)?;
        for o in outputs {
            out.write_all(o)?;
        }
        out.flush()?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
