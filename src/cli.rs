//! Command-line definitions (clap derive) for `orch run`, `explain`, `validate`, `test`,
//! `stats`, `compare`, `mcp` and the rest: the flags as written. `commands` turns them into
//! the session's typed options; the bounds of a number are the session's, so a flag and a
//! journal's stored option are refused by one rule.

use std::path::PathBuf;

use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::plan::SpecialistMode;
use crate::session::{self, ApprovalMode, Approvals, McpApprovals, ProgressFormat};

mod options;

/// Run a request through a hierarchy of LLM agents declared in YAML/TOML.
#[derive(Debug, Parser)]
#[command(name = "orch", version, about, propagate_version = true, after_help = EXAMPLES)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The end of `orch --help`: a first session, command by command.
const EXAMPLES: &str = "\
Examples:
  orch init my-team --template assistant    Write a config that runs offline
  orch validate my-team                     Check it: every problem at file:line:column
  orch explain --config my-team \"Research our competitors in the note-taking market\"
                                            The plan, without calling any model
  orch run --config my-team \"Research our competitors in the note-taking market\"
                                            Run it and print the answer
  orch test my-team/suites/assistant.toml --results base.jsonl
                                            Run its suite of cases (CI)
  orch compare base.jsonl candidate.jsonl   Did the candidate get worse?

Help on one command: orch help COMMAND (or orch COMMAND --help)";

impl Cli {
    /// ` (did you mean `compare`?)` for a mistyped command name, or nothing when no command
    /// is close to `word`.
    pub fn command_suggestion(word: &str) -> String {
        use clap::CommandFactory;
        let cli = Cli::command();
        let names: Vec<&str> = cli.get_subcommands().map(clap::Command::get_name).collect();
        crate::config::suggestion(word, names)
    }
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a request through the hierarchy and print the report.
    Run(Box<RunArgs>),
    /// Print the plan for a request without calling any model.
    Explain(Box<ExplainArgs>),
    /// Check a config and report every problem at file:line:column.
    Validate(ValidateArgs),
    /// Run suites of cases with expectations (CI), sharded across machines if asked.
    Test(Box<TestArgs>),
    /// Print the JSON Schema of a kind of file (all of them without KIND).
    Schema(SchemaArgs),
    /// Write a new config that validates clean and runs offline.
    Init(InitArgs),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
    /// Render a saved run report or suite results file as one self-contained HTML page.
    Report(ReportArgs),
    /// Start every configured MCP server, list its tools and who may use them, stop it.
    Tools(ToolsArgs),
    /// Serve the config as MCP tools (run, explain, validate, test) for coding agents.
    Mcp(McpArgs),
    /// Compare two suite results files case by case: did the candidate get worse?
    Compare(CompareArgs),
    /// Decision analytics over results files and saved reports; learn success rates.
    Stats(StatsArgs),
    /// Decide the items a paused run left pending in its journal.
    Approve(ApproveArgs),
    /// Run a journal's request again: finished calls answered from it, the rest live.
    Resume(ResumeArgs),
    /// Propose config changes learned from results: routing's threshold, agents' thresholds.
    Tune(TuneArgs),
    /// Learn better instructions for agents from graded runs, accepted only when they win on held-out cases.
    Optimize(Box<OptimizeArgs>),
    /// Show or cancel the batches of a batch suite's state (`orch test --batch STATE`).
    Batch(BatchArgs),
    /// Probe each provider the config uses: reachable, structured output, context, reasoning leak.
    #[command(after_help = DOCTOR_EXAMPLES)]
    Doctor(DoctorArgs),
}

/// The end of `orch doctor --help`.
const DOCTOR_EXAMPLES: &str = "\
Each provider gets at most four calls (none recorded): `reachable` (a one-word answer),
`structured output` (a schema whose one valid answer is {\"color\": \"teal\"}), `context` (a
prompt of about 6,000 tokens whose first line holds a code word to repeat) and `reasoning leak`
(the reply starts with <think>). A failed probe prints advice. Exit 0: every probe passed;
1: one failed; 2: a config error or a key that is not set.

Examples:
  orch doctor --config my-team                 Probe every provider the agents use
  orch doctor --config my-team --provider local --quick --format json
                                               One provider, no context probe, as JSON";

/// `orch doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Config root (directory) or single config file [env: ORCH_CONFIG; default: .]
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Probe only this provider (a name in `[providers]`; repeatable).
    #[arg(long = "provider", value_name = "NAME")]
    pub providers: Vec<String>,
    /// Skip the `context` probe (its prompt of about 6,000 tokens is slow on a small machine).
    #[arg(long)]
    pub quick: bool,
    /// Output format [default: tree on a terminal, json otherwise]
    #[arg(long, value_enum)]
    pub format: Option<DoctorFormat>,
}

