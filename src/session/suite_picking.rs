//! What `orch test`'s picking flags need read before a case is chosen: the failed cases of
//! `--rerun-failed`'s results file, and `--sample`'s N, chosen over every machine's cases
//! (the selection without `--shard`) so that each shard runs its part of the same N.

use super::options::TestOptions;
use super::SessionError;
use crate::suite::{self, FailedCases, Loaded, Picking, Sample, Selection};

/// The picking flags of one `orch test`, read.
#[derive(Default)]
pub struct Picked {
    failed: Option<FailedCases>,
    sample: Option<Sample>,
}

impl Picked {
    /// Reads `--rerun-failed`'s file (an unreadable one refuses the suite) and chooses
    /// `--sample`'s cases among those `filter`, the tags and the failed file keep.
    pub fn read(args: &TestOptions, loaded: &Loaded, filter: Option<&regex::Regex>) -> Result<Self, SessionError> {
        let failed = (args.rerun_failed.as_deref().map(FailedCases::read).transpose())
            .map_err(|e| SessionError::refused(e.to_string()))?;
        let mut picked = Picked { failed, sample: None };
        if let Some(n) = args.sample {
            let every_shard = suite::select(&loaded.suites, None, filter).picking(picked.picking(args));
            let ids = every_shard.each().map(|(i, case)| (i, case.id.clone()));
            picked.sample = Some(Sample::of(ids, n, &args.sample_seed));
        }
        Ok(picked)
    }

    /// The picking the flags ask for.
    pub fn picking<'a>(&'a self, args: &'a TestOptions) -> Picking<'a> {
        Picking {
            tags: &args.tags,
            skip_tags: &args.skip_tags,
            failed: self.failed.as_ref(),
            sample: self.sample.as_ref(),
        }
    }

    /// The cases of `loaded` that `orch test` chooses: `--filter`, the picking, then `--shard`.
    pub fn select<'a>(
        &'a self,
        args: &'a TestOptions,
        loaded: &'a Loaded,
        filter: Option<&'a regex::Regex>,
    ) -> Selection<'a> {
        suite::select(&loaded.suites, args.shard, filter).picking(self.picking(args))
    }
}
