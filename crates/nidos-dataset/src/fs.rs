//! The filesystem seen through a trait, so the walker and loaders run unchanged on disk
//! ([`OsFs`]) and on trees built in memory by tests ([`MemFs`]).
//!
//! Paths given to an [`Fs`] are absolute paths of that filesystem. Every method returns
//! an `io::Result`; nothing here panics on odd trees (broken or cyclic links included).

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fmt;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// What a path is once symbolic links are followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Other,
}

/// Metadata of one path, symlink-aware.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    /// The path itself is a symbolic link.
    pub is_symlink: bool,
    /// What the path resolves to; `None` for a broken (dangling or cyclic) link.
    pub kind: Option<Kind>,
    /// Size in bytes of what the path resolves to (0 when unknown).
    pub size: u64,
    /// For a link: its target as written.
    pub link_target: Option<PathBuf>,
}

/// Read access to a filesystem.
pub trait Fs: Send + Sync + fmt::Debug {
    /// Names of the entries of a directory (unsorted, without `.`/`..`).
    fn read_dir(&self, path: &Path) -> io::Result<Vec<String>>;
    /// The entries of a directory with their metadata (unsorted, without `.`/`..`), as
    /// [`Fs::metadata`] gives it; an entry whose metadata cannot be read carries the
    /// error. The default asks `metadata` for each entry's full path.
    fn read_dir_meta(&self, path: &Path) -> io::Result<Vec<(String, io::Result<Meta>)>> {
        Ok(self
            .read_dir(path)?
            .into_iter()
            .map(|name| {
                let meta = self.metadata(&path.join(&name));
                (name, meta)
            })
            .collect())
    }
    /// Metadata of a path without failing on broken links (`kind: None` then).
    fn metadata(&self, path: &Path) -> io::Result<Meta>;
    /// The whole file; an error of kind `InvalidData` when it is larger than `cap` bytes.
    fn read(&self, path: &Path, cap: u64) -> io::Result<Vec<u8>>;
    /// At most the first `n` bytes.
    fn read_prefix(&self, path: &Path, n: usize) -> io::Result<Vec<u8>>;
    /// A streaming reader of the file.
    fn open(&self, path: &Path) -> io::Result<Box<dyn Read + Send>>;
    /// A reader of at most the first `len` bytes of a file whose size the caller knows
    /// (the walk's): it ends at `len` without asking the system for the end of the file,
    /// which spares a read per file. A file that grew since is read to `len` bytes.
    fn open_sized(&self, path: &Path, len: u64) -> io::Result<Box<dyn Read + Send>> {
        Ok(Box::new(self.open(path)?.take(len)))
    }
    /// The absolute path with every symbolic link resolved.
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf>;
}

/// The operating system's filesystem.
#[derive(Clone, Copy, Debug, Default)]
pub struct OsFs;