/// Output format of `doctor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DoctorFormat {
    /// `{"providers": [{"name", "kind", "model", "probes": [...]}]}` (the default when stdout is not a terminal).
    Json,
    /// ✓/✗ per probe with advice, for people (the default on a terminal).
    Tree,
}

/// `orch approve`.
#[derive(Debug, Args)]
pub struct ApproveArgs {
    /// The journal of the paused run (`orch run --journal FILE`).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The pending items to decide; with neither ids nor --all, the pending items are
    /// listed and nothing is decided.
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
    /// Decide every pending item.
    #[arg(long, conflicts_with = "ids")]
    pub all: bool,
    /// Deny them instead of approving them.
    #[arg(long)]
    pub deny: bool,
    /// Why they are denied (the model of a denied tool call is told `denied by a person:
    /// REASON`). Only with `--deny`: an approval has no reason anyone would read.
    #[arg(long, value_name = "TEXT", requires = "deny", value_parser = said)]
    pub reason: Option<String>,
    /// Output format: a line per item, or a JSON array of the items.
    #[arg(long, value_enum, default_value_t = ApproveFormat::Text)]
    pub format: ApproveFormat,
}

/// Output format of `approve`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ApproveFormat {
    /// A line per item: its id, kind, department, agent, and the tool call or the output.
    #[default]
    Text,
    /// A JSON array of the items, as a paused report's `pending` lists them (each decided
    /// one with its `decision` and `reason`).
    Json,
}

/// `orch resume`.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The journal to resume (`orch run --journal FILE`); the run appends to it.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// How items the journal has no decision for are decided
    /// [default: prompt when stdin is a terminal, else deny]
    #[arg(long, value_enum)]
    pub approvals: Option<ApprovalMode>,
    /// Output format [default: tree on a terminal, json otherwise]
    #[arg(long, value_enum)]
    pub format: Option<RunFormat>,
    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// An answer to the run's questions (repeatable: one per question, in order).
    #[arg(long = "answer", value_name = "TEXT")]
    pub answers: Vec<String>,
}

/// Output format of `orch tools`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ToolsFormat {
    /// A server per paragraph, a tool per line, its agents below it.
    #[default]
    Text,
    /// One JSON object: `servers`, each with its `tools`.
    Json,
}

/// `orch batch`.
#[derive(Debug, Args)]
pub struct BatchArgs {
    /// What to do with the state's batches.
    #[command(subcommand)]
    pub action: BatchAction,
}

/// `orch batch status` and `orch batch cancel`.
#[derive(Debug, Subcommand)]
pub enum BatchAction {
    /// Each batch's provider, model, id, state, counts and age (the state and GETs only).
    Status {
        /// The state file of `orch test --batch`.
        #[arg(value_name = "STATE")]
        state: PathBuf,
        /// Output format [default: tree on a terminal, json otherwise]
        #[arg(long, value_enum)]
        format: Option<BatchFormat>,
    },
    /// Cancel the pending batches (their requests go live at the next invocation).
    Cancel {
        /// The state file of `orch test --batch`.
        #[arg(value_name = "STATE")]
        state: PathBuf,
    },
}

/// Output format of `orch batch status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BatchFormat {
    /// A line per batch.
    Tree,
    /// One JSON object: `batches`.
    Json,
}

/// `orch tools`.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// Config root (directory) or single config file [env: ORCH_CONFIG; default: .]
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ToolsFormat::Text)]
    pub format: ToolsFormat,
}

/// `orch mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Config root (directory) or single config file [env: ORCH_CONFIG; default: .]
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Serve streamable HTTP on ADDR instead of stdio: a port or :PORT binds 127.0.0.1; any
    /// other interface only when given (0.0.0.0:PORT, which needs --token-env)
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// With --http: the name of an environment variable holding a bearer token every request
    /// must carry (`Authorization: Bearer <token>`); required beyond loopback
    #[arg(long, value_name = "NAME", requires = "http")]
    pub token_env: Option<String>,
    /// Whether steps that need a person's approval are approved in served runs; `prompt`
    /// asks the client's user through MCP elicitation (denied when the client cannot be asked).
    #[arg(long, value_enum, default_value_t = McpApprovals::Deny)]
    pub approvals: McpApprovals,
    /// Log in to, log out of, or list the remote MCP servers behind OAuth (instead of serving).
    #[command(subcommand)]
    pub auth: Option<McpAuthCommand>,
}

