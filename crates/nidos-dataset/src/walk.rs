//! Walking a dataset: the ignore file (gitignore semantics), dotfiles, opaque
//! directories, directories that are files, and symbolic links (broken, cyclic, leaving
//! the dataset). Unreadable entries become issues; the walk never fails part-way.

use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::entry::{DatasetIssue, FileEntry, Severity};
use crate::filename::parse_name;
use crate::fs::{Fs, Kind};
use crate::schema_info::SchemaInfo;

/// Deepest directory nesting followed.
const MAX_DEPTH: usize = 64;
/// Largest ignore file read.
const MAX_IGNORE_BYTES: u64 = 1 << 20;

#[derive(Default)]
pub(crate) struct Walked {
    pub files: Vec<FileEntry>,
    /// Every directory walked, dataset-relative with a leading `/`, no trailing `/`.
    pub dirs: Vec<String>,
    pub issues: Vec<DatasetIssue>,
}

struct Walker<'a> {
    fs: &'a dyn Fs,
    root: &'a Path,
    info: &'a SchemaInfo,
    ignore: Option<Gitignore>,
}

#[derive(Clone, Copy)]
struct Flags {
    ignored: bool,
    opaque: bool,
}

pub(crate) fn walk(fs: &dyn Fs, root: &Path, info: &SchemaInfo) -> Walked {
    let mut issues = Vec::new();
    let ignore = load_ignore(fs, root, &info.ignore_file, &mut issues);
    let w = Walker {
        fs,
        root,
        info,
        ignore,
    };
    let mut out = Walked {
        issues,
        ..Walked::default()
    };
    let mut ancestors = vec![root.to_path_buf()];
    w.dir(
        &mut out,
        root,
        "",
        &mut ancestors,
        Flags {
            ignored: false,
            opaque: false,
        },
    );
    out
}

fn load_ignore(
    fs: &dyn Fs,
    root: &Path,
    name: &str,
    issues: &mut Vec<DatasetIssue>,
) -> Option<Gitignore> {
    if name.is_empty() {
        return None;
    }
    let path = root.join(name);
    // Only an ignore file inside the dataset is read (a link may lead elsewhere).
    if let Some(target) = fs.canonicalize(&path).ok().filter(|t| !t.starts_with(root)) {
        issues.push(DatasetIssue::new(
            "SYMLINK_OUTSIDE_DATASET",
            Severity::Warning,
            &format!("/{name}"),
            format!(
                "symbolic link points outside the dataset ({}); not read",
                target.display()
            ),
        ));
        return None;
    }
    let bytes = match fs.read(&path, MAX_IGNORE_BYTES) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            issues.push(DatasetIssue::new(
                "FILE_READ",
                Severity::Error,
                &format!("/{name}"),
                e.to_string(),
            ));
            return None;
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    let mut b = GitignoreBuilder::new(root);
    for (i, line) in text.lines().enumerate() {
        if let Err(e) = b.add_line(None, line) {
            let mut issue = DatasetIssue::new(
                "IGNORE_PATTERN_INVALID",
                Severity::Warning,
                &format!("/{name}"),
                e.to_string(),
            );
            issue.line = Some(i + 1);
            issues.push(issue);
        }
    }
    b.build().ok()
}