impl Fs for OsFs {
    fn read_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(path)? {
            let e = e?;
            out.push(e.file_name().to_string_lossy().into_owned());
        }
        Ok(out)
    }

    /// Lists the directory with `getdents64` on one descriptor (no `fstat` of it, no
    /// stream buffer of the C library) and reads each entry's type and size relative to
    /// it (no walk of the full path per entry); none for a plain directory, whose size is
    /// never used.
    fn read_dir_meta(&self, path: &Path) -> io::Result<Vec<(String, io::Result<Meta>)>> {
        use rustix::fs::{AtFlags, FileType, OFlags, StatxFlags};
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )?;
        let mut dir = rustix::fs::Dir::new(fd)?;
        let mut out = Vec::new();
        while let Some(e) = dir.read() {
            let e = e?;
            let raw = e.file_name().to_bytes();
            if raw == b"." || raw == b".." {
                continue;
            }
            let name = String::from_utf8_lossy(raw).into_owned();
            let meta = match e.file_type() {
                FileType::Directory => Ok(Meta {
                    is_symlink: false,
                    kind: Some(Kind::Dir),
                    size: 0,
                    link_target: None,
                }),
                FileType::Symlink | FileType::Unknown => {
                    // Links (and entries whose type is unknown) take the full-path route.
                    self.metadata(&path.join(OsStr::from_bytes(raw)))
                }
                _ => rustix::fs::statx(
                    dir.fd()?,
                    e.file_name(),
                    AtFlags::SYMLINK_NOFOLLOW,
                    StatxFlags::TYPE | StatxFlags::SIZE,
                )
                .map(|st| Meta {
                    is_symlink: false,
                    kind: Some(
                        match FileType::from_raw_mode(rustix::fs::RawMode::from(st.stx_mode)) {
                            FileType::Directory => Kind::Dir,
                            FileType::RegularFile => Kind::File,
                            _ => Kind::Other,
                        },
                    ),
                    size: st.stx_size,
                    link_target: None,
                })
                .map_err(io::Error::from),
            };
            out.push((name, meta));
        }
        Ok(out)
    }

    fn metadata(&self, path: &Path) -> io::Result<Meta> {
        let l = std::fs::symlink_metadata(path)?;
        if !l.file_type().is_symlink() {
            return Ok(Meta {
                is_symlink: false,
                kind: Some(kind_of(&l)),
                size: l.len(),
                link_target: None,
            });
        }
        let target = std::fs::read_link(path).ok();
        match std::fs::metadata(path) {
            Ok(m) => Ok(Meta {
                is_symlink: true,
                kind: Some(kind_of(&m)),
                size: m.len(),
                link_target: target,
            }),
            Err(_) => Ok(Meta {
                is_symlink: true,
                kind: None,
                size: 0,
                link_target: target,
            }),
        }
    }

    // Every open goes through `guarded::open_regular`: regular files only, told apart
    // without blocking (a FIFO or a device is refused, not opened for reading).

    fn read(&self, path: &Path, cap: u64) -> io::Result<Vec<u8>> {
        crate::guarded::read_regular(path, cap)
    }

    fn read_prefix(&self, path: &Path, n: usize) -> io::Result<Vec<u8>> {
        let (f, _) = crate::guarded::open_regular(path)?;
        let mut buf = Vec::with_capacity(n.min(1 << 20));
        f.take(n as u64).read_to_end(&mut buf)?;
        Ok(buf)
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn Read + Send>> {
        let (f, _) = crate::guarded::open_regular(path)?;
        Ok(Box::new(io::BufReader::new(f)))
    }

    /// Unbuffered: its callers read whole files or buffer themselves.
    fn open_sized(&self, path: &Path, len: u64) -> io::Result<Box<dyn Read + Send>> {
        let (f, _) = crate::guarded::open_regular(path)?;
        Ok(Box::new(f.take(len)))
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        std::fs::canonicalize(path)
    }
}

fn kind_of(m: &std::fs::Metadata) -> Kind {
    if m.is_dir() {
        Kind::Dir
    } else if m.is_file() {
        Kind::File
    } else {
        Kind::Other
    }
}

pub(crate) fn too_large(cap: u64) -> io::Error {
    crate::guarded::too_large(cap)
}

/// One node of a [`MemFs`].
#[derive(Clone, Debug)]
pub enum MemNode {
    File(Arc<[u8]>),
    Dir,
    Symlink(PathBuf),
    /// A file whose reads fail with "permission denied" (size still reported).
    Unreadable(u64),
}

/// An in-memory filesystem for tests: files, directories, symbolic links (relative or
/// absolute, dangling and cyclic ones included) and unreadable files.
#[derive(Clone, Debug, Default)]
pub struct MemFs {
    nodes: BTreeMap<PathBuf, MemNode>,
}

const MAX_LINK_HOPS: usize = 40;

impl MemFs {
    pub fn new() -> Self {
        let mut nodes = BTreeMap::new();
        nodes.insert(PathBuf::from("/"), MemNode::Dir);
        Self { nodes }
    }

    fn add_parents(&mut self, path: &Path) {
        let mut p = path.parent();
        while let Some(d) = p {
            self.nodes.entry(d.to_path_buf()).or_insert(MemNode::Dir);
            p = d.parent();
        }
    }