/// `orch mcp login|logout|auth`: the OAuth logins of remote MCP servers.
#[derive(Debug, Subcommand)]
pub enum McpAuthCommand {
    /// Log in to an `auth = "oauth"` server (authorization code with PKCE; its tokens are stored).
    Login(McpLoginArgs),
    /// Forget a server's tokens and any client registration orch made.
    Logout(McpServerArgs),
    /// List each OAuth server: logged in or not, expiry, scopes (never a token).
    Auth(McpAuthArgs),
}

/// `orch mcp login`.
#[derive(Debug, Args)]
pub struct McpLoginArgs {
    /// The `mcpServers` name.
    pub name: String,
    /// Config root (directory) or single config file [env: ORCH_CONFIG; default: .]
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Print the URL to open instead of opening a browser.
    #[arg(long)]
    pub no_browser: bool,
}

/// `orch mcp logout`.
#[derive(Debug, Args)]
pub struct McpServerArgs {
    /// The `mcpServers` name.
    pub name: String,
    /// Config root (directory) or single config file [env: ORCH_CONFIG; default: .]
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

/// `orch mcp auth`.
#[derive(Debug, Args)]
pub struct McpAuthArgs {
    /// Config root (directory) or single config file [env: ORCH_CONFIG; default: .]
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Output format [default: tree on a terminal, json otherwise]
    #[arg(long, value_enum)]
    pub format: Option<McpAuthFormat>,
}

/// Output format of `orch mcp auth`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum McpAuthFormat {
    /// `{"servers": [{"name", "url", "loggedIn", "expiresAt", "scopes"}]}`.
    Json,
    /// A line per server, for people.
    Tree,
}

/// `orch compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The results file of the base (e.g. main), shards concatenated.
    #[arg(value_name = "BASE")]
    pub base: PathBuf,
    /// The results file of the candidate (e.g. the pull request).
    #[arg(value_name = "CANDIDATE")]
    pub candidate: PathBuf,
    /// Output format [default: tree on a terminal, json otherwise]
    #[arg(long, value_enum)]
    pub format: Option<TestFormat>,
    /// When to exit 1: any regressed case, only a significant one, or never.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = FailOn::Regression)]
    pub fail_on: FailOn,
    /// A case's p-value below this is significant.
    #[arg(long, value_name = "P", default_value_t = 0.05, value_parser = significance)]
    pub alpha: f64,
    /// Share of a case's runs that must pass on a side (0..=1).
    #[arg(long, value_name = "R", default_value_t = 1.0, value_parser = rate)]
    pub pass_rate: f64,
    /// Also write the comparison as one self-contained HTML page here.
    #[arg(long, value_name = "OUT")]
    pub html: Option<PathBuf>,
}

/// `orch compare --fail-on`: which regressions fail the command (exit 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, strum::Display)]
#[strum(serialize_all = "lowercase")]
pub enum FailOn {
    /// Any case that passed on the base and fails on the candidate.
    Regression,
    /// Only a regression whose p-value is below `--alpha`.
    Significant,
    /// None: always 0 when both files read.
    Never,
}

/// Output format of `stats`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StatsFormat {
    /// The analytics as a tree for people (the default on a terminal).
    Tree,
    /// The analytics as JSON (the default when stdout is not a terminal).
    Json,
    /// Markdown tables for a pull request or `$GITHUB_STEP_SUMMARY`.
    Markdown,
}

/// `orch stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Results files (`orch test --results`) or saved run reports (`orch run --format json`).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Output format [default: tree on a terminal, json otherwise]
    #[arg(long, value_enum)]
    pub format: Option<StatsFormat>,
    /// Also write each specialist's learned success rate here, for `--success-rates FILE`.
    #[arg(long, value_name = "OUT")]
    pub success_rates: Option<PathBuf>,
}

/// `orch report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A report (`orch run --format json` output) or a results file (`orch test --results`).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Print the report in this format instead of the HTML page (`--html OUT` still writes
    /// the page); all but `json` need a run report
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
    /// Write the HTML page here [default: standard output, without `--format`]
    #[arg(long, value_name = "OUT")]
    pub html: Option<PathBuf>,
}

