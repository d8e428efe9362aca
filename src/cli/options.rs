//! The flags as written made into the session's typed options, once, here: the only place
//! a command line's structs meet the session (the commands convert with `From`). Each flag
//! was checked as clap parsed it, by the session's own bounds.

use std::io::IsTerminal;

use super::{OptimizeArgs, PlanArgs, ReplyArgs, RunArgs, RunFormat, TestArgs, VariantArgs};
use crate::session::{OptimizeOptions, ReplyOptions, RequestOptions, RunOptions, TestOptions, VariantOptions};

impl From<ReplyArgs> for ReplyOptions {
    fn from(a: ReplyArgs) -> Self {
        ReplyOptions {
            provider: a.provider,
            model: a.model,
            record: a.record,
            replay: a.replay,
            cache: a.cache,
            otlp: a.otlp,
            otlp_content: a.otlp_content,
            seed: a.seed,
        }
    }
}

impl From<VariantArgs> for VariantOptions {
    fn from(a: VariantArgs) -> Self {
        VariantOptions {
            assign: a.assign,
            forced: a.forced,
        }
    }
}

impl From<PlanArgs> for RequestOptions {
    fn from(a: PlanArgs) -> Self {
        RequestOptions {
            prompt: a.prompt,
            config: a.config,
            departments: a.departments,
            specialists: a.specialists,
            success_rates: a.success_rates,
            variants: a.variants.into(),
            previous: None,
        }
    }
}

impl From<RunArgs> for RunOptions {
    /// Everything but `--format`, which only decides how the command prints.
    fn from(a: RunArgs) -> Self {
        RunOptions {
            replies: a.replies.into(),
            plan: a.plan.into(),
            min_quality: a.min_quality,
            max_calls: a.max_calls,
            deadline: a.deadline,
            concurrency: a.concurrency,
            events: a.events,
            approvals: a.approvals,
            journal: a.journal,
            quiet: a.quiet,
            session: a.session,
            answers: Vec::new(),
            stream: a.stream,
            progress: a.progress,
        }
    }
}

impl From<TestArgs> for TestOptions {
    /// Everything but `--format`, which only decides how the command prints.
    fn from(a: TestArgs) -> Self {
        TestOptions {
            replies: a.replies.into(),
            suites: a.suites,
            config: a.config,
            shard: a.shard,
            jobs: a.jobs,
            repeat: a.repeat,
            pass_rate: a.pass_rate,
            filter: a.filter,
            tags: a.tags,
            skip_tags: a.skip_tags,
            sample: a.sample,
            sample_seed: a.sample_seed,
            rerun_failed: a.rerun_failed,
            estimate: a.estimate,
            results: a.results,
            resume: a.resume,
            merge: a.merge,
            junit: a.junit,
            approvals: a.approvals,
            success_rates: a.success_rates,
            variants: a.variants.into(),
            quiet: a.quiet,
            progress: a.progress,
            batch: a.batch,
            batch_wait: a.batch_wait,
            batch_poll: a.batch_poll,
            results_detail: a.results_detail,
        }
    }
}

impl From<OptimizeArgs> for OptimizeOptions {
    /// Everything but the suites and config (the command loads them) and `--format`, which
    /// is the command's.
    fn from(a: OptimizeArgs) -> Self {
        OptimizeOptions {
            agents: a.agents,
            reflector: a.reflector,
            reflector_provider: a.reflector_provider,
            reflector_model: a.reflector_model,
            candidates: a.candidates,
            rounds: a.rounds,
            validation_split: a.validation_split,
            seed: a.seed,
            max_calls: a.max_calls,
            max_cost_usd: a.max_cost_usd,
            replay: a.replay,
            cache: a.cache,
            filter: a.filter,
            tags: a.tags,
            skip_tags: a.skip_tags,
            write: Some(a.write),
        }
    }
}

impl RunArgs {
    /// Whether the answer is streamed: `--stream` (text format; with no `--format`, it picks
    /// text), or `--format text` on a terminal. `--stream` with another format is refused.
    pub fn choose_streaming(&mut self) -> Result<(), String> {
        match (self.stream, self.format) {
            (true, Some(RunFormat::Text)) | (false, _) => {}
            (true, None) => self.format = Some(RunFormat::Text),
            (true, Some(other)) => {
                let name =
                    clap::ValueEnum::to_possible_value(&other).map_or_else(String::new, |v| v.get_name().to_string());
                return Err(format!(
                    "--stream prints the answer as text; it cannot be used with --format {name}"
                ));
            }
        }
        if self.format == Some(RunFormat::Text) && std::io::stdout().is_terminal() {
            self.stream = true;
        }
        Ok(())
    }
}
