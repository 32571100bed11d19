//! One `fix --apply` at a time per dataset: an exclusive `flock` on the dataset's root
//! directory itself (nothing is written into the dataset for it). The lock goes with the
//! process: it is released when the run ends, however it ends.

use std::fs::File;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::FixError;

/// Held for a run; released when dropped.
#[derive(Debug)]
pub struct DatasetLock {
    _dir: File,
}

impl DatasetLock {
    /// Takes the dataset's lock, waiting at most `wait` for another run to finish;
    /// `on_wait` is called once, with the other run's process id when it can be found,
    /// if the lock is held.
    pub fn acquire(
        root: &Path,
        wait: Duration,
        mut on_wait: impl FnMut(Option<u32>),
    ) -> Result<DatasetLock, FixError> {
        let io = |source: std::io::Error| FixError::Io {
            path: root.to_path_buf(),
            source,
        };
        let dir = File::open(root).map_err(io)?;
        if !dir.metadata().map_err(io)?.is_dir() {
            return Err(io(std::io::Error::other("not a directory")));
        }
        let start = Instant::now();
        let mut told = false;
        loop {
            match rustix::fs::flock(&dir, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(DatasetLock { _dir: dir }),
                Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
                    let holder = holder(&dir);
                    if start.elapsed() >= wait {
                        return Err(FixError::Locked {
                            root: root.to_path_buf(),
                            holder: holder.map_or_else(String::new, |p| format!(" (process {p})")),
                            waited: wait.as_secs_f64(),
                        });
                    }
                    if !told {
                        told = true;
                        on_wait(holder);
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(e) => return Err(io(e.into())),
            }
        }
    }
}

/// The process holding a `flock` on the directory, from `/proc/locks` (Linux); `None`
/// where that cannot be told.
fn holder(dir: &File) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let ino = dir.metadata().ok()?.ino();
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let me = std::process::id();
    locks.lines().find_map(|line| {
        // `1: FLOCK  ADVISORY  WRITE 1234 00:2a:56789 0 EOF`
        let f: Vec<&str> = line.split_whitespace().collect();
        let (kind, pid, dev_ino) = (f.get(1)?, f.get(4)?, f.get(5)?);
        let pid: u32 = pid.parse().ok()?;
        let this = dev_ino.rsplit(':').next()?.parse::<u64>().ok()? == ino;
        (*kind == "FLOCK" && this && pid != me).then_some(pid)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_waits_then_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let first = DatasetLock::acquire(dir.path(), Duration::ZERO, |_| {}).unwrap();
        let err = DatasetLock::acquire(dir.path(), Duration::from_millis(120), |_| {})
            .err()
            .unwrap();
        assert!(err.to_string().contains("another"), "{err}");
        drop(first);
        assert!(DatasetLock::acquire(dir.path(), Duration::ZERO, |_| {}).is_ok());
        // Nothing was written into the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