/// The kinds of file orch reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, strum::Display)]
#[strum(serialize_all = "lowercase")]
pub enum SchemaKind {
    /// `orch.toml` / `orch.yaml`.
    Settings,
    /// A file of `departments/`.
    Department,
    /// A file of `agents/`.
    Agent,
    /// A suite file of `orch test`.
    Suite,
}

impl SchemaKind {
    /// Every kind, in the order `orch schema` lists them.
    pub const ALL: [SchemaKind; 4] = [
        SchemaKind::Settings,
        SchemaKind::Department,
        SchemaKind::Agent,
        SchemaKind::Suite,
    ];
}

/// `orch schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Which file kind [default: all four, under `$defs`]
    #[arg(value_enum)]
    pub kind: Option<SchemaKind>,
}

/// The configs `orch init` can write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Template {
    /// The movie studio: six departments, a judge, a master.
    #[default]
    Studio,
    /// A personal assistant's teams, routed by a model with keywords as a net.
    Assistant,
    /// One department, one head, one specialist, in one file.
    Minimal,
}

/// `orch init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Where to write it (created when missing).
    #[arg(value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Which config.
    #[arg(long, value_enum, default_value_t = Template::Studio)]
    pub template: Template,
}

/// `orch completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Output format of `run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RunFormat {
    /// The report as JSON (the default when stdout is not a terminal).
    Json,
    /// The report as a tree for people (the default on a terminal).
    Tree,
    /// A Markdown summary for `$GITHUB_STEP_SUMMARY`, the answer inside `<details>`.
    Markdown,
    /// Only the answer: the summary, else each successful department's output under a
    /// `## NAME` line (nothing when the run has none: the exit code says why).
    Text,
}

/// Output format of `orch report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// The run as a tree for people, then its answer.
    Tree,
    /// A Markdown summary, the answer inside `<details>`.
    Markdown,
    /// Only the answer.
    Text,
    /// The report (or the results lines) as JSON.
    Json,
}

/// Output format of `explain`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExplainFormat {
    /// The plan as JSON (the default when stdout is not a terminal).
    Json,
    /// The plan as a tree for people (the default on a terminal).
    Tree,
    /// The plan as a Mermaid flowchart.
    Mermaid,
}

/// Output format of `test`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TestFormat {
    /// The summary as JSON (the default when stdout is not a terminal).
    Json,
    /// One line per case for people (the default on a terminal).
    Tree,
    /// A Markdown summary for `$GITHUB_STEP_SUMMARY`.
    Markdown,
}

/// Output format of `validate`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ValidateFormat {
    /// `file:line:column: error: message` lines.
    #[default]
    Text,
    /// One JSON object with every diagnostic.
    Json,
}

/// `--approvals` of `run` and `resume`: how steps that wait for a person's yes are decided
/// (docs/approvals.md). The session's own enum, its values listed here for clap.
impl ValueEnum for ApprovalMode {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            ApprovalMode::Prompt,
            ApprovalMode::Allow,
            ApprovalMode::Deny,
            ApprovalMode::Defer,
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let (name, help) = match self {
            ApprovalMode::Prompt => (
                "prompt",
                "Ask on the terminal, one item at a time: y, n [REASON], or a (this tool for the rest of the run)",
            ),
            ApprovalMode::Allow => ("allow", "Every item is approved"),
            ApprovalMode::Deny => ("deny", "Every item is denied (`not approved (--approvals deny)`)"),
            ApprovalMode::Defer => (
                "defer",
                "Every item waits: the run pauses (exit 5) once nothing else can run; needs --journal",
            ),
        };
        Some(PossibleValue::new(name).help(help))
    }
}

/// `--approvals` of `orch test`: nobody is at a terminal to ask, so every item is decided by
/// the flag (docs/approvals.md).
impl ValueEnum for Approvals {
    fn value_variants<'a>() -> &'a [Self] {
        &[Approvals::Allow, Approvals::Deny]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let (name, help) = match self {
            Approvals::Allow => ("allow", "Every item is approved"),
            Approvals::Deny => ("deny", "Every item is denied (`not approved (--approvals deny)`)"),
        };
        Some(PossibleValue::new(name).help(help))
    }
}

