//! Finding a config root and reading its files into wire structs.

use std::path::{Path, PathBuf};

use super::decode::Decoder;
use super::definitions::SchemaSource;
use super::diagnostic::Diagnostic;
use super::node::{parse_toml, At, Node, Pos};
use super::wire::{FileKind, WireConfig};
use super::yaml::parse_yaml;
use crate::read::{display, io_reason, read_bounded, Entry, Unread};

/// Config files larger than this are refused: a real config is a few kilobytes.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Where a config root comes from: `--config`, else `ORCH_CONFIG`, else the current directory.
pub fn locate_root(flag: Option<&Path>) -> PathBuf {
    if let Some(p) = flag {
        return p.to_path_buf();
    }
    match std::env::var_os("ORCH_CONFIG") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from("."),
    }
}

/// What reading a config root produced: the wire config and every problem found so far.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Decoded definitions (those that could be read).
    pub wire: WireConfig,
    /// Syntax, type, unknown-key and range problems.
    pub diagnostics: Vec<Diagnostic>,
    /// The display path of the settings file (where global problems point).
    pub settings_file: String,
    /// Every file read: the settings file, the definition files, the `outputSchema` files.
    pub files: ConfigFiles,
}

/// The files a config was read from, as the loader found them: what `orch tune --write`
/// copies, and nothing else.
#[derive(Clone, Debug, Default)]
pub struct ConfigFiles {
    /// The settings file (or the single-file config) and each definition file read, in
    /// the order read.
    pub definitions: Vec<PathBuf>,
    /// Each `outputSchema` file an agent names.
    pub schemas: Vec<SchemaFile>,
}

/// An `outputSchema` file, as named and as read.
#[derive(Clone, Debug)]
pub struct SchemaFile {
    /// The file naming it, as messages show it.
    pub named_in: String,
    /// The path as written (relative to the file naming it, or absolute).
    pub written: String,
    /// The path read.
    pub path: PathBuf,
}

/// Reads a config root (a directory, or a single file holding everything inline), and the
/// schema files its agents name.
pub fn read(root: &Path) -> Loaded {
    let mut loaded = read_files(root);
    read_schemas(&mut loaded);
    super::tools_check::cwds(&loaded.wire, root, &loaded.settings_file, &mut loaded.diagnostics);
    loaded
}

/// Replaces each `outputSchema` path by the schema in that file (JSON, or YAML by its
/// extension), relative to the file that names it; a file that cannot be read or parsed is
/// an error at the `outputSchema` key.
fn read_schemas(loaded: &mut Loaded) {
    for agent in &mut loaded.wire.agents {
        let Some(At {
            value: SchemaSource::Path(rel),
            pos,
        }) = &agent.keys.output_schema
        else {
            continue;
        };
        let path = Path::new(&agent.file).parent().unwrap_or(Path::new("")).join(rel);
        loaded.files.schemas.push(SchemaFile {
            named_in: agent.file.clone(),
            written: rel.clone(),
            path: path.clone(),
        });
        let shown = display(&path);
        let parsed = match read_bounded(&path, MAX_FILE_BYTES) {
            Ok(bytes) => String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string()),
            Err(Unread::Io(e)) => Err(io_reason(&e)),
            Err(Unread::Missing) => Err("no such file or directory".into()),
            Err(_) => Err(format!("not a regular file of at most {} MB", MAX_FILE_BYTES >> 20)),
        }
        .and_then(|text| {
            let yaml = matches!(path.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"));
            if yaml {
                parse_yaml(&text)
                    .map(|n| n.to_json())
                    .map_err(|e| format!("invalid YAML at {}:{}: {}", e.pos.line, e.pos.column, e.message))
            } else {
                serde_json::from_str(&text).map_err(|e| format!("invalid JSON: {e}"))
            }
        });
        match parsed {
            Ok(schema) => {
                agent.keys.output_schema = Some(At {
                    value: SchemaSource::Inline(schema),
                    pos: *pos,
                })
            }
            Err(why) => loaded.diagnostics.push(Diagnostic::error(
                &agent.file,
                *pos,
                "schema",
                format!("cannot read the outputSchema file {shown}: {why}"),
            )),
        }
    }
}

