//! The one guarded open of the files nidos reads: regular files only, told apart without
//! blocking; the size checked before reading and never read past the limit; symbolic
//! links followed only when they stay inside the dataset.
//!
//! A FIFO would block `open` until a writer comes, a character device (`/dev/zero`) has
//! no end, a 3 GB description would be read whole, and a link to a file elsewhere would
//! let another file's content into the report. Every read of a file of the dataset on
//! disk goes through [`open_regular`] (the methods of the `fs` module's `OsFs`) or, for the files read
//! by path before a dataset is walked (the description that chooses the schema, HED's
//! early decoding), through [`read_in_dataset`].

use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags};

/// A file that is not a regular file, found where one was to be read; the payload of the
/// `io::Error` (kind `Unsupported`) the guarded open returns for it.
#[derive(Debug)]
pub struct NotRegular {
    /// What it is: `"a FIFO"`, `"a character device"`, …
    pub what: &'static str,
}

impl fmt::Display for NotRegular {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not a regular file ({}); not opened", self.what)
    }
}

impl std::error::Error for NotRegular {}

/// A path whose links lead outside the dataset; the payload of the `io::Error` (kind
/// `PermissionDenied`) [`read_in_dataset`] returns for it.
#[derive(Debug)]
pub struct OutsideDataset {
    /// Where the links lead.
    pub target: PathBuf,
}

impl fmt::Display for OutsideDataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "symbolic link points outside the dataset ({}); not read",
            self.target.display()
        )
    }
}

impl std::error::Error for OutsideDataset {}

/// The `io::Error` for a file over `limit` bytes (kind `InvalidData`).
pub fn too_large(limit: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("file is larger than the {limit}-byte limit"),
    )
}

/// Whether `e` is the guarded open's refusal of a file that is not regular.
pub fn is_not_regular(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<NotRegular>())
}

/// Whether `e` is [`read_in_dataset`]'s refusal of a link leaving the dataset.
pub fn is_outside(e: &io::Error) -> bool {
    e.get_ref()
        .is_some_and(|inner| inner.is::<OutsideDataset>())
}

fn what(t: FileType) -> &'static str {
    match t {
        FileType::Fifo => "a FIFO",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Socket => "a socket",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symbolic link",
        _ => "not a plain file",
    }
}

fn not_regular(t: FileType) -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, NotRegular { what: what(t) })
}

/// Opens `path` for reading when it is a regular file, following links. The open does
/// not block (`O_NONBLOCK`: a FIFO without a writer opens at once; reads of a regular
/// file ignore the flag) nor make a terminal the controlling one (`O_NOCTTY`); the type
/// is then read from the open descriptor (`fstat`, so no path swapped in between can
/// slip through) and anything but a regular file is closed unread: an `io::Error` whose
/// payload is [`NotRegular`]. Returns the file and its size. (One `open` and one `fstat`
/// a file: the per-file reads of a large dataset pay no extra `stat` of the path.)
pub fn open_regular(path: &Path) -> io::Result<(std::fs::File, u64)> {
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let st = rustix::fs::fstat(&fd)?;
    let t = FileType::from_raw_mode(st.st_mode);
    if t != FileType::RegularFile {
        return Err(not_regular(t));
    }
    Ok((
        std::fs::File::from(fd),
        u64::try_from(st.st_size).unwrap_or(0),
    ))
}

/// The whole of regular file `path`, when it holds at most `limit` bytes: a larger one is
/// refused from its size before anything is read ([`too_large`]), and the read stops one
/// byte past the limit should it grow meanwhile.
pub fn read_regular(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let (file, size) = open_regular(path)?;
    if size > limit {
        return Err(too_large(limit));
    }
    let mut buf = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut buf)?;
    if buf.len() as u64 > limit {
        return Err(too_large(limit));
    }
    Ok(buf)
}

/// Where `path` leads once its links are resolved, when that is inside `root` (itself
/// resolved); else an `io::Error` whose payload is [`OutsideDataset`]. Resolving reads
/// links and directory entries only: nothing is opened.
pub fn resolve_in(root: &Path, path: &Path) -> io::Result<PathBuf> {
    let root = std::fs::canonicalize(root)?;
    let target = std::fs::canonicalize(path)?;
    if !target.starts_with(&root) {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            OutsideDataset { target },
        ));
    }
    Ok(target)
}

/// The file `name` of the dataset at `root` (such as `dataset_description.json`), read
/// through [`resolve_in`] and [`read_regular`]: inside the dataset, regular, at most
/// `limit` bytes.
pub fn read_in_dataset(root: &Path, name: &str, limit: u64) -> io::Result<Vec<u8>> {
    let target = resolve_in(root, &root.join(name))?;
    read_regular(&target, limit)
}

/// The largest `dataset_description.json` read (the same limit as every JSON file).
pub const MAX_DESCRIPTION_BYTES: u64 = 64 << 20;

/// The dataset description of `root` as JSON, read with the guards of
/// [`read_in_dataset`]; `None` when it is absent, refused or not JSON (the validation
/// proper reports why). The description chooses the schema's brand and version.
pub fn read_description(root: &Path) -> Option<serde_json::Value> {
    let bytes = read_in_dataset(root, "dataset_description.json", MAX_DESCRIPTION_BYTES).ok()?;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("nidos-guarded-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn fifo_is_refused_without_blocking() {
        let d = tmp("fifo");
        let p = d.join("dataset_description.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&p)
            .status()
            .unwrap();
        assert!(made.success());
        let e = read_regular(&p, 10).unwrap_err();
        assert!(is_not_regular(&e), "{e}");
        assert!(e.to_string().contains("FIFO"), "{e}");
        assert!(read_description(&d).is_none());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn devices_are_refused() {
        let e = read_regular(Path::new("/dev/zero"), 10).unwrap_err();
        assert!(is_not_regular(&e), "{e}");
        assert!(e.to_string().contains("character device"), "{e}");
    }

    #[test]
    fn size_is_checked_before_reading() {
        let d = tmp("size");
        let p = d.join("big.json");
        std::fs::File::create(&p).unwrap().set_len(3 << 30).unwrap();
        let e = read_regular(&p, 1 << 20).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        std::fs::write(&p, b"{}").unwrap();
        assert_eq!(read_regular(&p, 2).unwrap(), b"{}");
        assert!(read_regular(&p, 1).is_err());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn links_stay_inside() {
        let d = tmp("links");
        let ds = d.join("ds");
        std::fs::create_dir_all(ds.join("sub")).unwrap();
        std::fs::write(d.join("outside.json"), b"{\"x\":1}").unwrap();
        std::fs::write(ds.join("sub/inside.json"), b"{\"y\":2}").unwrap();
        std::os::unix::fs::symlink("../outside.json", ds.join("dataset_description.json")).unwrap();
        std::os::unix::fs::symlink("sub/inside.json", ds.join("ok.json")).unwrap();
        let e = read_in_dataset(&ds, "dataset_description.json", 100).unwrap_err();
        assert!(is_outside(&e), "{e}");
        assert!(e.to_string().contains("outside.json"), "{e}");
        assert_eq!(read_in_dataset(&ds, "ok.json", 100).unwrap(), b"{\"y\":2}");
        assert!(read_description(&ds).is_none());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