/// `--approvals` of `orch mcp`: the flag, or the client's user asked through MCP
/// elicitation (docs/mcp-server.md).
impl ValueEnum for McpApprovals {
    fn value_variants<'a>() -> &'a [Self] {
        &[McpApprovals::Allow, McpApprovals::Deny, McpApprovals::Prompt]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let (name, help) = match self {
            McpApprovals::Allow => ("allow", "Every item is approved"),
            McpApprovals::Deny => ("deny", "Every item is denied (`not approved (--approvals deny)`)"),
            McpApprovals::Prompt => (
                "prompt",
                "Each item asked through `elicitation/create` when the client declares elicitation",
            ),
        };
        Some(PossibleValue::new(name).help(help))
    }
}

/// `--progress`: how progress is written on stderr (the session's own enum).
impl ValueEnum for ProgressFormat {
    fn value_variants<'a>() -> &'a [Self] {
        &[ProgressFormat::Jsonl]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new("jsonl").help("One JSON object a line, one line per change (for CI logs)"))
    }
}

/// `--specialists` parses into the plan's own enum, so the CLI and suite files share one
/// list of modes. Written out rather than derived: `plan` stays free of clap.
impl ValueEnum for SpecialistMode {
    fn value_variants<'a>() -> &'a [Self] {
        &[SpecialistMode::Auto, SpecialistMode::Always, SpecialistMode::Never]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let (name, help) = match self {
            SpecialistMode::Auto => (
                "auto",
                "By the request's complexity: simple, the head alone; moderate, 2; complex, 3",
            ),
            SpecialistMode::Always => ("always", "At least two specialists per department"),
            SpecialistMode::Never => ("never", "Heads always answer directly"),
        };
        Some(PossibleValue::new(name).help(help))
    }
}

/// What `run` and `explain` share: the request and how to plan it.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The request, or `-` to read it from standard input.
    #[arg(value_name = "PROMPT|-")]
    pub prompt: String,
    /// Config root (directory) or single config file [env: ORCH_CONFIG; default: .]
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Run exactly these departments, skipping relevance scoring (repeatable).
    #[arg(long = "department", value_name = "ID")]
    pub departments: Vec<String>,
    /// Whether heads use specialists.
    #[arg(long, value_enum, default_value_t = SpecialistMode::Auto)]
    pub specialists: SpecialistMode,
    /// Rank specialists by the learned rates in this file (`orch stats --success-rates`)
    /// [default: routing.successRates]
    #[arg(long, value_name = "FILE")]
    pub success_rates: Option<PathBuf>,
    /// Which variants the run gets (docs/variants.md).
    #[command(flatten)]
    pub variants: VariantArgs,
}

/// How variants are assigned (docs/variants.md): the flags `run`, `test` and `explain` share.
#[derive(Clone, Debug, Default, Args)]
pub struct VariantArgs {
    /// Assign variants by this key (a user or session id) instead of the request.
    #[arg(long, value_name = "KEY")]
    pub assign: Option<String>,
    /// Give AGENT its variant NAME (`control`: the agent as written); repeatable.
    #[arg(long = "variant", value_name = "AGENT=NAME", value_parser = agent_variant)]
    pub forced: Vec<(String, String)>,
}

/// `AGENT=NAME`, both parts non-empty.
fn agent_variant(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((agent, name)) if !agent.trim().is_empty() && !name.trim().is_empty() => {
            Ok((agent.trim().to_string(), name.trim().to_string()))
        }
        _ => Err(format!("`{s}` is not AGENT=NAME")),
    }
}

/// Where replies come from and go, and traces: the flags `run` and `test` share.
#[derive(Clone, Debug, Default, Args)]
pub struct ReplyArgs {
    /// Use this provider for every agent (a key of [providers] or a built-in; replaces chains).
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
    /// Use this model for every agent.
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Record every exchange to this cassette (JSON lines).
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    pub record: Option<PathBuf>,
    /// Answer every call from this cassette, with no network.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// Answer from this cassette when it holds the request; else call and append the reply.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["replay", "record"])]
    pub cache: Option<PathBuf>,
    /// Export OpenTelemetry traces to this OTLP/HTTP endpoint [env: OTEL_EXPORTER_OTLP_ENDPOINT]
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,
    /// Also export prompts and outputs as span attributes.
    #[arg(long)]
    pub otlp_content: bool,
    /// Seed of the simulated provider.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
}

