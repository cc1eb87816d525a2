//! The command line as typed: clap structs only. [`super::context`] turns
//! them into validated options.
//!
//! The doc comments below are the `--help` text, written for a terminal:
//! `[default: …]`, `<project>` and `[REDACTED:<kind>]` there are what a
//! user reads, not rustdoc links or HTML.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// recall: full-text memory for AI coding agents.
///
/// A bare `recall TEXT` is `recall query TEXT`.
#[derive(Debug, Parser)]
#[command(name = "recall", version, subcommand_negates_reqs = true)]
#[command(
    after_help = "Exit codes: 0 success (or hits found), 1 no hits (doctor: problems found), \
2 error, 3 a batch finished but some items failed, 130 interrupted (Ctrl-C).\n\
Docs: README.md and docs/"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub query: QueryArgs,
}

/// Flags accepted before or after any subcommand.
#[derive(Debug, Args, Clone, Default)]
pub struct GlobalArgs {
    /// Home folder [default: $RECALL_HOME, $XDG_DATA_HOME/recall, ~/.local/share/recall]
    #[arg(long, global = true, value_name = "DIR")]
    pub home: Option<PathBuf>,

    /// Project name or id [default: $RECALL_PROJECT, else the git top-level of --cwd].
    /// Bare `--project` (no name) means the current folder's project.
    #[arg(long, global = true, env = "RECALL_PROJECT", value_name = "NAME", num_args = 0..=1, default_missing_value = "")]
    pub project: Option<String>,

    /// Folder whose project to use [default: the current folder]
    #[arg(long, global = true, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Use a throwaway home for this one command and remove it afterwards
    /// (evaluation runs that must not learn from each other)
    #[arg(long, global = true, conflicts_with = "home")]
    pub ephemeral: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Search the project and user memory
    Query(QueryArgs),
    /// Add, change, list and remove records
    #[command(subcommand)]
    Record(RecordCmd),
    /// Index session transcripts and tickets
    Index(IndexArgs),
    /// Rebuild the index from the record files
    Reindex(ReindexArgs),
    /// Check the store and print the fix for each problem
    Doctor,
    /// Show which project a folder maps to
    #[command(subcommand)]
    Project(ProjectCmd),
    /// Distil finished sessions into records
    Extract(ExtractArgs),
    /// Print a compact index of the project's memory (MEMORY.md style)
    Summary(SummaryArgs),
    /// Agent launcher hooks (always exit 0)
    #[command(subcommand)]
    Hook(HookCmd),
    /// Build a temporary store from the bundled demo corpus and recall from it
    Demo(DemoArgs),
    /// Store one fact for later sessions (what an agent calls mid-session)
    Remember(RememberArgs),
    /// Serve the memory to an agent over MCP on stdio (tools: recall,
    /// remember, get, list, forget)
    Mcp,
    /// Serve a local REST API and the web memory panel (http://127.0.0.1:7077/)
    Serve(ServeArgs),
    /// Share memory with your team through PostgreSQL: pull what other hosts
    /// learned, push what this host learned
    Sync(SyncArgs),
    /// Propose skills (playbooks) from the project's procedures; `recall
    /// record promote NAME` writes one
    Skills(SkillsArgs),
    /// The embedding model of hybrid recall (`[semantic] model`): check it,
    /// or distil a static one from it
    #[command(subcommand)]
    Model(ModelCmd),
    /// Print a shell completion script (source it, or save it where your shell looks)
    Completions(CompletionsArgs),
    /// Print the man page, or write one page per command with --out
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct RememberArgs {
    /// The fact; `-` or absent reads stdin
    #[arg(value_name = "TEXT")]
    pub text: Option<String>,
    /// decisions, procedures, principles, incidents or preferences
    /// [default: what the builtin extraction rules make of the text, else decisions]
    #[arg(long, value_name = "C")]
    pub category: Option<String>,
    /// Upsert key [default: agent:<slug of the text>]
    #[arg(long, value_name = "K")]
    pub key: Option<String>,
    /// project or user [default: user for a preference, else project]
    #[arg(long)]
    pub scope: Option<String>,
    /// 0-100
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = importance)]
    pub importance: Option<u8>,
    /// Store detected secrets as [REDACTED:<kind>] instead of refusing
    #[arg(long)]
    pub redact: bool,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write recall.1 and a page per subcommand (recall-query.1, ...) into DIR
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Output formats of `query`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum QueryFormat {
    Snippets,
    Prompt,
    Json,
}

