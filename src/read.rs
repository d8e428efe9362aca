//! Reading a file whole, bounded: configs, schemas, cassettes, the `--cache` file and the
//! reports `orch report` pages all come through [`read_bounded`], so a FIFO never hangs a
//! read and a device or a runaway file is never slurped. An HTTP body read whole (a
//! provider's reply, an OAuth answer, a metadata document) comes through [`read_body_bounded`],
//! so a server never makes orch hold more than its cap. Imports nothing of ours.

use std::io::Read;
use std::path::Path;

/// Why [`read_bounded`] refused a file.
#[derive(Debug)]
pub enum Unread {
    /// Nothing there.
    Missing,
    /// Something that is not a regular file (a directory, a FIFO, a device…), described.
    NotFile(&'static str),
    /// A regular file over the cap.
    TooLarge(u64),
    /// It could not be read.
    Io(std::io::Error),
}

/// The bytes of a regular file of at most `max` bytes, read no further than that: a FIFO
/// never hangs the read and a device or a runaway file is never slurped. Every file orch
/// reads whole (configs, schemas, cassettes, results) comes through here.
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, Unread> {
    read(path, max, false)
}

/// [`read_bounded`] under the file's shared advisory lock: for the line files other
/// processes may be appending to (a shared `--cache`), whose lines are written under the
/// same lock, so the read never sees half a line. Files no one appends to need no lock.
pub fn read_bounded_shared(path: &Path, max: u64) -> Result<Vec<u8>, Unread> {
    read(path, max, true)
}

/// One open, one `fstat` of the open file (not of the path, which may change between a
/// look and an open), then the read; only a refusal looks at the path again, to say why.
fn read(path: &Path, max: u64, shared: bool) -> Result<Vec<u8>, Unread> {
    let file = open(path).map_err(|e| match Entry::of(path) {
        Entry::File => Unread::Io(e),
        Entry::Missing => Unread::Missing,
        other => Unread::NotFile(other.describe()),
    })?;
    let meta = file.metadata().map_err(Unread::Io)?;
    if !meta.is_file() {
        return Err(Unread::NotFile(Entry::of_type(meta.file_type()).describe()));
    }
    // A file system without locks: read as it is.
    if shared {
        let _ = file.lock_shared();
    }
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes).map_err(Unread::Io)?;
    if bytes.len() as u64 > max {
        return Err(Unread::TooLarge(meta.len().max(bytes.len() as u64)));
    }
    Ok(bytes)
}

/// `path` opened to read without blocking: a FIFO with no writer cannot hang the open (and
/// a terminal does not become the process's own); regular files read as ever.
fn open(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    options.open(path)
}

/// What a path names, following symbolic links.
pub enum Entry {
    /// Nothing there.
    Missing,
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// Something else, described.
    Other(&'static str),
}

impl Entry {
    /// What is at `path`: a dangling link, a FIFO, a socket or a device is `Other`.
    pub fn of(path: &Path) -> Entry {
        if std::fs::symlink_metadata(path).is_err() {
            return Entry::Missing;
        }
        match std::fs::metadata(path) {
            Ok(meta) => Entry::of_type(meta.file_type()),
            Err(_) => Entry::Other("a dangling symbolic link"),
        }
    }

    /// What a file of type `kind` is.
    fn of_type(kind: std::fs::FileType) -> Entry {
        if kind.is_file() {
            return Entry::File;
        }
        if kind.is_dir() {
            return Entry::Dir;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if kind.is_fifo() {
                return Entry::Other("a FIFO");
            }
            if kind.is_socket() {
                return Entry::Other("a socket");
            }
            if kind.is_char_device() || kind.is_block_device() {
                return Entry::Other("a device");
            }
        }
        Entry::Other("not a regular file")
    }

    /// The entry in words, for a message ("config x is a FIFO, not a file or a directory").
    pub fn describe(&self) -> &'static str {
        match self {
            Entry::Missing => "missing",
            Entry::File => "a file",
            Entry::Dir => "a directory",
            Entry::Other(what) => what,
        }
    }
}

/// Why [`read_body_bounded`] refused an HTTP body.
#[derive(Debug)]
pub enum BodyUnread {
    /// It is longer than the cap (its `Content-Length` says so, or its bytes passed it).
    TooLarge,
    /// The connection failed while it was read.
    Broken(reqwest::Error),
}