/// `orch run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Providers, cassettes, traces.
    #[command(flatten)]
    pub replies: ReplyArgs,
    /// The request and how to plan it.
    #[command(flatten)]
    pub plan: PlanArgs,
    /// Output format [default: tree on a terminal, json otherwise]
    #[arg(long, value_enum)]
    pub format: Option<RunFormat>,
    /// Exit 3 when overallQuality is below N (0..=100).
    #[arg(long, value_name = "N", value_parser = session::quality)]
    pub min_quality: Option<f64>,
    /// Hard cap on LLM calls (overrides limits.maxCalls).
    #[arg(long, value_name = "N", value_parser = |s: &str| session::count(s, &session::MAX_CALLS))]
    pub max_calls: Option<u32>,
    /// Seconds the whole run may take (overrides limits.deadline; 0 = none).
    #[arg(long, value_name = "SECONDS", value_parser = session::deadline)]
    pub deadline: Option<f64>,
    /// LLM calls in flight at once (overrides limits.maxConcurrency).
    #[arg(long, value_name = "N", value_parser = |s: &str| session::count(s, &session::CONCURRENCY))]
    pub concurrency: Option<u32>,
    /// Write JSONL events of the run to this file.
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,
    /// How steps that need a person's approval are decided
    /// [default: prompt when stdin is a terminal, else deny]
    #[arg(long, value_enum)]
    pub approvals: Option<ApprovalMode>,
    /// Write the run's journal here, line by line, for `orch approve` and `orch resume`.
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Keep a conversation in FILE (JSON lines, created when absent): this run is its next turn.
    #[arg(long, value_name = "FILE")]
    pub session: Option<PathBuf>,
    /// Print the answer on stdout as it is written (text format only)
    /// [default: on when stdout is a terminal and --format is text]
    #[arg(long)]
    pub stream: bool,
    /// Progress on stderr as JSON lines, one per change (bars are drawn on a terminal otherwise).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub progress: Option<ProgressFormat>,
}

/// `orch explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The request and how to plan it.
    #[command(flatten)]
    pub plan: PlanArgs,
    /// Output format [default: tree on a terminal, json otherwise]
    #[arg(long, value_enum)]
    pub format: Option<ExplainFormat>,
    /// Ask the router (exactly one call) and show the plan it gives.
    #[arg(long)]
    pub route: bool,
}

/// `orch validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Config root or single config file [env: ORCH_CONFIG; default: .]
    #[arg(value_name = "PATH")]
    pub path: Option<PathBuf>,
    /// Output format [default: source lines with carets on a terminal, text otherwise]
    #[arg(long, value_enum)]
    pub format: Option<ValidateFormat>,
    /// Treat warnings as errors.
    #[arg(long)]
    pub strict: bool,
    /// Also check these suite files (their department ids against the config).
    #[arg(long = "suite", value_name = "FILE")]
    pub suites: Vec<PathBuf>,
}