#[derive(Debug, Args, Clone, Default)]
pub struct QueryArgs {
    /// Query text; read from --query-file or stdin when absent
    #[arg(value_name = "TEXT")]
    pub text: Vec<String>,

    /// Read the query from a file
    #[arg(long, value_name = "FILE")]
    pub query_file: Option<PathBuf>,

    /// Output format
    #[arg(long, value_enum)]
    pub format: Option<QueryFormat>,

    /// Most hits to return [default: 10, or recall.limit in config]
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = at_least_one)]
    pub limit: Option<usize>,

    /// Only records of this category
    #[arg(long, value_name = "C")]
    pub category: Option<String>,

    /// Budget of recalled text, in estimated tokens: a hard cap on the whole
    /// output for prompt, on the hits' text for snippets and json [default:
    /// 2000 for prompt, none otherwise]
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = zero_or_more)]
    pub max_tokens: Option<usize>,

    /// project, user or all
    #[arg(long, value_name = "SCOPE", default_value = "all")]
    pub scope: String,

    /// Only these kinds (repeatable): record, session, ticket
    #[arg(long = "kind", value_enum, value_name = "KIND")]
    pub kinds: Vec<HitKindArg>,

    /// Only hits from this time on: 2026-11-01, an RFC 3339 time, or 7d / 12h / 2w ago
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    /// Only hits up to this time (same forms as --since; a date alone is the
    /// whole day)
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,

    /// Only chunks of this session
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,

    /// Show why each hit scored what it did: bm25 and passage scores,
    /// length pivot, the list's coverage, each boost and lift, session
    /// evidence (in snippets, a line per hit; in JSON, an `explain` object)
    #[arg(long)]
    pub explain: bool,

    /// Hybrid recall for this query: passages and records the embedding
    /// model finds close to the question rescue what its words miss, placed
    /// after the best lexical hits (needs `[semantic] model`; the config's
    /// `[semantic] hybrid` turns it on for every query)
    #[arg(long)]
    pub semantic: bool,

    /// Answer as of this time (same forms as --since): what "recent",
    /// "yesterday" and "last week" mean. Evaluations pin it, so their
    /// figures do not drift with the calendar
    #[arg(long, value_name = "WHEN")]
    pub at: Option<String>,

    /// Do not note the hits as used: later rankings stay as they were
    /// (evaluation runs and scripted checks that must not learn from
    /// their own queries)
    #[arg(long)]
    pub no_salience: bool,
}

impl QueryArgs {
    /// The query flags that were given, as typed (`--scope`, `--limit`, ...).
    /// Before a subcommand they belong to the bare query form, so they
    /// would be silently ignored there.
    pub fn flags_given(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        let mut given = |set: bool, name: &'static str| {
            if set {
                out.push(name);
            }
        };
        given(self.query_file.is_some(), "--query-file");
        given(self.format.is_some(), "--format");
        given(self.limit.is_some(), "--limit");
        given(self.category.is_some(), "--category");
        given(self.max_tokens.is_some(), "--max-tokens");
        given(self.scope != "all", "--scope");
        given(!self.kinds.is_empty(), "--kind");
        given(self.since.is_some(), "--since");
        given(self.until.is_some(), "--until");
        given(self.session.is_some(), "--session");
        given(self.at.is_some(), "--at");
        given(self.explain, "--explain");
        given(self.semantic, "--semantic");
        given(self.no_salience, "--no-salience");
        out
    }
}