    /// Adds a file (and its parent directories).
    pub fn add_file(&mut self, path: impl AsRef<Path>, content: impl Into<Vec<u8>>) {
        let p = lexical(path.as_ref());
        self.add_parents(&p);
        self.nodes
            .insert(p, MemNode::File(Arc::from(content.into())));
    }

    pub fn add_dir(&mut self, path: impl AsRef<Path>) {
        let p = lexical(path.as_ref());
        self.add_parents(&p);
        self.nodes.insert(p, MemNode::Dir);
    }

    /// Adds a symbolic link whose target is resolved relative to the link's directory.
    pub fn add_symlink(&mut self, path: impl AsRef<Path>, target: impl AsRef<Path>) {
        let p = lexical(path.as_ref());
        self.add_parents(&p);
        self.nodes
            .insert(p, MemNode::Symlink(target.as_ref().to_path_buf()));
    }

    pub fn add_unreadable(&mut self, path: impl AsRef<Path>, size: u64) {
        let p = lexical(path.as_ref());
        self.add_parents(&p);
        self.nodes.insert(p, MemNode::Unreadable(size));
    }

    /// Resolves every link of `path`; `follow_last` decides for the final component.
    fn resolve(&self, path: &Path, follow_last: bool) -> io::Result<PathBuf> {
        let mut hops = 0usize;
        let mut cur = PathBuf::from("/");
        let mut pending: Vec<PathBuf> = lexical(path)
            .components()
            .rev()
            .filter_map(comp_name)
            .collect::<Vec<_>>();
        while let Some(name) = pending.pop() {
            if name.as_os_str() == ".." {
                cur.pop();
                continue;
            }
            let next = cur.join(&name);
            let last = pending.is_empty();
            match self.nodes.get(&next) {
                Some(MemNode::Symlink(t)) if follow_last || !last => {
                    hops += 1;
                    if hops > MAX_LINK_HOPS {
                        return Err(io::Error::other("too many levels of symbolic links"));
                    }
                    if t.is_absolute() {
                        cur = PathBuf::from("/");
                    }
                    for c in t.components().rev().filter_map(comp_name) {
                        pending.push(c);
                    }
                }
                Some(MemNode::File(_)) | Some(MemNode::Unreadable(_)) if !last => {
                    return Err(io::Error::new(io::ErrorKind::NotFound, "not a directory"));
                }
                Some(_) => cur = next,
                None => {
                    return Err(io::Error::new(
                        io::ErrorKind::NotFound,
                        "no such file or directory",
                    ))
                }
            }
        }
        Ok(cur)
    }

    fn node(&self, path: &Path) -> io::Result<(&MemNode, PathBuf)> {
        let p = self.resolve(path, true)?;
        match self.nodes.get(&p) {
            Some(n) => Ok((n, p)),
            None => Err(io::Error::new(
                io::ErrorKind::NotFound,
                "no such file or directory",
            )),
        }
    }

    fn bytes(&self, path: &Path) -> io::Result<Arc<[u8]>> {
        match self.node(path)?.0 {
            MemNode::File(b) => Ok(b.clone()),
            MemNode::Unreadable(_) => Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "permission denied",
            )),
            _ => Err(io::Error::other("is a directory")),
        }
    }
}

fn comp_name(c: Component<'_>) -> Option<PathBuf> {
    match c {
        Component::Normal(n) => Some(PathBuf::from(n)),
        Component::ParentDir => Some(PathBuf::from("..")),
        _ => None,
    }
}

/// Makes a path absolute (under `/`) and removes `.` components, keeping `..`-free form.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    out
}

