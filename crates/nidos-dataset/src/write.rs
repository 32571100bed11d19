//! Writing dataset files: sidecars (JSON) and tables (TSV) next to data files, in the
//! standard's canonical formatting, atomically.
//!
//! Every write renders the whole content in memory first (so a value that cannot be
//! written fails before anything touches the disk), writes it to a temporary file in
//! the target's directory, flushes it to disk and renames it over the target. A write
//! that fails at any step removes its temporary file: the target is either the old file
//! (or absent) or the complete new one, never a partial one. Existing files are kept
//! unless `force` is set.
//!
//! Canonical formatting: JSON pretty-printed with two-space indents and a final newline,
//! keys in the order given; TSV tab-separated with `\n` line ends, a header row, and
//! `n/a` for missing cells.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

/// Why a write failed. Nothing was left behind at the target.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{0} exists (use force to overwrite it)")]
    Exists(PathBuf),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: cannot write the content: {message}")]
    Content { path: PathBuf, message: String },
    #[error("{0} is not a file name with a suffix (`…_<suffix>.<ext>`)")]
    NotADataFile(PathBuf),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> WriteError + '_ {
    move |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A table to write: a header and rows of cells (`None` is written `n/a`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Option<String>>>,
}

impl Table {
    pub fn new<S: Into<String>>(columns: impl IntoIterator<Item = S>) -> Self {
        Self {
            columns: columns.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; empty strings count as missing.
    pub fn push<S: Into<String>>(&mut self, row: impl IntoIterator<Item = Option<S>>) {
        self.rows
            .push(row.into_iter().map(|c| c.map(Into::into)).collect());
    }

    /// A table from records (JSON objects): the columns are the keys in order of first
    /// appearance, `null` and absent keys are missing cells, strings are written as
    /// they are, numbers and booleans as JSON writes them. Arrays and objects cannot be
    /// table cells (an error).
    pub fn from_records(
        records: &[serde_json::Map<String, serde_json::Value>],
    ) -> Result<Self, String> {
        let mut columns: Vec<String> = Vec::new();
        for r in records {
            for k in r.keys() {
                if !columns.contains(k) {
                    columns.push(k.clone());
                }
            }
        }
        let mut t = Table::new(columns.clone());
        for (i, r) in records.iter().enumerate() {
            let mut row = Vec::with_capacity(columns.len());
            for c in &columns {
                row.push(match r.get(c) {
                    None | Some(serde_json::Value::Null) => None,
                    Some(serde_json::Value::String(s)) => Some(s.clone()),
                    Some(v @ (serde_json::Value::Number(_) | serde_json::Value::Bool(_))) => {
                        Some(v.to_string())
                    }
                    Some(_) => {
                        return Err(format!(
                            "record {i}, column {c:?}: arrays and objects cannot be table cells"
                        ))
                    }
                });
            }
            t.rows.push(row);
        }
        Ok(t)
    }

    /// The canonical TSV text. Cells may not hold tabs or line breaks; every row must
    /// have as many cells as there are columns; column names must be non-empty and
    /// distinct.
    pub fn to_tsv(&self) -> Result<String, String> {
        fn check(cell: &str, what: &str) -> Result<(), String> {
            if cell.contains(['\t', '\n', '\r']) {
                Err(format!("{what} {cell:?} holds a tab or line break"))
            } else {
                Ok(())
            }
        }
        if self.columns.is_empty() {
            return Err("a table needs at least one column".into());
        }
        let mut out = String::new();
        for (i, c) in self.columns.iter().enumerate() {
            check(c, "column name")?;
            if c.is_empty() {
                return Err(format!("column {} has an empty name", i + 1));
            }
            if self.columns[..i].contains(c) {
                return Err(format!("column {c:?} appears twice"));
            }
        }
        out.push_str(&self.columns.join("\t"));
        out.push('\n');
        for (i, row) in self.rows.iter().enumerate() {
            if row.len() != self.columns.len() {
                return Err(format!(
                    "row {} has {} cells for {} columns",
                    i + 1,
                    row.len(),
                    self.columns.len()
                ));
            }
            for (j, cell) in row.iter().enumerate() {
                if j > 0 {
                    out.push('\t');
                }
                match cell.as_deref() {
                    None | Some("") => out.push_str("n/a"),
                    Some(s) => {
                        check(s, "cell")?;
                        out.push_str(s);
                    }
                }
            }
            out.push('\n');
        }
        Ok(out)
    }
}

/// Canonical JSON text of a value: two-space indents, a final newline.
pub fn to_json_text<T: Serialize + ?Sized>(value: &T) -> Result<String, String> {
    let mut s = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    s.push('\n');
    Ok(s)
}

/// The path of a file that accompanies `data_file`: same directory and entities, with
/// `suffix` (the data file's own when `None`) and `extension` (`.json`, `.tsv`…).
///
/// `sub-01_task-rest_bold.nii.gz` → `sub-01_task-rest_bold.json` (sidecar) or, with
/// suffix `events` and `.tsv`, `sub-01_task-rest_events.tsv`.
pub fn companion_path(
    data_file: &Path,
    suffix: Option<&str>,
    extension: &str,
) -> Result<PathBuf, WriteError> {
    let bad = || WriteError::NotADataFile(data_file.to_path_buf());
    let name = data_file
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(bad)?;
    let (stem, _) = crate::filename::split_extension(name.trim_end_matches('/'));
    let (entities, own_suffix) = match stem.rsplit_once('_') {
        Some((e, s)) => (Some(e), s),
        None => (None, stem),
    };
    if own_suffix.is_empty() || own_suffix.contains('-') {
        return Err(bad());
    }
    let suffix = suffix.unwrap_or(own_suffix);
    let mut new_name = match entities {
        Some(e) => format!("{e}_{suffix}"),
        None => suffix.to_string(),
    };
    if !extension.is_empty() && !extension.starts_with('.') {
        new_name.push('.');
    }
    new_name.push_str(extension);
    Ok(data_file.with_file_name(new_name))
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Removes the temporary file unless disarmed.
struct TempGuard {
    path: PathBuf,
    armed: bool,
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        if self.armed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A new temporary file name next to `target` (in its directory, hidden, unique to this
/// process and call): where its content is written before the rename over it.
fn temp_path(target: &Path) -> PathBuf {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.join(format!(
        ".{name}.{}-{}.nidos-tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Writes `target` atomically with `fill`, which writes the content into the temporary
/// file. Refuses an existing target unless `force`. On any failure (including one
/// `fill` returns) nothing is left: no temporary file, the target untouched.
pub fn atomic_write_with(
    target: &Path,
    force: bool,
    fill: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<(), WriteError> {
    if !force && target.symlink_metadata().is_ok() {
        return Err(WriteError::Exists(target.to_path_buf()));
    }
    let tmp = temp_path(target);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(io(&tmp))?;
    let mut guard = TempGuard {
        path: tmp.clone(),
        armed: true,
    };
    fill(&mut file).map_err(io(target))?;
    file.flush().map_err(io(target))?;
    file.sync_all().map_err(io(target))?;
    drop(file);
    if force {
        std::fs::rename(&tmp, target).map_err(io(target))?;
    } else {
        // A hard link never replaces an existing file: no race with another writer.
        match std::fs::hard_link(&tmp, target) {
            Ok(()) => {
                let _ = std::fs::remove_file(&tmp);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(WriteError::Exists(target.to_path_buf()));
            }
            Err(_) => {
                // Filesystems without hard links: check, then rename.
                if target.symlink_metadata().is_ok() {
                    return Err(WriteError::Exists(target.to_path_buf()));
                }
                std::fs::rename(&tmp, target).map_err(io(target))?;
            }
        }
    }
    guard.armed = false;
    Ok(())
}

/// Writes bytes to `target` atomically (see [`atomic_write_with`]).
pub fn atomic_write(target: &Path, content: &[u8], force: bool) -> Result<(), WriteError> {
    atomic_write_with(target, force, |f| f.write_all(content))
}

/// Writes a JSON file (canonical formatting) atomically.
pub fn write_json<T: Serialize + ?Sized>(
    target: &Path,
    value: &T,
    force: bool,
) -> Result<(), WriteError> {
    let text = to_json_text(value).map_err(|message| WriteError::Content {
        path: target.to_path_buf(),
        message,
    })?;
    atomic_write(target, text.as_bytes(), force)
}

/// Writes a TSV file (canonical formatting) atomically.
pub fn write_tsv(target: &Path, table: &Table, force: bool) -> Result<(), WriteError> {
    let text = table.to_tsv().map_err(|message| WriteError::Content {
        path: target.to_path_buf(),
        message,
    })?;
    atomic_write(target, text.as_bytes(), force)
}

/// Writes the JSON sidecar of a data file (same name, `.json`); returns its path.
pub fn write_sidecar<T: Serialize + ?Sized>(
    data_file: &Path,
    value: &T,
    force: bool,
) -> Result<PathBuf, WriteError> {
    let target = companion_path(data_file, None, ".json")?;
    write_json(&target, value, force)?;
    Ok(target)
}

/// Writes a table accompanying a data file (e.g. `events` for a bold run); returns its
/// path.
pub fn write_table_for(
    data_file: &Path,
    suffix: &str,
    table: &Table,
    force: bool,
) -> Result<PathBuf, WriteError> {
    let target = companion_path(data_file, Some(suffix), ".tsv")?;
    write_tsv(&target, table, force)?;
    Ok(target)
}

/// Why [`replace_checked`] did not replace a file.
#[derive(Debug, thiserror::Error)]
pub enum ReplaceError {
    /// The file is not what the caller expected it to be (someone else wrote it, or it
    /// was replaced); the target is as that other writer left it.
    #[error("{0} changed while the new content was being written: left as it is now")]
    Changed(PathBuf),
    /// The file's owner or group cannot be kept (the file belongs to another user or a
    /// group this process is not in): replacing it would hand it to this user.
    #[error("{path}: its owner or group cannot be kept ({source}): left as it is")]
    Owner {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn rio(path: &Path) -> impl FnOnce(std::io::Error) -> ReplaceError + '_ {
    move |source| ReplaceError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What identifies one state of a file: its inode, size and modification time.
fn state(m: &std::fs::Metadata) -> (u64, u64, u64, i64, i64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec())
}

/// Replaces the regular file `target`, whose content must still be `expected`, by
/// `content`, keeping its owner, group and mode.
///
/// The new content goes to a temporary file in the same directory that takes the old
/// file's owner, group and mode and is flushed to disk. Then, immediately before the
/// swap, the target is read again and compared with `expected` (bytes, size and
/// modification time), and it is swapped with the temporary file in one step
/// (`renameat2` with `RENAME_EXCHANGE` where the filesystem has it, else a rename). After
/// the swap the old file is looked at once more: if someone wrote to it in between, the
/// swap is undone and the write refused. The window in which a concurrent writer's
/// bytes could still be lost shrinks to the few instructions between that last look and
/// the return; a writer that keeps the file open across the swap is not protected.
pub fn replace_checked(target: &Path, expected: &[u8], content: &[u8]) -> Result<(), ReplaceError> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
    let old = OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(target)
        .map_err(rio(target))?;
    let meta = old.metadata().map_err(rio(target))?;
    if !meta.is_file() {
        return Err(ReplaceError::Changed(target.to_path_buf()));
    }
    let tmp = temp_path(target);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(rio(&tmp))?;
    let mut guard = TempGuard {
        path: tmp.clone(),
        armed: true,
    };
    file.write_all(content).map_err(rio(target))?;
    if let Err(source) = std::os::unix::fs::fchown(&file, Some(meta.uid()), Some(meta.gid())) {
        let got = file.metadata().map_err(rio(&tmp))?;
        if (got.uid(), got.gid()) != (meta.uid(), meta.gid()) {
            return Err(ReplaceError::Owner {
                path: target.to_path_buf(),
                source,
            });
        }
    }
    // After the owner: a change of owner clears set-id bits.
    file.set_permissions(std::fs::Permissions::from_mode(meta.mode() & 0o7777))
        .map_err(rio(target))?;
    file.sync_all().map_err(rio(target))?;

    // The last look before the swap: the same file, with the expected bytes.
    let unchanged = |old: &File| -> Result<bool, ReplaceError> {
        let now = std::fs::symlink_metadata(target).map_err(rio(target))?;
        let held = old.metadata().map_err(rio(target))?;
        if state(&now) != state(&held) || held.len() != expected.len() as u64 {
            return Ok(false);
        }
        let mut bytes = Vec::with_capacity(expected.len());
        let mut reader = old;
        std::io::Seek::seek(&mut reader, std::io::SeekFrom::Start(0)).map_err(rio(target))?;
        reader
            .take(expected.len() as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(rio(target))?;
        Ok(bytes == expected && state(&held) == state(&old.metadata().map_err(rio(target))?))
    };
    if !unchanged(&old)? {
        return Err(ReplaceError::Changed(target.to_path_buf()));
    }
    let before = state(&old.metadata().map_err(rio(target))?);
    let exchanged = rustix::fs::renameat_with(
        rustix::fs::CWD,
        tmp.as_path(),
        rustix::fs::CWD,
        target,
        rustix::fs::RenameFlags::EXCHANGE,
    );
    match exchanged {
        Ok(()) => {
            // The old file is now at the temporary name. Written to since the look?
            let after = state(&old.metadata().map_err(rio(target))?);
            if after != before {
                // Undo: the old file (with the other writer's bytes) goes back.
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    tmp.as_path(),
                    rustix::fs::CWD,
                    target,
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .map_err(|e| rio(target)(e.into()))?;
                return Err(ReplaceError::Changed(target.to_path_buf()));
            }
            // The temporary name now holds the old file: the guard removes it.
        }
        Err(_) => {
            std::fs::rename(&tmp, target).map_err(rio(target))?;
            guard.armed = false;
        }
    }
    drop(file);
    drop(guard);
    Ok(())
}
