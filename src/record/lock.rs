//! One orch at a time on a journal: `run --journal`, `resume` and `approve` hold
//! an advisory lock (`flock`) of the lock file beside it, `FILE.lock`, for as long as they
//! use it, and write their process id in it. A second one refuses (exit 2) rather than run
//! the same calls twice, or append a decision under a running run.
//!
//! The journal itself cannot carry the lock: each line is written under a short `flock` of
//! the journal (see [`crate::sink`]), which would give it up. The lock file is removed when
//! its holder ends; one left by a killed holder is taken over (the kernel let its lock go).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use super::RecordError;
use crate::text::printable;

/// The lock of one journal, held until dropped.
#[derive(Debug)]
pub struct Held {
    /// `None` on a file system without locks: nothing is held, nothing removed.
    file: Option<(File, PathBuf)>,
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some((_, path)) = &self.file {
            // Removed while still locked: whoever opened it meanwhile sees it is gone.
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The lock file of `journal`: its name with `.lock` added.
fn lock_path(journal: &Path) -> PathBuf {
    let mut name = journal.as_os_str().to_os_string();
    name.push(".lock");
    PathBuf::from(name)
}

/// Takes the lock of `journal`, or says who holds it (exit 2).
pub fn hold(journal: &Path) -> Result<Held, RecordError> {
    let path = lock_path(journal);
    let fail = |e: std::io::Error| RecordError::Lock {
        path: shown(&path),
        source: e,
    };
    loop {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(fail)?;
        match file.try_lock() {
            Ok(()) if still_there(&file, &path) => {
                file.set_len(0).map_err(fail)?;
                file.write_all(format!("{}\n", std::process::id()).as_bytes())
                    .map_err(fail)?;
                return Ok(Held {
                    file: Some((file, path)),
                });
            }
            // Its holder removed it as we opened it: try the file at the path now.
            Ok(()) => continue,
            Err(TryLockError::WouldBlock) => {
                let pid = holder(&mut file).map_or("unknown".to_string(), |p| p.to_string());
                return Err(RecordError::InUse {
                    journal: shown(journal),
                    pid,
                });
            }
            // A file system without locks: the journal is used as it is.
            Err(TryLockError::Error(_)) => return Ok(Held { file: None }),
        }
    }
}

/// Whether `file` is still the file at `path` (not removed by the holder it waited for).
fn still_there(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The process id its holder wrote in the lock file, if it did yet.
fn holder(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// A path as an error line shows it.
fn shown(path: &Path) -> String {
    printable(&path.display().to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_journal_is_refused_with_the_holders_pid_and_free_again_once_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("run.journal");
        let held = hold(&journal).unwrap();
        let lock = dir.path().join("run.journal.lock");
        assert_eq!(
            std::fs::read_to_string(&lock).unwrap(),
            format!("{}\n", std::process::id())
        );
        let refused = hold(&journal).unwrap_err();
        assert_eq!(
            refused.to_string(),
            format!(
                "journal {} is in use by another orch (pid {})",
                journal.display(),
                std::process::id()
            )
        );
        assert!(matches!(refused, RecordError::InUse { .. }), "a usage error (exit 2)");
        drop(held);
        assert!(!lock.exists(), "the lock file goes with its holder");
        drop(hold(&journal).unwrap());
    }
}