/// The body of `response`, at most `max` bytes: a `Content-Length` beyond the cap is refused
/// before any byte is read, and a body that passes it is read no further.
pub async fn read_body_bounded(mut response: reqwest::Response, max: u64) -> Result<Vec<u8>, BodyUnread> {
    if response.content_length().is_some_and(|n| n > max) {
        return Err(BodyUnread::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(BodyUnread::Broken)? {
        if (body.len() + chunk.len()) as u64 > max {
            return Err(BodyUnread::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// An I/O error as a reason in a message: the common kinds in plain words.
pub fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Whether `path` is `-`, standard input for the commands that read an input once.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// A path as the user would type it: `departments/story.yaml`, not `./departments/story.yaml`;
/// `-` is `<stdin>` (as ripgrep names it).
pub fn display(path: &Path) -> String {
    if is_stdin(path) {
        return "<stdin>".into();
    }
    let s = path.display().to_string();
    s.strip_prefix("./").map(str::to_string).unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_within_the_cap_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, "four").unwrap();
        assert_eq!(read_bounded(&path, 4).unwrap(), b"four");
    }

    #[test]
    fn a_file_over_the_cap_is_refused_with_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, "fives").unwrap();
        assert!(matches!(read_bounded(&path, 4), Err(Unread::TooLarge(5))));
    }

    #[test]
    fn what_is_not_a_regular_file_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            read_bounded(&dir.path().join("none"), 9),
            Err(Unread::Missing)
        ));
        assert!(matches!(
            read_bounded(dir.path(), 9),
            Err(Unread::NotFile("a directory"))
        ));
        #[cfg(unix)]
        {
            let link = dir.path().join("dangling");
            std::os::unix::fs::symlink(dir.path().join("none"), &link).unwrap();
            assert!(matches!(
                read_bounded(&link, 9),
                Err(Unread::NotFile("a dangling symbolic link"))
            ));
            // Opened without blocking: no writer, and the read is refused, not hung.
            let fifo = dir.path().join("pipe");
            assert!(std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success());
            assert!(matches!(read_bounded_shared(&fifo, 9), Err(Unread::NotFile("a FIFO"))));
        }
    }

    /// A loopback server that answers one request with `head` then `body` and hangs up.
    async fn answering(head: &'static str, body: &'static str) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let _ = socket.read(&mut [0u8; 4096]).await;
            let answer = format!("HTTP/1.1 200 OK\r\nconnection: close\r\n{head}\r\n{body}");
            let _ = socket.write_all(answer.as_bytes()).await;
        });
        url
    }

    async fn body_of(head: &'static str, body: &'static str, max: u64) -> Result<Vec<u8>, BodyUnread> {
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(crate::tls::client_config().unwrap())
            .build()
            .unwrap();
        let response = client.get(answering(head, body).await).send().await.unwrap();
        read_body_bounded(response, max).await
    }

    #[tokio::test]
    async fn a_body_is_read_up_to_its_cap_and_refused_past_it() {
        let chunked = "transfer-encoding: chunked\r\n";
        assert_eq!(body_of(chunked, "4\r\nabcd\r\n0\r\n\r\n", 4).await.unwrap(), b"abcd");
        assert!(matches!(
            body_of(chunked, "4\r\nabcd\r\n0\r\n\r\n", 3).await,
            Err(BodyUnread::TooLarge)
        ));
        // A length past the cap is refused unread (read, this short body would be broken).
        assert!(matches!(
            body_of("content-length: 100\r\n", "abcd", 50).await,
            Err(BodyUnread::TooLarge)
        ));
        assert!(matches!(
            body_of("content-length: 100\r\n", "abcd", 100).await,
            Err(BodyUnread::Broken(_))
        ));
    }

    #[test]
    fn io_errors_read_as_plain_reasons() {
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert_eq!(io_reason(&missing), "no such file or directory");
        assert_eq!(io_reason(&denied), "permission denied");
    }

    #[test]
    fn paths_are_shown_without_a_leading_dot_slash() {
        assert_eq!(display(Path::new("./departments/story.yaml")), "departments/story.yaml");
        assert_eq!(display(Path::new("/tmp/x.yaml")), "/tmp/x.yaml");
        assert_eq!(display(Path::new("-")), "<stdin>");
    }
}