/// `orch test`.
#[derive(Debug, Args)]
pub struct TestArgs {
    /// Providers, cassettes, traces.
    #[command(flatten)]
    pub replies: ReplyArgs,
    /// Suite files (YAML or TOML).
    #[arg(value_name = "SUITE", required_unless_present = "merge")]
    pub suites: Vec<PathBuf>,
    /// Config root, over the suite's own `config` [env: ORCH_CONFIG; default: .]
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Run only the cases of shard K of N (by FNV-1a of the case id).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<crate::suite::Shard>,
    /// Cases run at once.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub jobs: u32,
    /// Runs of each case (over the suite's `defaults.repeat`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: Option<u32>,
    /// Share of a case's runs that must pass (0..=1).
    #[arg(long, value_name = "R", default_value_t = 1.0, value_parser = rate)]
    pub pass_rate: f64,
    /// Run only cases whose id matches this regex.
    #[arg(long, value_name = "REGEX")]
    pub filter: Option<String>,
    /// Run only cases with this tag (repeatable: a case with any of them).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Leave out cases with this tag (repeatable).
    #[arg(long = "skip-tag", value_name = "TAG")]
    pub skip_tags: Vec<String>,
    /// Run only N of the selected cases, the same N on every machine (chosen before --shard).
    #[arg(long, value_name = "N", value_parser = sample_size)]
    pub sample: Option<u64>,
    /// The seed that chooses --sample's cases.
    #[arg(long, value_name = "S", default_value = "0", requires = "sample")]
    pub sample_seed: String,
    /// Run only the cases with a failed or errored run in this results file.
    #[arg(long, value_name = "FILE")]
    pub rerun_failed: Option<PathBuf>,
    /// Print the calls and worst-case cost of the selected cases; run nothing, need no key.
    // It writes nothing: a file flag would be silently ignored.
    #[arg(long, conflicts_with_all = ["results", "resume", "junit", "record", "cache"])]
    pub estimate: bool,
    /// Append one JSON line per case run to this file, as each finishes.
    #[arg(long, value_name = "FILE", conflicts_with = "resume")]
    pub results: Option<PathBuf>,
    /// Skip the case runs already in this results file and append the rest.
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,
    /// Summarise these results files without running anything.
    #[arg(
        long,
        value_name = "FILE",
        num_args = 1..,
        // Merging runs nothing: a flag that selects or runs cases would be silently ignored.
        conflicts_with_all = [
            "suites", "results", "resume", "config", "shard", "jobs", "repeat", "filter",
            "provider", "model", "record", "replay", "cache", "otlp", "otlp_content", "seed",
            "success_rates", "tags", "skip_tags", "sample", "rerun_failed", "estimate",
        ]
    )]
    pub merge: Vec<PathBuf>,
    /// Write JUnit XML here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Whether steps that need a person's approval are approved (a suite never asks).
    #[arg(long, value_enum, default_value_t = Approvals::Deny)]
    pub approvals: Approvals,
    /// Rank specialists by the learned rates in this file (`orch stats --success-rates`)
    /// [default: routing.successRates]
    #[arg(long, value_name = "FILE")]
    pub success_rates: Option<PathBuf>,
    /// Which variants each case gets; `--variant` wins over a case's `variants:`.
    #[command(flatten)]
    pub variants: VariantArgs,
    /// Output format [default: tree on a terminal, json otherwise]
    #[arg(long, value_enum)]
    pub format: Option<TestFormat>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Progress on stderr as JSON lines, one per finished case run (a bar is drawn on a
    /// terminal otherwise).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub progress: Option<ProgressFormat>,
    /// How much of each run's report a results line holds: `summary` leaves out outputs,
    /// prompts and tool results (what compare, stats and --merge read stays).
    #[arg(long, value_enum, value_name = "DETAIL", default_value_t = crate::suite::ResultsDetail::Full)]
    pub results_detail: crate::suite::ResultsDetail,
    /// Send the suite's openai and anthropic calls as batches (half the price, answers
    /// within 24 hours), kept in STATE across invocations; exit 75 while batches are pending.
    #[arg(long, value_name = "STATE", conflicts_with_all = ["estimate", "resume", "merge"])]
    pub batch: Option<PathBuf>,
    /// With --batch: poll and submit new waves for up to SECONDS before exiting 75.
    #[arg(long, value_name = "SECONDS", requires = "batch")]
    pub batch_wait: Option<u64>,
    /// With --batch-wait: seconds between polls (decimals allowed, at least 0.1).
    #[arg(long, value_name = "SECONDS", default_value = "30", requires = "batch", value_parser = poll_interval)]
    pub batch_poll: std::time::Duration,
}

/// The least time between two polls of pending batches, in seconds (as `watch -n` has it):
/// a batch takes minutes at the least, and a busy loop would only spend the provider's
/// rate limit.
const MIN_POLL_SECONDS: f64 = 0.1;

/// Seconds between polls: a decimal number of at least 0.1.
fn poll_interval(s: &str) -> Result<std::time::Duration, String> {
    let secs = s
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n >= MIN_POLL_SECONDS);
    let interval = secs.and_then(|n| std::time::Duration::try_from_secs_f64(n).ok());
    interval.ok_or_else(|| format!("`{s}` is not a number of seconds of 0.1 or more"))
}

/// A number of cases to sample: 1 or more (a sample of none would run nothing).
fn sample_size(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("`{s}` is not a number of cases of 1 or more")),
    }
}

/// A share: a number from 0 to 1.
/// A reason that says something: an empty one would tell the model nothing.
fn said(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err("the reason is empty: say why, or leave out --reason".into());
    }
    Ok(s.to_string())
}

fn rate(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
        _ => Err(format!("`{s}` is not a rate between 0 and 1")),
    }
}

/// A significance level: a number from 0 to 1 (0: nothing is significant).
fn significance(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(a) if (0.0..=1.0).contains(&a) => Ok(a),
        _ => Err(format!("`{s}` is not a significance level between 0 and 1")),
    }
}

