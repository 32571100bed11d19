//! Writing a plan: every target is checked first (still safe, unchanged since the plan,
//! writable), so a read-only dataset gets an error and no write at all; then each file
//! is replaced atomically (a temporary file in its directory, renamed over it) with its
//! permissions kept.

use std::io::Write;
use std::path::PathBuf;

use crate::plan::{unsafe_target, Plan};
use crate::FixError;

/// Writes every edit of `plan`; returns the paths written, in order.
pub fn apply(plan: &Plan) -> Result<Vec<String>, FixError> {
    let mut targets: Vec<(PathBuf, Option<std::fs::Permissions>)> = Vec::new();
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
        let perms = match current {
            Some(_) => {
                let m = std::fs::metadata(&full).map_err(|source| FixError::Io {
                    path: full.clone(),
                    source,
                })?;
                if m.permissions().readonly() {
                    return Err(FixError::ReadOnly(full));
                }
                Some(m.permissions())
            }
            None => None,
        };
        targets.push((full, perms));
    }
    let mut written = Vec::new();
    for (edit, (full, perms)) in plan.edits.iter().zip(targets) {
        let exists = edit.before.is_some();
        nidos_dataset::write::atomic_write_with(&full, exists, |f| {
            if let Some(p) = perms {
                f.set_permissions(p)?;
            }
            f.write_all(&edit.after)
        })
        .map_err(|e| FixError::Write {
            written: written.clone(),
            source: e,
        })?;
        written.push(edit.path.clone());
    }
    Ok(written)
}
