//! Writing a plan, under the dataset's lock ([`crate::DatasetLock`]). Every target is
//! checked first (still safe, unchanged since the plan, writable), so a read-only dataset
//! gets an error and no write at all; then each file is replaced on its own
//! ([`nidos_dataset::write::replace_checked`]): its content compared once more with what
//! the plan was made from immediately before the swap, its owner, group and mode kept. A
//! file that changed meanwhile is refused (left as the other writer left it) and the
//! others are still written.

use std::io::Write;
use std::path::PathBuf;

use nidos_dataset::write::ReplaceError;

use crate::lock::DatasetLock;
use crate::plan::{unsafe_target, Plan};
use crate::FixError;

/// What a run wrote, and what it refused to write.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Applied {
    /// Dataset paths written, in the plan's order.
    pub written: Vec<String>,
    /// Dataset paths not written, with why (changed by someone else meanwhile).
    pub refused: Vec<(String, String)>,
}

/// Writes every edit of `plan`; the lock is the proof that no other run writes the
/// dataset meanwhile (take it before planning, so the plan sees the other run's edits).
pub fn apply(plan: &Plan, _lock: &DatasetLock) -> Result<Applied, FixError> {
    let mut targets: Vec<PathBuf> = Vec::new();
    for edit in &plan.edits {
        let full = unsafe_target(&plan.root, &edit.path).map_err(|why| FixError::Unsafe {
            path: edit.path.clone(),
            why,
        })?;
        let current = match std::fs::read(&full) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => return Err(FixError::Io { path: full, source }),
        };
        if current != edit.before {
            return Err(FixError::ChangedMeanwhile(full));
        }
        let dir = full.parent().map(PathBuf::from).unwrap_or_default();
        let read_only = |p: &PathBuf| std::fs::metadata(p).map(|m| m.permissions().readonly());
        if read_only(&dir).map_err(|source| FixError::Io {
            path: dir.clone(),
            source,
        })? {
            return Err(FixError::ReadOnly(dir));
        }
        if current.is_some()
            && read_only(&full).map_err(|source| FixError::Io {
                path: full.clone(),
                source,
            })?
        {
            return Err(FixError::ReadOnly(full));
        }
        targets.push(full);
    }
    let mut done = Applied::default();
    for (edit, full) in plan.edits.iter().zip(targets) {
        let result = match &edit.before {
            Some(before) => nidos_dataset::write::replace_checked(&full, before, &edit.after),
            // A new file: created only if it still does not exist.
            None => {
                nidos_dataset::write::atomic_write_with(&full, false, |f| f.write_all(&edit.after))
                    .map_err(|e| match e {
                        nidos_dataset::write::WriteError::Exists(p) => ReplaceError::Changed(p),
                        other => ReplaceError::Io {
                            path: full.clone(),
                            source: std::io::Error::other(other.to_string()),
                        },
                    })
            }
        };
        match result {
            Ok(()) => done.written.push(edit.path.clone()),
            Err(ReplaceError::Changed(_)) => done.refused.push((
                edit.path.clone(),
                "changed by someone else while fix ran: not written".into(),
            )),
            Err(e) => {
                return Err(FixError::Write {
                    written: done.written,
                    source: e,
                })
            }
        }
    }
    Ok(done)
}