/// Output format of `tune`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TuneFormat {
    /// The proposals as a tree for people (the default on a terminal).
    Tree,
    /// The proposals as JSON (the default when stdout is not a terminal).
    Json,
    /// Each change explained, for a pull request.
    Markdown,
}

/// `orch tune`: proposals learned from results (docs/tuning.md).
#[derive(Debug, Args)]
pub struct TuneArgs {
    /// Results files (`orch test --results`) or saved run reports (`orch run --format json`).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Config root whose thresholds are today's [env: ORCH_CONFIG; default: .]
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// A person's verdicts: JSON lines `{"runId", "agentId", "attempt", "pass"}` (a filled-in template reads as it is; `pass: null` lines are skipped).
    #[arg(long, value_name = "FILE")]
    pub labels: Option<PathBuf>,
    /// Write every attempt of the FILEs to this new file as a line to label (`"pass": null` for a person to fill in; then pass it as --labels).
    #[arg(long, value_name = "OUT")]
    pub label_template: Option<PathBuf>,
    /// Output format [default: tree on a terminal, json otherwise]
    #[arg(long, value_enum)]
    pub format: Option<TuneFormat>,
    /// Write a copy of the config root with the proposals applied into this new (or empty) directory.
    #[arg(long, value_name = "DIR")]
    pub write: Option<PathBuf>,
}

/// Output format of `optimize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OptimizeFormat {
    /// What was tried and accepted, as lines for people (the default on a terminal).
    Tree,
    /// The whole result as JSON (the default when stdout is not a terminal).
    Json,
    /// `OPTIMIZE.md`'s text, for a pull request.
    Markdown,
}

/// `orch optimize`: instructions learned from graded runs (docs/tuning.md).
#[derive(Debug, Args)]
pub struct OptimizeArgs {
    /// Suite files (YAML or TOML) whose cases teach and judge the instructions.
    #[arg(value_name = "SUITE", required = true)]
    pub suites: Vec<PathBuf>,
    /// An agent whose instructions to improve: a specialist or a head (repeatable).
    #[arg(long = "agent", value_name = "ID", required = true)]
    pub agents: Vec<String>,
    /// Write the config copy (with accepted instructions) and OPTIMIZE.md into this new (or empty) directory.
    #[arg(long, value_name = "DIR", required = true)]
    pub write: PathBuf,
    /// Config root, over the suite's own `config` [env: ORCH_CONFIG; default: .]
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// The agent of the config that proposes instructions (not one being optimized).
    #[arg(long, value_name = "AGENT", conflicts_with_all = ["reflector_provider", "reflector_model"])]
    pub reflector: Option<String>,
    /// The provider of a reflector outside the config (with --reflector-model; no instructions).
    #[arg(long, value_name = "NAME")]
    pub reflector_provider: Option<String>,
    /// The model of that reflector.
    #[arg(long, value_name = "NAME")]
    pub reflector_model: Option<String>,
    /// Candidates used per round at most, 1 to 20 (the first ones of the reflector's reply).
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub candidates: u32,
    /// Rounds of reflection per agent, 1 to 20.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub rounds: u32,
    /// Share of the cases held out for validation (0..=1).
    #[arg(long, value_name = "R", default_value_t = 0.3, value_parser = rate)]
    pub validation_split: f64,
    /// The seed of the split.
    #[arg(long, value_name = "S", default_value = "0")]
    pub seed: String,
    /// Calls optimize may make in all (runs, judging, reflection).
    #[arg(long, value_name = "N")]
    pub max_calls: Option<u64>,
    /// USD optimize may spend in all (each priced agent on the way needs maxOutputTokens; an unpriced model is free).
    #[arg(long, value_name = "X", value_parser = usd_limit)]
    pub max_cost_usd: Option<f64>,
    /// Answer every call from this cassette, with no network.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// Answer from this cassette when it holds the request; else call and append the reply.
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    pub cache: Option<PathBuf>,
    /// Use only cases whose id matches this regex.
    #[arg(long, value_name = "REGEX")]
    pub filter: Option<String>,
    /// Use only cases with this tag (repeatable: a case with any of them).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Leave out cases with this tag (repeatable).
    #[arg(long = "skip-tag", value_name = "TAG")]
    pub skip_tags: Vec<String>,
    /// Output format [default: tree on a terminal, json otherwise]
    #[arg(long, value_enum)]
    pub format: Option<OptimizeFormat>,
}

/// An amount of USD: 0 or more, finite.
fn usd_limit(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("`{s}` is not an amount of USD of 0 or more")),
    }
}