fn read_files(root: &Path) -> Loaded {
    let mut loaded = Loaded::default();
    let shown = display(root);
    let Some(is_file) = root_is_file(root, &shown, &mut loaded.diagnostics) else {
        return loaded;
    };
    if is_file {
        loaded.settings_file = shown.clone();
        loaded.files.definitions.push(root.to_path_buf());
        read_file(root, &shown, FileKind::Settings, &mut loaded);
    } else {
        let Some((settings, dirs)) = layout(root, &shown, &mut loaded.diagnostics) else {
            return loaded;
        };
        read_layout(root, settings, dirs, &mut loaded);
    }
    // A single file and a directory alike: a config without a department runs nothing.
    if loaded.wire.departments.is_empty() && !loaded.diagnostics.iter().any(Diagnostic::is_error) {
        loaded.diagnostics.push(whole_file(
            &loaded.settings_file.clone(),
            "no-departments",
            "the config defines no department (add departments/*.yaml or a `departments` list)",
        ));
    }
    loaded
}

/// Whether the config root is a single file (else a directory); `None` (and why, in
/// `diags`) when it is neither.
fn root_is_file(root: &Path, shown: &str, diags: &mut Vec<Diagnostic>) -> Option<bool> {
    let meta = match std::fs::metadata(root) {
        Ok(m) => m,
        Err(e) => {
            diags.push(whole_file(
                shown,
                "no-root",
                format!("cannot read config {shown}: {}", io_reason(&e)),
            ));
            return None;
        }
    };
    if meta.is_file() {
        return Some(true);
    }
    if !meta.is_dir() {
        diags.push(whole_file(
            shown,
            "no-root",
            format!(
                "config {shown} is {}, not a file or a directory",
                Entry::of(root).describe()
            ),
        ));
        return None;
    }
    Some(false)
}

/// The definition folders of a config directory that are there, each with its kind of file.
type Folders = Vec<(&'static str, FileKind)>;

/// A config directory's settings file (`orch.toml`, else `orch.yaml`) and definition
/// folders; `None` (and why, in `diags`) when it has none of them.
fn layout(root: &Path, shown: &str, diags: &mut Vec<Diagnostic>) -> Option<(Option<PathBuf>, Folders)> {
    let toml = root.join("orch.toml");
    let yaml = root.join("orch.yaml");
    let found = (usable(&toml, false, diags), usable(&yaml, false, diags));
    let dirs: Vec<(&str, FileKind)> = [("departments", FileKind::Departments), ("agents", FileKind::Agents)]
        .into_iter()
        .filter(|(d, _)| usable(&root.join(d), true, diags))
        .collect();
    let settings = match found {
        (true, true) => {
            diags.push(whole_file(
                &display(&yaml),
                "config-conflict",
                format!("both {} and {} exist; keep one", display(&toml), display(&yaml)),
            ));
            Some(toml)
        }
        (true, false) => Some(toml),
        (false, true) => Some(yaml),
        (false, false) => None,
    };
    if settings.is_none() && dirs.is_empty() {
        if !diags.iter().any(Diagnostic::is_error) {
            diags.push(whole_file(
                shown,
                "no-config",
                format!("no orch config found in {shown} (expected orch.toml, orch.yaml, departments/ or agents/)"),
            ));
        }
        return None;
    }
    Some((settings, dirs))
}

/// Reads a config directory's settings file and the files of its definition folders.
fn read_layout(root: &Path, settings: Option<PathBuf>, dirs: Folders, loaded: &mut Loaded) {
    if let Some(path) = settings {
        loaded.settings_file = display(&path);
        let shown = loaded.settings_file.clone();
        read_file(&path, &shown, FileKind::Settings, loaded);
        loaded.files.definitions.push(path);
    } else {
        loaded.settings_file = display(&root.join("orch.toml"));
    }
    for (dir, kind) in dirs {
        let files = config_files(&root.join(dir), &mut loaded.diagnostics);
        loaded.files.definitions.extend(files.iter().cloned());
        // Read and parsed on every core, decoded in file order: the same diagnostics in
        // the same order as one by one.
        for (shown, node, diags) in parse_all(&files, kind) {
            loaded.diagnostics.extend(diags);
            if let Some(node) = node {
                let mut decoder = Decoder::new(&shown, &mut loaded.diagnostics);
                loaded.wire.add(&mut decoder, kind, &node);
            }
        }
    }
}

/// Whether `path` is there as the kind wanted (a directory, else a regular file); anything
/// else there (a FIFO, a dangling link, a file where a directory belongs) is an error.
fn usable(path: &Path, want_dir: bool, diags: &mut Vec<Diagnostic>) -> bool {
    match Entry::of(path) {
        Entry::Missing => false,
        Entry::File if !want_dir => true,
        Entry::Dir if want_dir => true,
        found => {
            let want = if want_dir { "a directory" } else { "a regular file" };
            diags.push(whole_file(
                &display(path),
                "not-a-file",
                format!("{} is {}; it must be {want}", display(path), found.describe()),
            ));
            false
        }
    }
}

/// `.yaml`, `.yml` and `.toml` files of a directory, sorted by path.
fn config_files(dir: &Path, diags: &mut Vec<Diagnostic>) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    // Each entry with whether the listing itself says it is a regular file (no symbolic
    // link): those need no `stat` of their own, which a tree of 10,000 files feels.
    let mut found: Vec<(std::ffi::OsString, PathBuf, bool)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let path = e.path();
            let wanted = matches!(path.extension().and_then(|x| x.to_str()), Some("yaml" | "yml" | "toml"));
            wanted.then(|| (e.file_name(), path, e.file_type().is_ok_and(|t| t.is_file())))
        })
        .collect();
    // All in one directory: sorted by path is sorted by name, compared as bytes (much
    // cheaper than comparing paths component by component).
    found.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    // A FIFO would hang the read, a dangling link or a directory would vanish in silence:
    // every config-named entry that is not a regular file is an error.
    let mut files = Vec::with_capacity(found.len());
    for (_, p, regular) in found {
        match if regular { Entry::File } else { Entry::of(&p) } {
            Entry::File => files.push(p),
            found => diags.push(whole_file(
                &display(&p),
                "not-a-file",
                format!(
                    "{} is {}; config files must be regular files",
                    display(&p),
                    found.describe()
                ),
            )),
        }
    }
    if files.is_empty() {
        diags.push(Diagnostic::warning(
            &display(dir),
            Pos::default(),
            "empty-dir",
            format!("{} holds no .yaml, .yml or .toml file", display(dir)),
        ));
    }
    files
}

