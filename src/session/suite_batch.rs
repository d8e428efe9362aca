//! The waves of a batch suite (`orch test --batch STATE`): the pending batches polled,
//! the suite made again on the answers at hand (a case run stuck on parked calls is
//! dropped), the wave's parked requests submitted; again, within `--batch-wait`, until
//! every case run finishes or batches are left pending.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::LocalBoxFuture;

use super::options::TestOptions;
use crate::batch::{self, State, Waves};
use crate::exit::Exit;
use crate::sink::LineFile;
use crate::suite::{CaseScope, Job, Loaded, Runner, Tally};

use super::SessionError;

/// The waves of one invocation, and where they write.
pub struct Batch {
    /// The waves, over the state file.
    pub waves: Arc<Waves>,
    /// The state file, as named.
    pub path: PathBuf,
    /// Where each wave's results lines go until the suite finishes.
    pub scratch: PathBuf,
    /// `--batch-wait`.
    wait: Option<Duration>,
    /// `--batch-poll`.
    poll: Duration,
    /// The cassette of `--record`: emptied as each wave starts, so after an invocation it
    /// holds its last wave's exchanges: the whole suite's, each once, when every case run
    /// finished in it.
    pub recording: Option<Arc<LineFile>>,
}

/// How the waves ended.
pub enum Waved {
    /// Every case run finished (or a signal stopped them): the last wave's tally.
    Done(Box<(Tally, Option<Exit>)>),
    /// Batches are pending: the line that says so.
    Pending(String),
}

/// Opens the state of `--batch`, bound to the suites, their configs and the selection.
pub fn open(args: &TestOptions, loaded: &Loaded) -> Result<Option<Batch>, SessionError> {
    let Some(path) = &args.batch else { return Ok(None) };
    let state = State::open(path, binding(args, loaded)?).map_err(SessionError::refused)?;
    let mut scratch = path.clone().into_os_string();
    scratch.push(".results");
    Ok(Some(Batch {
        waves: Arc::new(Waves::new(state)),
        path: path.clone(),
        scratch: scratch.into(),
        wait: args.batch_wait.map(Duration::from_secs),
        poll: args.batch_poll,
        recording: None,
    }))
}

/// What a state is bound to: the suite files (by their canonical path, however they were
/// named, and their content's digest), each config's digest, and the flags that choose the
/// case runs.
fn binding(args: &TestOptions, loaded: &Loaded) -> Result<serde_json::Value, SessionError> {
    let configs: Vec<String> = loaded.roots.iter().map(|r| crate::record::config_digest(r)).collect();
    let suites: Vec<PathBuf> = (args.suites.iter())
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .collect();
    let digests: Vec<String> = args
        .suites
        .iter()
        .map(|p| content_digest(p))
        .collect::<Result<_, _>>()?;
    Ok(serde_json::json!({
        "suites": suites,
        "suiteDigests": digests,
        "configs": configs,
        "selection": {
            "filter": args.filter, "tag": args.tags, "skipTag": args.skip_tags,
            "sample": args.sample, "sampleSeed": args.sample_seed,
            "shard": args.shard.map(|s| s.to_string()), "repeat": args.repeat,
            "passRate": args.pass_rate, "rerunFailed": args.rerun_failed,
            "provider": args.replies.provider, "model": args.replies.model,
        },
    }))
}

/// The largest suite file digested: it was read whole when loaded, at most a few MiB; the
/// bound only keeps a file swapped for a device since from being slurped.
const MAX_SUITE_BYTES: u64 = 64 << 20;

/// The SHA-256 of the suite file at `path`, in hex. A file that cannot be read again is
/// refused (exit 2): the digest of nothing would bind the state to a suite no one wrote,
/// and the next invocation would call the suite edited.
fn content_digest(path: &Path) -> Result<String, SessionError> {
    use crate::read::{read_bounded, Unread};
    use sha2::{Digest, Sha256};
    let bytes = read_bounded(path, MAX_SUITE_BYTES).map_err(|e| {
        let why = match e {
            Unread::Missing => "no such file".to_string(),
            Unread::NotFile(what) => format!("it is {what}, not a file"),
            Unread::TooLarge(_) => format!("larger than {} MiB", MAX_SUITE_BYTES >> 20),
            Unread::Io(e) => crate::read::io_reason(&e),
        };
        SessionError::refused(format!("cannot read the suite {}: {why}", crate::read::display(path)))
    })?;
    Ok(Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect())
}

