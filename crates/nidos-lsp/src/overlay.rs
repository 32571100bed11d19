//! The filesystem as the editor sees it: the operating system's, except that documents
//! open in the editor read as their unsaved text (and a new document not yet saved is
//! listed in its folder).

use std::collections::HashMap;
use std::io::{self, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use nidos_dataset::fs::{Kind, Meta};
use nidos_dataset::{Fs, OsFs};

/// Open documents by absolute path, shared between the server and the filesystem it
/// hands to the dataset.
pub type Buffers = Arc<RwLock<HashMap<PathBuf, Arc<[u8]>>>>;

#[derive(Debug, Clone)]
pub struct OverlayFs {
    buffers: Buffers,
}

impl OverlayFs {
    pub fn new(buffers: Buffers) -> OverlayFs {
        OverlayFs { buffers }
    }

    fn buffer(&self, path: &Path) -> Option<Arc<[u8]>> {
        self.buffers.read().ok()?.get(path).cloned()
    }
}

fn file_meta(size: usize) -> Meta {
    Meta {
        is_symlink: false,
        kind: Some(Kind::File),
        size: size as u64,
        link_target: None,
    }
}

impl Fs for OverlayFs {
    fn read_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        Ok(self
            .read_dir_meta(path)?
            .into_iter()
            .map(|(n, _)| n)
            .collect())
    }

    fn read_dir_meta(&self, path: &Path) -> io::Result<Vec<(String, io::Result<Meta>)>> {
        let mut out = OsFs.read_dir_meta(path)?;
        let Ok(buffers) = self.buffers.read() else {
            return Ok(out);
        };
        for (p, bytes) in buffers.iter() {
            if p.parent() != Some(path) {
                continue;
            }
            let Some(name) = p.file_name().map(|n| n.to_string_lossy().into_owned()) else {
                continue;
            };
            match out.iter_mut().find(|(n, _)| *n == name) {
                Some(entry) => {
                    if matches!(&entry.1, Ok(m) if m.kind == Some(Kind::File) && !m.is_symlink) {
                        entry.1 = Ok(file_meta(bytes.len()));
                    }
                }
                None => out.push((name, Ok(file_meta(bytes.len())))),
            }
        }
        Ok(out)
    }

    fn metadata(&self, path: &Path) -> io::Result<Meta> {
        match (OsFs.metadata(path), self.buffer(path)) {
            (Ok(m), Some(b)) if m.kind == Some(Kind::File) && !m.is_symlink => {
                Ok(file_meta(b.len()))
            }
            (Err(_), Some(b)) => Ok(file_meta(b.len())),
            (m, _) => m,
        }
    }

    fn read(&self, path: &Path, cap: u64) -> io::Result<Vec<u8>> {
        match self.buffer(path) {
            Some(b) if b.len() as u64 > cap => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("larger than {cap} bytes"),
            )),
            Some(b) => Ok(b.to_vec()),
            None => OsFs.read(path, cap),
        }
    }

    fn read_prefix(&self, path: &Path, n: usize) -> io::Result<Vec<u8>> {
        match self.buffer(path) {
            Some(b) => Ok(b[..n.min(b.len())].to_vec()),
            None => OsFs.read_prefix(path, n),
        }
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn Read + Send>> {
        match self.buffer(path) {
            Some(b) => Ok(Box::new(Cursor::new(b))),
            None => OsFs.open(path),
        }
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        match OsFs.canonicalize(path) {
            Err(_) if self.buffer(path).is_some() => Ok(path.to_path_buf()),
            r => r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_shadow_and_extend_the_disk() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.json"), b"{}").unwrap();
        let buffers: Buffers = Arc::default();
        let fs = OverlayFs::new(buffers.clone());
        buffers
            .write()
            .unwrap()
            .insert(root.join("a.json"), Arc::from(&b"{\"x\": 1}"[..]));
        buffers
            .write()
            .unwrap()
            .insert(root.join("new.json"), Arc::from(&b"[]"[..]));
        assert_eq!(fs.read(&root.join("a.json"), 100).unwrap(), b"{\"x\": 1}");
        assert_eq!(fs.metadata(&root.join("a.json")).unwrap().size, 8);
        let mut names = fs.read_dir(&root).unwrap();
        names.sort();
        assert_eq!(names, ["a.json", "new.json"]);
        assert!(fs.read(&root.join("a.json"), 3).is_err());
        let mut s = String::new();
        fs.open(&root.join("new.json"))
            .unwrap()
            .read_to_string(&mut s)
            .unwrap();
        assert_eq!(s, "[]");
    }
}