impl Fs for MemFs {
    fn read_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let (node, p) = self.node(path)?;
        if !matches!(node, MemNode::Dir) {
            return Err(io::Error::other("not a directory"));
        }
        let mut out = Vec::new();
        for (k, _) in self.nodes.range(p.clone()..) {
            if k == &p {
                continue;
            }
            if !k.starts_with(&p) {
                break;
            }
            if k.parent() == Some(p.as_path()) {
                if let Some(n) = k.file_name() {
                    out.push(n.to_string_lossy().into_owned());
                }
            }
        }
        Ok(out)
    }

    fn metadata(&self, path: &Path) -> io::Result<Meta> {
        let own = self.resolve(path, false)?;
        let node = self
            .nodes
            .get(&own)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such file or directory"))?;
        let (is_symlink, link_target) = match node {
            MemNode::Symlink(t) => (true, Some(t.clone())),
            _ => (false, None),
        };
        let (kind, size) = match self.node(path) {
            Ok((MemNode::File(b), _)) => (Some(Kind::File), b.len() as u64),
            Ok((MemNode::Unreadable(n), _)) => (Some(Kind::File), *n),
            Ok((MemNode::Dir, _)) => (Some(Kind::Dir), 0),
            Ok((MemNode::Symlink(_), _)) | Err(_) if is_symlink => (None, 0),
            Ok((MemNode::Symlink(_), _)) => (Some(Kind::Other), 0),
            Err(e) => return Err(e),
        };
        Ok(Meta {
            is_symlink,
            kind,
            size,
            link_target,
        })
    }

    fn read(&self, path: &Path, cap: u64) -> io::Result<Vec<u8>> {
        let b = self.bytes(path)?;
        if b.len() as u64 > cap {
            return Err(too_large(cap));
        }
        Ok(b.to_vec())
    }

    fn read_prefix(&self, path: &Path, n: usize) -> io::Result<Vec<u8>> {
        let b = self.bytes(path)?;
        Ok(b[..n.min(b.len())].to_vec())
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn Read + Send>> {
        let b = self.bytes(path)?;
        Ok(Box::new(io::Cursor::new(b)))
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        let (_, p) = self.node(path)?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memfs_links() {
        let mut fs = MemFs::new();
        fs.add_file("/ds/a/x.txt", "hello");
        fs.add_symlink("/ds/b", "a");
        fs.add_symlink("/ds/loop", "loop2");
        fs.add_symlink("/ds/loop2", "loop");
        fs.add_symlink("/ds/dangling", "nowhere");
        assert_eq!(fs.read(Path::new("/ds/b/x.txt"), 100).unwrap(), b"hello");
        assert_eq!(
            fs.canonicalize(Path::new("/ds/b/x.txt")).unwrap(),
            PathBuf::from("/ds/a/x.txt")
        );
        let m = fs.metadata(Path::new("/ds/loop")).unwrap();
        assert!(m.is_symlink && m.kind.is_none());
        let m = fs.metadata(Path::new("/ds/dangling")).unwrap();
        assert!(m.is_symlink && m.kind.is_none());
        let mut names = fs.read_dir(Path::new("/ds")).unwrap();
        names.sort();
        assert_eq!(names, ["a", "b", "dangling", "loop", "loop2"]);
        assert!(fs.read(Path::new("/ds/a/x.txt"), 2).is_err());
        assert_eq!(fs.read_prefix(Path::new("/ds/a/x.txt"), 2).unwrap(), b"he");
    }

    /// A sized reader ends at its length, on disk and in memory: shorter than the file
    /// gives a prefix, longer gives the file (it ends at the file's end).
    #[test]
    fn sized_readers_end_at_their_length() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.txt");
        std::fs::write(&path, "hello world").unwrap();
        let mut mem = MemFs::new();
        mem.add_file("/x.txt", "hello world");
        let disk: (&dyn Fs, &Path) = (&OsFs, &path);
        let memory: (&dyn Fs, &Path) = (&mem, Path::new("/x.txt"));
        for (fs, path) in [disk, memory] {
            for (len, want) in [
                (0, ""),
                (5, "hello"),
                (11, "hello world"),
                (99, "hello world"),
            ] {
                let mut got = String::new();
                fs.open_sized(path, len)
                    .unwrap()
                    .read_to_string(&mut got)
                    .unwrap();
                assert_eq!(got, want, "{fs:?} {len}");
            }
        }
    }
}
