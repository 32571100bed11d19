//! Unsaved contents: a filesystem that answers some files from memory (an editor's
//! buffers, path → bytes) and everything else from the filesystem beneath it.
//!
//! Only files the walk finds on disk are overlaid: a buffer stands for the file's
//! content (its size included), never for a file that does not exist.

use std::collections::HashMap;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use nidos_dataset::fs::{Fs, Meta};

/// The overlaid contents, by absolute path (shared between the session and its
/// filesystem).
pub(crate) type Buffers = Arc<RwLock<HashMap<PathBuf, Arc<[u8]>>>>;

/// A filesystem whose overlaid files read as their buffers.
#[derive(Debug)]
pub(crate) struct OverlayFs {
    inner: Arc<dyn Fs>,
    buffers: Buffers,
}

impl OverlayFs {
    pub(crate) fn new(inner: Arc<dyn Fs>, buffers: Buffers) -> OverlayFs {
        OverlayFs { inner, buffers }
    }

    fn buffer(&self, path: &Path) -> Option<Arc<[u8]>> {
        let map = self.buffers.read().ok()?;
        if map.is_empty() {
            return None;
        }
        map.get(path).cloned()
    }

    /// `meta` of `path` with an overlaid file's size.
    fn patched(&self, path: &Path, meta: io::Result<Meta>) -> io::Result<Meta> {
        let mut meta = meta?;
        if meta.kind == Some(nidos_dataset::fs::Kind::File) {
            if let Some(b) = self.buffer(path) {
                meta.size = b.len() as u64;
            }
        }
        Ok(meta)
    }
}

fn reader(bytes: Arc<[u8]>, cap: usize) -> Box<dyn Read + Send> {
    let end = cap.min(bytes.len());
    Box::new(io::Cursor::new(bytes).take(end as u64))
}

impl Fs for OverlayFs {
    fn read_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        self.inner.read_dir(path)
    }

    fn read_dir_meta(&self, path: &Path) -> io::Result<Vec<(String, io::Result<Meta>)>> {
        let entries = self.inner.read_dir_meta(path)?;
        Ok(entries
            .into_iter()
            .map(|(name, meta)| {
                let meta = self.patched(&path.join(&name), meta);
                (name, meta)
            })
            .collect())
    }

    fn metadata(&self, path: &Path) -> io::Result<Meta> {
        self.patched(path, self.inner.metadata(path))
    }

    fn read(&self, path: &Path, cap: u64) -> io::Result<Vec<u8>> {
        match self.buffer(path) {
            Some(b) if b.len() as u64 > cap => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("file is larger than {cap} bytes"),
            )),
            Some(b) => Ok(b.to_vec()),
            None => self.inner.read(path, cap),
        }
    }

    fn read_prefix(&self, path: &Path, n: usize) -> io::Result<Vec<u8>> {
        match self.buffer(path) {
            Some(b) => Ok(b[..n.min(b.len())].to_vec()),
            None => self.inner.read_prefix(path, n),
        }
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn Read + Send>> {
        match self.buffer(path) {
            Some(b) => Ok(reader(b, usize::MAX)),
            None => self.inner.open(path),
        }
    }

    fn open_sized(&self, path: &Path, len: u64) -> io::Result<Box<dyn Read + Send>> {
        match self.buffer(path) {
            Some(b) => Ok(reader(b, usize::try_from(len).unwrap_or(usize::MAX))),
            None => self.inner.open_sized(path, len),
        }
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.inner.canonicalize(path)
    }
}