/// `--kind` values of `query`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HitKindArg {
    Record,
    Session,
    Ticket,
}

#[derive(Debug, Subcommand)]
pub enum RecordCmd {
    /// Add a record, or update the one with the same key
    Add(AddArgs),
    /// Change some fields of a record
    Update(UpdateArgs),
    /// Move a record to another category
    Reclassify {
        id_or_key: String,
        category: String,
        #[command(flatten)]
        scope: ScopeArg,
    },
    /// Move a record to the other scope (a project fact filed as the
    /// user's, or the other way round), keeping its id, key and history
    Move {
        id_or_key: String,
        /// Where it goes: project or user
        #[arg(long, value_name = "SCOPE")]
        to: String,
    },
    /// Leave a record out of recall, keeping its file
    Archive {
        id_or_key: String,
        #[command(flatten)]
        scope: ScopeArg,
    },
    /// Bring an archived record back into recall
    Unarchive {
        id_or_key: String,
        #[command(flatten)]
        scope: ScopeArg,
    },
    /// Delete a record's file
    Delete {
        id_or_key: String,
        #[command(flatten)]
        scope: ScopeArg,
    },
    /// List records: pinned first, then by importance, then most recently updated
    List(ListArgs),
    /// Print one record
    Get {
        id_or_key: String,
        #[arg(long, value_enum, default_value = "md")]
        format: GetFormat,
        #[command(flatten)]
        scope: ScopeArg,
    },
    /// Edit a record in $VISUAL or $EDITOR; it is validated on save
    Edit {
        id_or_key: String,
        #[command(flatten)]
        scope: ScopeArg,
    },
    /// Write a skill: <project root>/.claude/skills/<name>/SKILL.md
    Promote {
        /// A playbook's name as `recall skills` prints it, or a record's id
        /// or key (that record alone)
        #[arg(value_name = "NAME")]
        id_or_key: String,
        /// Print the SKILL.md and where it would go; write nothing
        #[arg(long)]
        dry_run: bool,
        /// Replace a SKILL.md recall did not write or that was changed since
        /// (the old one is kept as SKILL.md.bak-<time>)
        #[arg(long)]
        force: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ModelCmd {
    /// Load the model and say what it is (path, kind, dimension, vocabulary)
    /// and how fast it runs here (load, one prompt, passages per second)
    Check(ModelArgs),
    /// Make a static token table from a transformer (each token embedded
    /// once) in a folder that `[semantic] model` can name
    Distil {
        #[command(flatten)]
        model: ModelArgs,
        /// The folder to write (model.safetensors, tokenizer.json, config.json)
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct ModelArgs {
    /// The model's folder [default: [semantic] model in config.toml, $RECALL_SEMANTIC_MODEL]
    #[arg(long, value_name = "DIR")]
    pub model: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SkillsArgs {
    /// JSON: each proposal's name, description, body and source records
    #[arg(long)]
    pub json: bool,
}

/// Which scope to look in; both (project first) when absent.
#[derive(Debug, Args, Clone, Default)]
pub struct ScopeArg {
    /// project or user
    #[arg(long, value_name = "SCOPE")]
    pub scope: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GetFormat {
    Md,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    Table,
    Json,
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// decisions, procedures, principles, incidents or preferences
    #[arg(long, value_name = "C")]
    pub category: String,
    /// Unique key within the scope (1-255 characters)
    #[arg(long, value_name = "K")]
    pub key: String,
    /// project or user
    #[arg(long, default_value = "project", value_name = "SCOPE")]
    pub scope: String,
    /// Pin the record: it comes first in lists and at session start
    #[arg(long)]
    pub pinned: bool,
    /// 0-100
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = importance)]
    pub importance: Option<u8>,
    /// Comma-separated keywords
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    pub keywords: Vec<String>,
    /// Store detected secrets as [REDACTED:<kind>] instead of refusing
    #[arg(long)]
    pub redact: bool,
    /// The fact; `-` or absent reads stdin
    #[arg(value_name = "TEXT")]
    pub text: Option<String>,
}

/// At least one change: an update that changes nothing is a mistake
/// (`record update build` alone printed "updated" and changed nothing).
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("change").multiple(true).required(true)))]
pub struct UpdateArgs {
    pub id_or_key: String,
    /// New text (`-` reads stdin)
    #[arg(long, group = "change")]
    pub text: Option<String>,
    #[arg(long, value_name = "true|false", group = "change")]
    pub pinned: Option<bool>,
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = importance, group = "change")]
    pub importance: Option<u8>,
    /// Replace the keywords (comma-separated)
    #[arg(long, value_delimiter = ',', value_name = "A,B", group = "change")]
    pub keywords: Option<Vec<String>>,
    /// Store detected secrets as [REDACTED:<kind>] instead of refusing
    #[arg(long)]
    pub redact: bool,
    #[command(flatten)]
    pub scope: ScopeArg,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[arg(long, value_name = "C")]
    pub category: Option<String>,
    /// project or user [default: both]
    #[arg(long)]
    pub scope: Option<String>,
    /// active or archived [default: both]
    #[arg(long)]
    pub status: Option<String>,
    /// manual, auto or agent
    #[arg(long)]
    pub source: Option<String>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: ListFormat,
}

