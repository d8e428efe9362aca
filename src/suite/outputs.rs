//! The files `orch test` reads and writes, kept apart: two suites of one name would share
//! the keys of their cases (results lines, `--resume`, `--merge` and JUnit name a case by
//! suite name and id), an output that is also an input would destroy it, and a refused
//! command (exit 2) leaves every file as it was.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::file::name_of;

/// Files an `orch` command names that clash: two suites of one name, or an output that is
/// also an input.
#[derive(Debug, thiserror::Error)]
pub enum FileClash {
    /// Two suite files of one name.
    #[error(
        "suites {} and {} have one name `{name}` (results and JUnit know a case by its suite's file name and its id); rename one",
        .first.display(),
        .second.display()
    )]
    SameName {
        /// The first file of that name.
        first: PathBuf,
        /// The second.
        second: PathBuf,
        /// The name.
        name: String,
    },
    /// A file written that is also another file named.
    #[error(
        "{written_flag} {} and {other_flag} {} are the same file (orch would write over what it reads)",
        .written.display(),
        .other.display()
    )]
    SameFile {
        /// The flag of the file written.
        written_flag: &'static str,
        /// Its path.
        written: PathBuf,
        /// The flag of the other.
        other_flag: &'static str,
        /// Its path.
        other: PathBuf,
    },
}

/// The suites to read, each file once; two files of one name are an error naming both.
pub fn distinct_names(paths: &[PathBuf]) -> Result<Vec<PathBuf>, FileClash> {
    let mut by_name: HashMap<String, &PathBuf> = HashMap::new();
    let mut kept = Vec::new();
    for path in paths {
        match by_name.get(&name_of(path)) {
            Some(first) if same_file(first, path) => {}
            Some(first) => {
                return Err(FileClash::SameName {
                    first: first.to_path_buf(),
                    second: path.clone(),
                    name: name_of(path),
                })
            }
            None => {
                by_name.insert(name_of(path), path);
                kept.push(path.clone());
            }
        }
    }
    Ok(kept)
}

/// A file the command names: its flag (`--junit`, or `SUITE`), its path, and whether the
/// command writes it.
pub struct Named<'a> {
    /// The flag that names it, as the user wrote it.
    pub flag: &'static str,
    /// Its path.
    pub path: &'a Path,
    /// The command writes (or appends to) it.
    pub writes: bool,
}

/// Every file written is none of the other files named: an error names both flags.
pub fn apart(files: &[Named]) -> Result<(), FileClash> {
    for (i, out) in files.iter().enumerate().filter(|(_, f)| f.writes) {
        for (j, other) in files.iter().enumerate() {
            if i != j && other.flag != out.flag && same_file(out.path, other.path) {
                return Err(FileClash::SameFile {
                    written_flag: out.flag,
                    written: out.path.to_path_buf(),
                    other_flag: other.flag,
                    other: other.path.to_path_buf(),
                });
            }
        }
    }
    Ok(())
}

/// Whether two paths name one regular file (or one file still to be made): the same
/// canonical path, or the same inode. Devices and pipes (`/dev/null`, `/dev/stdout`) are
/// never the same file as anything.
fn same_file(a: &Path, b: &Path) -> bool {
    let (Some(x), Some(y)) = (identity(a), identity(b)) else {
        return false;
    };
    if x == y {
        return true;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(m), Ok(n)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return (m.dev(), m.ino()) == (n.dev(), n.ino());
        }
    }
    false
}

/// A path's canonical form; for a file not made yet, its canonical directory and its name;
/// `None` for a device or a pipe, or a path whose directory does not exist.
fn identity(path: &Path) -> Option<PathBuf> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => path.canonicalize().ok(),
        Ok(_) => None,
        Err(_) => {
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            Some(dir.canonicalize().ok()?.join(path.file_name()?))
        }
    }
}

/// An output written once at the end (`--junit`): opened at the start, so a path that cannot
/// be written stops the command before it runs, but left as it was until [`Pending::write`];
/// a file made only to check the path is removed again when the command ends without writing.
pub struct Pending {
    path: PathBuf,
    /// The check made the file: it goes again unless written.
    made: bool,
    written: bool,
}

impl Pending {
    /// Checks that `path` can be written, without changing what it holds.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let existed = path.try_exists().unwrap_or(true);
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        Ok(Pending {
            path: path.to_path_buf(),
            made: !existed,
            written: false,
        })
    }

    /// Replaces what the file holds with what `write` writes, through a buffer (a document
    /// too large to build whole).
    pub fn write_with(
        mut self,
        write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        self.written = true;
        let mut out = std::io::BufWriter::with_capacity(64 << 10, std::fs::File::create(&self.path)?);
        write(&mut out)?;
        std::io::Write::flush(&mut out)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if self.made && !self.written {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_file_by_two_spellings_is_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("r.jsonl");
        std::fs::write(&a, "").unwrap();
        let b = dir.path().join(".").join("r.jsonl");
        assert!(same_file(&a, &b));
        let link = dir.path().join("hard.jsonl");
        std::fs::hard_link(&a, &link).unwrap();
        assert!(same_file(&a, &link));
        // Not made yet: the same directory and name.
        assert!(same_file(&dir.path().join("new.xml"), &dir.path().join("./new.xml")));
        assert!(!same_file(&a, &dir.path().join("new.xml")));
        assert!(!same_file(Path::new("/dev/null"), Path::new("/dev/null")));
    }

    #[test]
    fn suites_of_one_name_are_refused_and_one_file_twice_is_read_once() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a/smoke.yaml");
        let b = dir.path().join("b/smoke.yaml");
        for p in [&a, &b] {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        assert_eq!(
            distinct_names(&[a.clone(), a.clone()]).unwrap(),
            std::slice::from_ref(&a)
        );
        let err = distinct_names(&[a.clone(), b.clone()]).unwrap_err().to_string();
        assert!(err.starts_with(&format!(
            "suites {} and {} have one name `smoke`",
            a.display(),
            b.display()
        )));
    }
}