/// Drops a case run stuck on parked calls, and counts it.
struct WaveScope<'a>(&'a Waves);

impl CaseScope for WaveScope<'_> {
    fn scoped<'f>(&'f self, repeat: u32, run: LocalBoxFuture<'f, ()>) -> LocalBoxFuture<'f, bool> {
        Box::pin(async move {
            let finished = batch::scoped(repeat, run).await.is_some();
            if !finished {
                self.0.stuck_one();
            }
            finished
        })
    }
}

impl Batch {
    /// Makes the waves: each `runner` writing to a scratch file, in the waves' scope, the
    /// case runs of `jobs`.
    pub async fn waves<'j, J, S>(
        &self,
        runner: &Runner<'_>,
        jobs: impl Fn() -> J,
        mut signal: Pin<&mut S>,
    ) -> Result<Waved, SessionError>
    where
        J: Iterator<Item = Job<'j>>,
        S: Future<Output = Exit>,
    {
        let started = Instant::now();
        let scope = WaveScope(&self.waves);
        batch::reconcile(&self.waves).await;
        loop {
            batch::collect(&self.waves).await;
            self.waves.start_wave();
            if let Some(cassette) = &self.recording {
                cassette.empty();
            }
            let file = LineFile::create(&self.scratch, "the results").map_err(SessionError::refused)?;
            let wave = Runner {
                results: Some(&file),
                scope: Some(&scope),
                ..runner.clone()
            };
            let (tally, interrupted) = wave.run(jobs(), signal.as_mut()).await;
            if interrupted.is_some() || self.waves.stuck_runs() == 0 {
                return Ok(Waved::Done(Box::new((tally, interrupted))));
            }
            drop(tally);
            let deferred = batch::submit(&self.waves).await;
            let (_, requests, batches) = self.waves.tallied();
            if deferred > 0 {
                // A provider could not take a batch for now: the next invocation tries again.
                return Ok(Waved::Pending(batch::deferred_line(
                    deferred, requests, batches, &self.path,
                )));
            }
            if requests == 0 {
                // Every submission was refused: the next wave sends its requests live.
                continue;
            }
            match self.wait {
                Some(wait) if started.elapsed() + self.poll <= wait => {
                    tokio::select! {
                        () = tokio::time::sleep(self.poll) => {}
                        exit = signal.as_mut() => return Err(SessionError::Stopped {
                            exit,
                            message: batch::pending_line(requests, batches, &self.path),
                        }),
                    }
                }
                _ => return Ok(Waved::Pending(batch::pending_line(requests, batches, &self.path))),
            }
        }
    }

    /// The summary's `batch` counts.
    pub fn tallied(&self) -> serde_json::Value {
        serde_json::to_value(self.waves.tallied().0).unwrap_or_default()
    }

    /// Moves the last wave's results lines to `--results` (the suite finished).
    pub fn deliver(&self, results: Option<&Path>) -> Result<(), SessionError> {
        if let Some(path) = results {
            std::fs::copy(&self.scratch, path)
                .map_err(|e| SessionError::failed(format!("cannot write the results to {}: {e}", path.display())))?;
        }
        let _ = std::fs::remove_file(&self.scratch);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suite_is_bound_by_its_content_and_one_that_cannot_be_read_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let suite = dir.path().join("s.yaml");
        std::fs::write(&suite, "abc").unwrap();
        let digest = content_digest(&suite).unwrap();
        assert_eq!(
            digest,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        for (path, why) in [
            (dir.path().to_path_buf(), "it is a directory, not a file"),
            (dir.path().join("gone.yaml"), "no such file"),
        ] {
            let refused = content_digest(&path).unwrap_err();
            assert_eq!(refused.exit(), Exit::Usage);
            let said = format!("cannot read the suite {}: {why}", path.display());
            assert_eq!(refused.to_string(), said);
        }
    }
}