impl Walker<'_> {
    fn is_ignored(&self, rel: &str, is_dir: bool) -> bool {
        match &self.ignore {
            Some(g) => g
                .matched(Path::new(rel.trim_start_matches('/')), is_dir)
                .is_ignore(),
            None => false,
        }
    }

    fn dir(
        &self,
        out: &mut Walked,
        abs: &Path,
        rel: &str,
        ancestors: &mut Vec<PathBuf>,
        flags: Flags,
    ) {
        let mut names = match self.fs.read_dir_meta(abs) {
            Ok(n) => n,
            Err(e) => {
                issue(
                    out,
                    "FILE_READ",
                    Severity::Error,
                    &format!("{rel}/"),
                    format!("cannot list directory: {e}"),
                );
                return;
            }
        };
        names.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        names.retain(|(n, _)| !n.starts_with('.'));
        // A directory with several subdirectories (the root's subjects, a subject's
        // sessions, a session's datatypes) has its entries walked in parallel, joined
        // in name order as a serial walk would list them; rayon shares the nested work
        // between the threads, so a dataset of few large subjects is walked on all
        // cores too.
        let subdirs = names
            .iter()
            .filter(|(_, m)| {
                m.as_ref()
                    .is_ok_and(|m| m.kind == Some(crate::fs::Kind::Dir))
            })
            .count();
        if subdirs > 1 {
            use rayon::prelude::*;
            let parts: Vec<Walked> = names
                .into_par_iter()
                .map(|(name, meta)| {
                    let mut part = Walked::default();
                    let mut ancestors = ancestors.clone();
                    self.entry(&mut part, (abs, rel), (&name, meta), &mut ancestors, flags);
                    part
                })
                .collect();
            // (Room for all the parts' files at once: growing the list by doubling
            // would leave up to half of it unused.)
            out.files.reserve(parts.iter().map(|p| p.files.len()).sum());
            for part in parts {
                out.files.extend(part.files);
                out.dirs.extend(part.dirs);
                out.issues.extend(part.issues);
            }
            return;
        }
        for (name, meta) in names {
            self.entry(out, (abs, rel), (&name, meta), ancestors, flags);
        }
    }

    /// One entry `name` (with its metadata) of directory `abs` (`rel` from the root): a
    /// file, a directory that is a file, or a directory to descend.
    fn entry(
        &self,
        out: &mut Walked,
        (abs, rel): (&Path, &str),
        (name, meta): (&str, std::io::Result<crate::fs::Meta>),
        ancestors: &mut Vec<PathBuf>,
        flags: Flags,
    ) {
        // Exactly the room it needs (`format!` grows it by doubling, to up to twice the
        // length): the path is kept for the whole run, one per file.
        let mut child_rel = String::with_capacity(rel.len() + 1 + name.len());
        child_rel.push_str(rel);
        child_rel.push('/');
        child_rel.push_str(name);
        let child_abs = abs.join(name);
        let meta = match meta {
            Ok(m) => m,
            Err(e) => {
                issue(
                    out,
                    "FILE_READ",
                    Severity::Error,
                    &child_rel,
                    format!("cannot read metadata: {e}"),
                );
                return;
            }
        };
        let mut outside = false;
        let mut target: Option<PathBuf> = None;
        if meta.is_symlink {
            match self.fs.canonicalize(&child_abs) {
                Ok(t) => {
                    if !t.starts_with(self.root) {
                        outside = true;
                        issue(
                            out,
                            "SYMLINK_OUTSIDE_DATASET",
                            Severity::Warning,
                            &child_rel,
                            format!("symbolic link points outside the dataset ({})", t.display()),
                        );
                    }
                    target = Some(t);
                }
                Err(e) => {
                    let looped = is_loop_error(&e);
                    let annexed = meta
                        .link_target
                        .as_ref()
                        .map(|t| is_annex_key_link(t))
                        .unwrap_or(false);
                    if looped {
                        issue(
                            out,
                            "SYMLINK_CYCLE",
                            Severity::Error,
                            &child_rel,
                            "symbolic link loop",
                        );
                    } else if !annexed {
                        issue(
                            out,
                            "SYMLINK_BROKEN",
                            Severity::Error,
                            &child_rel,
                            "symbolic link target does not exist",
                        );
                    }
                }
            }
        }
        let child_flags = Flags {
            ignored: flags.ignored || self.is_ignored(&child_rel, meta.kind == Some(Kind::Dir)),
            opaque: flags.opaque || (rel.is_empty() && self.info.is_opaque_dir(name)),
        };
        if meta.kind == Some(Kind::Dir) {
            let canon = target
                .unwrap_or_else(|| ancestors.last().map(|a| a.join(name)).unwrap_or_default());
            if ancestors.iter().any(|a| a == &canon) {
                issue(
                    out,
                    "SYMLINK_CYCLE",
                    Severity::Error,
                    &child_rel,
                    "symbolic link to a directory that contains it; not followed",
                );
                return;
            }
            if outside {
                return;
            }
            let parsed = parse_name(name, true);
            if parsed.suffix.is_some()
                && !parsed.pairs.is_empty()
                && self.info.dir_extensions.contains(&parsed.extension)
            {
                let size = self.dir_size(&child_abs, 0);
                out.files.push(FileEntry {
                    path: format!("{child_rel}/"),
                    size,
                    is_dir: true,
                    symlink: meta.is_symlink,
                    broken_symlink: false,
                    outside,
                    ignored: child_flags.ignored,
                    opaque: child_flags.opaque,
                    name: parsed,
                    datatype: None,
                });
                return;
            }
            out.dirs.push(child_rel.clone());
            if ancestors.len() >= MAX_DEPTH {
                issue(
                    out,
                    "FILE_READ",
                    Severity::Error,
                    &child_rel,
                    "directory nesting too deep; not descended",
                );
                return;
            }
            ancestors.push(canon);
            self.dir(out, &child_abs, &child_rel, ancestors, child_flags);
            ancestors.pop();
        } else {
            if meta.kind == Some(Kind::Other) && !outside && !child_flags.ignored {
                // A FIFO, socket or device: the guarded open refuses it, so say so here,
                // where it is found, rather than leave an unexplained empty file.
                issue(
                    out,
                    "FILE_READ",
                    Severity::Error,
                    &child_rel,
                    "not a regular file (a FIFO, socket or device); not read",
                );
            }
            out.files.push(FileEntry {
                name: parse_name(name, false),
                path: child_rel,
                size: meta.size,
                is_dir: false,
                symlink: meta.is_symlink,
                broken_symlink: meta.kind.is_none(),
                outside,
                ignored: child_flags.ignored,
                opaque: child_flags.opaque,
                datatype: None,
            });
        }
    }

    /// Total size of the files under a directory, dotfiles left out as in the walk (so a
    /// `.ome.zarr/` with only empty chunks is an empty file). Bounded depth; errors count 0.
    fn dir_size(&self, abs: &Path, depth: usize) -> u64 {
        if depth > 16 {
            return 0;
        }
        let Ok(names) = self.fs.read_dir(abs) else {
            return 0;
        };
        let mut total = 0u64;
        for n in names.iter().filter(|n| !n.starts_with('.')) {
            let p = abs.join(n);
            match self.fs.metadata(&p) {
                Ok(m) if m.is_symlink => total = total.saturating_add(m.size),
                Ok(m) if m.kind == Some(Kind::Dir) => {
                    total = total.saturating_add(self.dir_size(&p, depth + 1))
                }
                Ok(m) => total = total.saturating_add(m.size),
                Err(_) => {}
            }
        }
        total
    }
}

fn issue(
    out: &mut Walked,
    code: &str,
    severity: Severity,
    location: &str,
    message: impl Into<String>,
) {
    out.issues
        .push(DatasetIssue::new(code, severity, location, message));
}

fn is_loop_error(e: &std::io::Error) -> bool {
    // ELOOP is 40 on Linux, 62 on macOS/BSD.
    matches!(e.raw_os_error(), Some(40) | Some(62))
        || e.to_string().contains("too many levels of symbolic links")
}

/// A git-annex link points into `.git/annex/objects/` at a file named by an annex key
/// (`SHA256E-s1234--<hash>.nii.gz`): its content is simply not fetched, so the file is
/// validated by name without complaint. Any other dangling link is broken.
fn is_annex_key_link(target: &Path) -> bool {
    let text = target.to_string_lossy();
    if !text.contains("annex/objects") {
        return false;
    }
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let Some((backend, rest)) = name.split_once("-s") else {
        return false;
    };
    let size_digits = rest.chars().take_while(char::is_ascii_digit).count();
    !backend.is_empty()
        && backend
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        && size_digits > 0
        && rest[size_digits..].contains("--")
}