#[derive(Debug, Args)]
pub struct ReindexArgs {
    /// Re-read every file instead of trusting size and mtime; recreates a corrupt index
    #[arg(long)]
    pub full: bool,
    /// Every project under the home, not just the current one
    #[arg(long)]
    pub all_projects: bool,
    /// Print a JSON summary
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum ProjectCmd {
    /// Every project in the home
    List {
        #[arg(long)]
        json: bool,
    },
    /// The project of the current folder (or --cwd / --project)
    Show {
        #[arg(long)]
        json: bool,
    },
    /// Where the project's records live: keep them in the repository
    /// (<git top>/.recall/records, reviewed and pulled with the code) or in
    /// the home; without a flag, say where they are
    Records {
        /// Move the home's records into the repository and read them there
        #[arg(long, conflicts_with = "in_home")]
        in_repo: bool,
        /// Keep them in the home again (the repository's copies stay)
        #[arg(long)]
        in_home: bool,
    },
    /// This folder is a project that moved here (a clone moved or
    /// re-cloned elsewhere): take over the memory of the project at
    /// --from, whose earlier sessions stay its own
    Move {
        /// The folder the project lived in before
        #[arg(long, value_name = "DIR")]
        from: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// A demo corpus folder of your own [default: the built-in copy of testdata/demo]
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,
    /// Keep the temporary store and print where it is
    #[arg(long)]
    pub keep: bool,
    /// Query to run [default: a sample ticket]
    #[arg(value_name = "TEXT")]
    pub text: Vec<String>,
}

/// `--kind` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KindArg {
    Session,
    Ticket,
}

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Files, folders (searched recursively for .jsonl/.json/.md/.txt) and globs
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// The current project's Claude Code transcripts
    #[arg(long)]
    pub claude_code: bool,
    /// Claude Code's home [default: ~/.claude]
    #[arg(long, value_name = "DIR")]
    pub claude_home: Option<PathBuf>,
    /// Codex rollouts whose cwd is inside the current project
    #[arg(long)]
    pub codex: bool,
    /// Codex's home [default: $CODEX_HOME or ~/.codex]
    #[arg(long, value_name = "DIR")]
    pub codex_home: Option<PathBuf>,
    /// The current project's Gemini CLI chats (~/.gemini/tmp/<project>/chats/),
    /// those of folders inside it included
    #[arg(long)]
    pub gemini: bool,
    /// Gemini CLI's folder [default: $GEMINI_CLI_HOME/.gemini or ~/.gemini]
    #[arg(long, value_name = "DIR")]
    pub gemini_home: Option<PathBuf>,
    /// One finished session (what a session-end hook calls)
    #[arg(long, value_name = "FILE")]
    pub session: Option<PathBuf>,
    /// Treat every source as this kind instead of detecting it
    #[arg(long, value_enum)]
    pub kind: Option<KindArg>,
    /// Parse every source with this format: claude-code, codex, gemini, neutral, markdown, github, ticket-markdown, ticket-text (in a folder, a file that is not JSON is skipped for a JSON format)
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// Remove the chunks of sources whose files no longer exist
    #[arg(long)]
    pub prune: bool,
    /// Re-read every source, ignoring what was indexed before
    #[arg(long)]
    pub full: bool,
    /// Print a JSON summary on stdout
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum HookCmd {
    /// Claude Code hook: reads the hook JSON on stdin
    ClaudeCode(HookArgs),
    /// Codex hook: the same JSON protocol
    Codex(HookArgs),
    /// Gemini CLI hook: its hook JSON on stdin (SessionStart, BeforeAgent,
    /// AfterAgent, PreCompress, SessionEnd)
    Gemini(HookArgs),
    /// Merge recall's hooks into a launcher's settings
    Install(InstallArgs),
    /// Take recall's hooks and MCP server out of a launcher's settings (the
    /// memory is kept)
    Uninstall(UninstallArgs),
}

#[derive(Debug, Args)]
pub struct UninstallArgs {
    /// Claude Code: the hooks in settings.json, the MCP server in <project
    /// root>/.mcp.json and its permission in settings.local.json
    #[arg(long)]
    pub claude_code: bool,
    /// Codex: the hooks in $CODEX_HOME/hooks.json, and the MCP server and the
    /// hooks' trust in its config.toml (other hooks keep their trust)
    #[arg(long)]
    pub codex: bool,
    /// Gemini CLI: the hooks and the MCP server in <project
    /// root>/.gemini/settings.json
    #[arg(long)]
    pub gemini: bool,
    /// ~/.claude/settings.json and ~/.gemini/settings.json instead of the
    /// project's
    #[arg(long)]
    pub user: bool,
    /// Show what would change in each file, as a diff, and write nothing
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args, Clone)]
pub struct HookArgs {
    /// Give up and print nothing after this many milliseconds [default: 2000]
    #[arg(long, env = "RECALL_HOOK_DEADLINE_MS", value_name = "MS")]
    pub deadline_ms: Option<u64>,
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// Claude Code: the hooks in settings.json and (project scope) the MCP
    /// server in <project root>/.mcp.json
    #[arg(long)]
    pub claude_code: bool,
    /// Codex (0.171 or later): the hooks in $CODEX_HOME/hooks.json, trusted,
    /// and the MCP server as [mcp_servers.recall], in $CODEX_HOME/config.toml
    /// (~/.codex)
    #[arg(long)]
    pub codex: bool,
    /// Gemini CLI: the hooks and the MCP server in <project
    /// root>/.gemini/settings.json
    #[arg(long)]
    pub gemini: bool,
    /// ~/.claude/settings.json and ~/.gemini/settings.json instead of the
    /// project's (the default, also chosen by a bare --project)
    #[arg(long)]
    pub user: bool,
    /// Print the merged Claude Code (or, with --gemini alone, Gemini CLI)
    /// settings instead of writing them
    #[arg(long)]
    pub print: bool,
    /// Show what would change in each file, as a diff, and write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Do not offer to index this project's earlier Claude Code, Codex and
    /// Gemini CLI sessions
    #[arg(long)]
    pub no_backfill: bool,
    /// Index them without asking (scripts; without a terminal and without
    /// --yes, install only says how)
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Let the launcher call recall's MCP tools without asking, recall's
    /// server only: Claude Code `permissions.allow` "mcp__recall", Codex
    /// `default_tools_approval_mode = "approve"` on [mcp_servers.recall],
    /// Gemini CLI `"trust": true` on mcpServers.recall. Without it each
    /// launcher asks first, and non-interactive runs (`claude -p`,
    /// `codex exec`, `gemini -p`) refuse the tools or are not offered them
    #[arg(long)]
    pub allow_mcp: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExtractorArg {
    Builtin,
    Command,
    Model,
}

#[derive(Debug, Args)]
pub struct ExtractArgs {
    /// Only this session (even if it is not idle yet)
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Only sessions active since (2026-11-01, RFC 3339, or 7d)
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Most sessions this run [default: 64]
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = at_least_one)]
    pub max_sessions: Option<usize>,
    /// Show what would be written; change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Print a JSON report
    #[arg(long)]
    pub json: bool,
    /// Print every session's extraction state instead of extracting
    #[arg(long)]
    pub status: bool,
    /// builtin (rules, no model), command (a JSON program) or model (a
    /// launcher's own model) [default: command, else model, when one is
    /// configured]
    #[arg(long, value_enum)]
    pub extractor: Option<ExtractorArg>,
    /// External extractor: reads a JSON request on stdin, prints facts as JSON
    #[arg(long, value_name = "CMD")]
    pub extractor_cmd: Option<String>,
    /// A launcher's non-interactive mode, which reads a prompt on stdin and
    /// prints the model's answer: `claude -p`, `codex exec
    /// --skip-git-repo-check`, `gemini --skip-trust`
    #[arg(long, value_name = "CMD")]
    pub model_cmd: Option<String>,
    /// Timeout of the external extractor, in seconds [default: 60]
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
    /// Hours of inactivity after which a session counts as finished [default: 12]
    #[arg(long, value_name = "H")]
    pub idle_hours: Option<f64>,
}