/// Each file read and parsed (its display path, its tree, its diagnostics), in the order
/// given, the work shared among the machine's cores.
fn parse_all(files: &[PathBuf], kind: FileKind) -> Vec<(String, Option<Node>, Vec<Diagnostic>)> {
    let parse = |path: &PathBuf| {
        let shown = display(path);
        let mut diags = Vec::new();
        let node = parse_file(path, &shown, kind, &mut diags);
        (shown, node, diags)
    };
    let cores = std::thread::available_parallelism().map_or(1, usize::from).min(8);
    if cores == 1 || files.len() < 64 {
        return files.iter().map(parse).collect();
    }
    let chunk = files.len().div_ceil(cores);
    std::thread::scope(|scope| {
        let workers: Vec<_> = files
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(parse).collect::<Vec<_>>()))
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("parsing a config file never panics"))
            .collect()
    })
}

fn read_file(path: &Path, shown: &str, kind: FileKind, loaded: &mut Loaded) {
    let Some(node) = parse_file(path, shown, kind, &mut loaded.diagnostics) else {
        return;
    };
    let mut decoder = Decoder::new(shown, &mut loaded.diagnostics);
    loaded.wire.add(&mut decoder, kind, &node);
}

/// Reads and parses a YAML or TOML document that is not part of a config (a suite).
pub fn parse_document(path: &Path, shown: &str, diags: &mut Vec<Diagnostic>) -> Option<Node> {
    match Entry::of(path) {
        Entry::File => parse_file(path, shown, FileKind::Settings, diags),
        Entry::Missing => {
            diags.push(whole_file(
                shown,
                "no-file",
                format!("cannot read {shown}: no such file"),
            ));
            None
        }
        found => {
            diags.push(whole_file(
                shown,
                "not-a-file",
                format!("{shown} is {}; it must be a regular file", found.describe()),
            ));
            None
        }
    }
}

