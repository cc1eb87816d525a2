//! The harness command line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::scale::Set;

/// Retrieval quality harness: runs a benchmark through the `recall` CLI and
/// compares it with a plain FTS5 floor.
#[derive(Debug, Parser)]
#[command(name = "eval")]
pub struct Cli {
    #[command(subcommand)]
    pub dataset: Dataset,
}

#[derive(Debug, Subcommand)]
pub enum Dataset {
    /// LoCoMo-10: budgeted evidence recall over conversation transcripts
    Locomo {
        /// Path of locomo10.json
        path: PathBuf,
        /// Give speaker_b the role "user" too (default: "assistant")
        #[arg(long)]
        all_user: bool,
        #[command(flatten)]
        common: Common,
    },
    /// A BEIR set (SciFact): nDCG@10 over ticket documents
    Beir {
        /// Folder holding corpus.jsonl, queries.jsonl and qrels/test.tsv
        /// (and qrels/train.tsv for `--split train`)
        dir: PathBuf,
        /// Which qrels to run: `test` (300 queries, the published figure)
        /// or `train` (809 queries no default was chosen on: a second
        /// check for a ranking change)
        #[arg(long, default_value = "test", value_parser = ["test", "train"])]
        split: String,
        #[command(flatten)]
        common: Common,
    },
    /// BEAM (100K + 500K chats): budgeted evidence recall over long chats
    Beam {
        /// Path of beam_100k_500k.json.gz (or the unpacked JSON)
        path: PathBuf,
        /// All conversations in one project `beam-merged` (default: one project each)
        #[arg(long)]
        merged: bool,
        #[command(flatten)]
        into: BeamInto,
        /// Write the headline figures (budget recall, floor, latency, index
        /// time) to this file as one flat JSON object
        #[arg(long, value_name = "OUT")]
        summary: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// jira-dups: a new bug ticket finds its earlier duplicates (past tickets only)
    Jira {
        /// Folder holding corpus.jsonl.gz, queries.jsonl and qrels.tsv
        #[arg(default_value = "../shared/data/jira-dups")]
        dir: PathBuf,
        #[command(flatten)]
        common: Common,
    },
    /// swe-sessions: an issue finds the coding-agent session that worked on it
    Swe {
        /// Folder holding sessions.jsonl.gz, queries.jsonl, queries_title.jsonl and qrels.tsv
        #[arg(default_value = "../shared/data/swe-sessions")]
        dir: PathBuf,
        /// Only the title queries (default: titles, then full issues)
        #[arg(long, conflicts_with = "full")]
        titles: bool,
        /// Only the full-issue queries
        #[arg(long)]
        full: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Every set (LoCoMo, BEAM, BEAM merged, SciFact, jira-dups, swe-sessions) and one combined table
    #[command(alias = "suite")]
    All {
        #[command(flatten)]
        paths: SuitePaths,
        /// Then the scale curve too (`eval scale` with its default sizes
        /// and sets; it takes longer than every other set together, so it
        /// is not run unless asked)
        #[arg(long)]
        scale: bool,
        #[command(flatten)]
        common: Common,
    },
    /// The scale curve: each set alone, then inside more unrelated history
    /// drawn from the other sets, recall beside the FTS5 floor at each size
    Scale {
        #[command(flatten)]
        paths: SuitePaths,
        /// Sizes: the corpus as a multiple of the set's own characters (1 =
        /// the set alone; 4 = the set and 3 times as much distractor text)
        #[arg(long, value_delimiter = ',', default_value = "1,4,16", value_name = "N,...",
              value_parser = clap::value_parser!(u32).range(1..))]
        sizes: Vec<u32>,
        /// The sets measured
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "locomo,beam,beam-merged,jira,swe",
            value_name = "SET,..."
        )]
        sets: Vec<Set>,
        #[command(flatten)]
        common: Common,
    },
}

/// Where `eval all` finds each set.
#[derive(Debug, Args, Clone)]
pub struct SuitePaths {
    /// Path of locomo10.json
    #[arg(
        long,
        value_name = "PATH",
        default_value = "../shared/data/locomo/locomo10.json"
    )]
    pub locomo: PathBuf,
    /// Path of the BEAM file
    #[arg(
        long,
        value_name = "PATH",
        default_value = "../shared/data/beam/beam_100k_500k.json.gz"
    )]
    pub beam: PathBuf,
    /// Folder of BEIR SciFact
    #[arg(
        long,
        value_name = "DIR",
        default_value = "../shared/data/beir-scifact"
    )]
    pub scifact: PathBuf,
    /// Folder of jira-dups
    #[arg(long, value_name = "DIR", default_value = "../shared/data/jira-dups")]
    pub jira: PathBuf,
    /// Folder of swe-sessions
    #[arg(
        long,
        value_name = "DIR",
        default_value = "../shared/data/swe-sessions"
    )]
    pub swe: PathBuf,
}

/// Where `eval beam --merged` indexes and asks: by default the project
/// `beam-merged` of the workspace's own home.
#[derive(Debug, Args, Clone, Default)]
pub struct BeamInto {
    /// Index into this existing recall home instead of the workspace's (its
    /// index marker is kept in it; the converted data stays in the workspace)
    #[arg(long, value_name = "DIR", requires = "merged")]
    pub home: Option<PathBuf>,
    /// The project to index into and ask [default: beam-merged]
    #[arg(long, value_name = "NAME", requires = "merged")]
    pub project: Option<String>,
}

/// Flags shared by every dataset.
#[derive(Debug, Args, Clone)]
pub struct Common {
    /// Only the first N questions (with gold) in file order
    #[arg(long, value_name = "N")]
    pub limit_questions: Option<usize>,
    /// Keep the workspace (home + converted data) in DIR and reuse its index on later runs
    #[arg(long, value_name = "DIR")]
    pub keep_home: Option<PathBuf>,
    /// Index again even when --keep-home DIR is already indexed
    #[arg(long)]
    pub reindex: bool,
    /// The recall binary [default: `recall` next to this executable]
    #[arg(long, value_name = "PATH")]
    pub recall_bin: Option<PathBuf>,
    /// Write every per-question result to this JSON file
    #[arg(long, value_name = "OUT")]
    pub json: Option<PathBuf>,
    /// Parallel query processes
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub workers: usize,
    /// Hits asked per query [default: 50 for locomo and beam, 100 for beir]
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Skip the FTS5 floor
    #[arg(long)]
    pub no_floor: bool,
    /// The time every query is asked at (`recall query --at`): recency
    /// and relative times are read against it, so figures do not drift
    /// with the calendar
    #[arg(long, value_name = "WHEN", default_value = "2026-11-25T12:00:00Z")]
    pub at: String,
    /// Hybrid recall (issue 38): every `recall` child gets
    /// `RECALL_SEMANTIC_MODEL=MODEL_DIR` (so indexing embeds passages and
    /// records) and `RECALL_SEMANTIC_HYBRID=1` (so queries use the dense
    /// side). An index built without vectors is not reused
    #[arg(long, value_name = "MODEL_DIR")]
    pub semantic: Option<PathBuf>,
    /// With --semantic: index with the model's vectors but ask with hybrid
    /// off (`RECALL_SEMANTIC_HYBRID=0`): the lexical figures on the very
    /// index the hybrid run uses
    #[arg(long, requires = "semantic")]
    pub no_hybrid: bool,
}