#[derive(Debug, Args)]
pub struct SummaryArgs {
    /// Budget, in estimated tokens
    #[arg(long, value_name = "N", default_value_t = 5000, allow_negative_numbers = true, value_parser = zero_or_more)]
    pub max_tokens: usize,
    /// Save it as MEMORY.md in the project's store folder
    #[arg(long)]
    pub write: bool,
}

/// A whole number for a count flag, with a message that says the range
/// (clap's own reads `-1` as an unknown flag).
/// A whole number from `min` to `max`. One written in digits but too big
/// for any count (`18446744073709551616`) is out of range, not "not a
/// whole number".
fn whole(s: &str, min: i64, max: i64) -> Result<i64, String> {
    let t = s.trim();
    let range = format!("use a whole number from {min} to {max}");
    let digits = t.strip_prefix('-').unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("'{s}' is not a whole number; {range}"));
    }
    match t.parse::<i64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(format!("{t} is out of range; {range}")),
    }
}

fn at_least_one(s: &str) -> Result<usize, String> {
    whole(s, 1, i64::from(u32::MAX)).map(|n| n as usize)
}

fn zero_or_more(s: &str) -> Result<usize, String> {
    whole(s, 0, i64::from(u32::MAX)).map(|n| n as usize)
}

fn interval(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (0.1..=86400.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "'{s}' is not a number of seconds from 0.1 to 86400"
        )),
    }
}