/// Reads and parses one file; every refusal is one clear diagnostic, never a panic.
fn parse_file(path: &Path, shown: &str, kind: FileKind, diags: &mut Vec<Diagnostic>) -> Option<Node> {
    parse_read(read_bounded(path, MAX_FILE_BYTES), path, shown, kind, diags)
}

/// One file's bytes (or why there are none) parsed; every refusal is one clear diagnostic.
fn parse_read(
    read: Result<Vec<u8>, Unread>,
    path: &Path,
    shown: &str,
    kind: FileKind,
    diags: &mut Vec<Diagnostic>,
) -> Option<Node> {
    let bytes = match read {
        Ok(b) => b,
        Err(Unread::TooLarge(size)) => {
            diags.push(whole_file(
                shown,
                "too-large",
                format!(
                    "file is {:.1} MB; config files are limited to {} MB",
                    size as f64 / 1_000_000.0,
                    MAX_FILE_BYTES / (1024 * 1024)
                ),
            ));
            return None;
        }
        Err(Unread::Io(e)) => {
            diags.push(whole_file(shown, "io", format!("cannot read file: {}", io_reason(&e))));
            return None;
        }
        Err(Unread::Missing) => {
            diags.push(whole_file(shown, "io", "cannot read file: no such file or directory"));
            return None;
        }
        Err(Unread::NotFile(what)) => {
            diags.push(whole_file(
                shown,
                "not-a-file",
                format!("{shown} is {what}; it must be a regular file"),
            ));
            return None;
        }
    };
    let is_toml = path.extension().and_then(|e| e.to_str()) == Some("toml");
    parse_bytes(bytes, shown, kind, is_toml, diags)
}

/// Reads a single-file config held in memory (see `config::load_str`, for tests).
#[cfg(test)]
pub fn read_text(shown: &str, bytes: &[u8], is_toml: bool) -> Loaded {
    let mut loaded = Loaded {
        settings_file: shown.to_string(),
        ..Loaded::default()
    };
    if let Some(node) = parse_bytes(
        bytes.to_vec(),
        shown,
        FileKind::Settings,
        is_toml,
        &mut loaded.diagnostics,
    ) {
        let mut decoder = Decoder::new(shown, &mut loaded.diagnostics);
        loaded.wire.add(&mut decoder, FileKind::Settings, &node);
    }
    loaded
}

fn parse_bytes(
    bytes: Vec<u8>,
    shown: &str,
    kind: FileKind,
    is_toml: bool,
    diags: &mut Vec<Diagnostic>,
) -> Option<Node> {
    if bytes.contains(&0) {
        diags.push(whole_file(
            shown,
            "not-text",
            "file is binary (it contains NUL bytes), not YAML or TOML",
        ));
        return None;
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let prefix = String::from_utf8_lossy(&e.as_bytes()[..at]);
            let line = prefix.matches('\n').count() as u32 + 1;
            let column = prefix.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u32 + 1;
            diags.push(Diagnostic::error(
                shown,
                Pos { line, column },
                "not-utf8",
                format!("file is not valid UTF-8 (bad byte at offset {at})"),
            ));
            return None;
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if text.trim().is_empty() {
        if kind == FileKind::Settings && is_toml {
            // An empty orch.toml means "all defaults".
            return Some(Node {
                value: super::node::Value::Map(Vec::new()),
                pos: Pos { line: 1, column: 1 },
            });
        }
        let expected = match kind {
            FileKind::Settings => "settings",
            FileKind::Departments => "a department (a mapping with `id`)",
            FileKind::Agents => "an agent (a mapping with `id`)",
        };
        diags.push(whole_file(
            shown,
            "empty",
            format!("file is empty; expected {expected}"),
        ));
        return None;
    }
    let parsed = if is_toml {
        parse_toml(text)
    } else {
        parse_yaml(text).map_err(|e| vec![e])
    };
    match parsed {
        Ok(node) => Some(node),
        Err(errors) => {
            for e in errors {
                diags.push(Diagnostic::error(
                    shown,
                    e.pos,
                    "syntax",
                    format!("invalid {}: {}", if is_toml { "TOML" } else { "YAML" }, e.message),
                ));
            }
            None
        }
    }
}

fn whole_file(shown: &str, code: &'static str, message: impl Into<String>) -> Diagnostic {
    Diagnostic::error(shown, Pos { line: 1, column: 1 }, code, message)
}