/// An address to listen on: an IP and a port. A host name is refused with
/// the address it most likely means (`localhost:7077` is 127.0.0.1:7077),
/// since a name can stand for several addresses, loopback or not.
fn listen_addr(s: &str) -> Result<std::net::SocketAddr, String> {
    s.parse().map_err(|_| {
        let port = s.rsplit_once(':').map_or("7077", |(_, p)| p);
        match s.split(':').next() {
            Some(host) if host.eq_ignore_ascii_case("localhost") => format!(
                "'{s}' is a host name; give an IP and a port, such as 127.0.0.1:{port} (or [::1]:{port})"
            ),
            _ => format!(
                "'{s}' is not an IP and a port, such as 127.0.0.1:7077, [::1]:7077 or 0.0.0.0:7077 (with --token)"
            ),
        }
    })
}

fn importance(s: &str) -> Result<u8, String> {
    whole(s, 0, 100).map(|n| n as u8)
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  recall sync --init postgres://me@db.internal:5432/recall?sslmode=verify-full\n  recall sync                # pull, then push, every shared project\n  recall sync --status\n  recall sync --watch        # near-real-time sharing\n  recall sync --share --team acme/app --no-sessions\n\nSee docs/team-memory.md for roles, grants and what is shared."
)]
pub struct SyncArgs {
    /// Create or upgrade the recall tables on this PostgreSQL server, keep it
    /// as the remote ([sync] url in config.toml) and share the current project
    /// (postgres://USER@HOST:PORT/DATABASE?sslmode=verify-full; the password
    /// is best kept in ~/.pgpass or PGPASSWORD)
    #[arg(long, value_name = "URL")]
    pub init: Option<String>,
    /// Share the current project with the team [default team: its git origin,
    /// normalised, so every clone agrees]
    #[arg(long)]
    pub share: bool,
    /// The team name for --share or --init (the same on every host)
    #[arg(long, value_name = "NAME")]
    pub team: Option<String>,
    /// With --share or --init: keep this project's sessions on this host
    /// (records are always shared)
    #[arg(long)]
    pub no_sessions: bool,
    /// With --share or --init: keep this project's tickets on this host
    #[arg(long)]
    pub no_tickets: bool,
    /// Stop sharing the current project (what the server holds stays)
    #[arg(long, conflicts_with_all = ["init", "share", "status", "watch"])]
    pub unshare: bool,
    /// Per shared project: the remote, the last sync, changes waiting to push
    /// and the hosts seen
    #[arg(long, conflicts_with_all = ["init", "share", "watch", "pull_only"])]
    pub status: bool,
    /// Keep syncing every [sync] interval_secs (default 30) until interrupted
    #[arg(long)]
    pub watch: bool,
    /// Seconds between rounds of --watch, fractions allowed (0.5) [default:
    /// [sync] interval_secs]
    #[arg(long, value_name = "SECS", requires = "watch", value_parser = interval)]
    pub interval: Option<f64>,
    /// Only pull (for a read-only role, such as CI agents)
    #[arg(long)]
    pub pull_only: bool,
    /// Only the current project, not every shared project and the user scope
    #[arg(long)]
    pub this_project: bool,
    /// Print the report as JSON
    #[arg(long)]
    pub json: bool,
    /// Run quietly and give way to a sync already running (what hooks start)
    #[arg(long, hide = true)]
    pub background: bool,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  recall serve                      # http://127.0.0.1:7077/\n  recall serve --addr 127.0.0.1:0   # a free port, printed on stdout\n  RECALL_TOKEN=$(openssl rand -hex 32) recall serve --addr 0.0.0.0:7077"
)]
pub struct ServeArgs {
    /// Address to listen on; anything but loopback needs --token
    #[arg(long, default_value = "127.0.0.1:7077", value_name = "IP:PORT", value_parser = listen_addr)]
    pub addr: std::net::SocketAddr,
    /// Bearer token every /api call must carry (at least 16 characters)
    #[arg(long, env = "RECALL_TOKEN", hide_env_values = true, value_name = "T")]
    pub token: Option<String>,
    /// Abandon a request that runs longer than this, in seconds
    #[arg(long, default_value_t = 30, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
    /// Serve as of this time (same forms as `query --at`): every request
    /// reads and writes at it instead of the clock. For tests and
    /// evaluations, so hidden
    #[arg(long, value_name = "WHEN", hide = true)]
    pub at: Option<String>,
}
