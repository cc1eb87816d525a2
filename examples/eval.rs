//! Retrieval quality harness for `recall`: runs public benchmarks through the
//! `recall` CLI (the stable contract) and compares the results with a plain
//! SQLite FTS5 floor computed in the same run.
//!
//! ```text
//! cargo build --release --bin recall --example eval
//! target/release/examples/eval locomo ../shared/data/locomo/locomo10.json [--keep-home DIR] [--json OUT]
//! target/release/examples/eval beir ../shared/data/beir-scifact [--keep-home DIR] [--json OUT]
//! target/release/examples/eval beam ../shared/data/beam/beam_100k_500k.json.gz [--merged] [--keep-home DIR] [--json OUT]
//! target/release/examples/eval beam ../shared/data/beam/beam_100k_500k.json.gz --merged --home HOME --project NAME [--summary OUT]
//! target/release/examples/eval jira [../shared/data/jira-dups] [--keep-home DIR] [--json OUT]
//! target/release/examples/eval swe [../shared/data/swe-sessions] [--titles | --full] [--keep-home DIR] [--json OUT]
//! target/release/examples/eval all [--locomo PATH] [--beam PATH] [--scifact DIR] [--jira DIR] [--swe DIR] [--scale] [--keep-home DIR] [--json OUT]
//! target/release/examples/eval scale [--sizes 1,4,16] [--sets locomo,beam,beam-merged,jira,swe] [set paths as for all] [--keep-home DIR] [--json OUT]
//! target/release/examples/eval paraphrase [testdata/paraphrase] [--transcripts ../shared/data/agent-transcripts] [--keep-home DIR] [--json OUT]
//! ```
//!
//! The harness builds nothing: it runs the `recall` binary given by
//! `--recall-bin`, by default the one next to this executable
//! (`target/release/recall`). Every run creates a temporary workspace (or
//! uses `--keep-home DIR`, which is kept and, once indexed, reused without
//! re-indexing; `--reindex` forces it). A workspace holds `home/` (the
//! recall home), `data/` (the converted files) and one `indexed-<set>.json`
//! marker per indexed dataset (per conversation for BEAM), which also names
//! the `recall` binary (path, size, mtime) that indexed it: reusing an index
//! built by another build prints a warning, since a changed indexer makes
//! the reused index stale. Queries run one `recall` process each, on
//! `--workers` threads (2 by default), with `--no-salience`: no question
//! shifts the ranking of another, in this run or a later one that reuses
//! the index.
//!
//! # LoCoMo (`locomo10.json`)
//!
//! Conversion: each conversation becomes the project `locomo-<sample_id>`,
//! each `session_<N>` one neutral transcript `data/locomo/<sample_id>/s<N>.jsonl`:
//! a first line `{"session":{"id":"<sample_id>-s<N>","title":"Session N, <date text>","started_at":...}}`
//! (`started_at` is RFC 3339 when the LoCoMo date text such as
//! `"1:56 pm on 8 May, 2023"` parses, else omitted), then one line per turn
//! `{"role","name":<speaker>,"content":<text>,"id":<dia_id>}` with
//! `" [image: <blip_caption>]"` appended when a caption is present.
//! `speaker_a` gets role `user` and `speaker_b` role `assistant`
//! (`--all-user` makes both `user`). Indexed with `--kind session`.
//!
//! Gold evidence: each evidence string is split on `;` and whitespace and
//! only ids matching `D\d+:\d+` are kept; questions left without any id are
//! skipped and counted.
//!
//! Metrics (hits in rank order, each hit covering the ids of its
//! `source.message_ids`; shared with BEAM):
//! - **budgeted evidence recall** (headline): hits are taken while the sum of
//!   `len(text)` (Unicode scalar values) stays within 4,000 characters,
//!   stopping *before* the first hit that would pass it; the score is the
//!   fraction of gold ids covered by the hits taken.
//! - any evidence in the top 5 hits (any gold id covered by them); any
//!   evidence session among the first 5 distinct sessions of the hits (a
//!   hit's session is its `source.session_id`; a gold session is one that
//!   holds a gold message).
//! - recall@10 (fraction of gold ids covered by the top 10), hit@10 (any gold
//!   id covered by the top 10).
//! - nDCG@10 **per gold id**: each gold id is a relevant item found at the
//!   rank of the first hit that covers it (gain 1, discount
//!   `1/log2(rank+1)`); the ideal puts one gold id per rank from rank 1.
//!   The ratio is capped at 1, so a hit that covers several gold ids at once
//!   is not penalised.
//!
//! All are averaged over questions, overall and per category
//! (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial).
//!
//! Floor: one in-memory FTS5 table per conversation with one row per turn,
//! `"<speaker>: <text>"` (caption included), `tokenize='porter unicode61'`;
//! the query is every distinct lower-cased `\w+` word of the question, each
//! quoted as an FTS5 string and OR-ed, ranked by `bm25()`; the row text
//! (speaker prefix included) is what counts against the budget. Published:
//! 0.688 overall.
//!
//! # BEAM (`beam_100k_500k.json.gz`)
//!
//! The file is read through `gzip -dc` (no gzip crate; a path not ending in
//! `.gz` is read as plain JSON). Conversion: each session becomes one
//! neutral transcript `data/beam/<conv>/<session id>.jsonl`, `<conv>` being
//! the `conversation_id` lower-cased with characters other than `[a-z0-9_-]`
//! as `-`: a first line `{"session":{"id":<session id>,"title":"<topic
//! title> · <date>","started_at":...}}` (`started_at` is midnight UTC of the
//! session `date` such as `"March-15-2024"` when it parses, else omitted),
//! then one line per message `{"role","content","id":"<message id>"}`.
//! Indexed with `--kind session`.
//!
//! - Per conversation (default): each conversation is the project
//!   `beam-<conv>` and its questions are asked against it. Only the
//!   conversations holding selected questions are indexed (one marker each),
//!   so `--limit-questions 40` indexes 3 of the 55.
//! - `--merged`: every conversation goes into the one project `beam-merged`
//!   (`data/beam-merged/<conv>/...`); message ids are written as
//!   `<conversation_id>:<id>` (`100K-1:17`), in the transcripts and in the
//!   gold alike, so each question is still scored against its own
//!   conversation's evidence.
//! - `--merged --home DIR --project NAME`: index into the project NAME of
//!   the existing recall home DIR, next to whatever it already holds (such
//!   as the synthetic corpus of `scripts/bench-recall.sh`), and ask there.
//!   The converted data still goes to the workspace (`--keep-home`); the
//!   index marker goes to `DIR/.eval-indexed-beam-merged-into-NAME.json`,
//!   so a later run with the same home and project reuses the index.
//!   Gold and floor are as for `--merged` (the floor holds the BEAM
//!   messages only).
//!
//! `--summary OUT` writes the headline figures as one flat JSON object
//! (budget recall and its floor, p50/p95 of the process wall time and of
//! `timings_ms.total`, the query phase's and the indexing's seconds):
//! what `scripts/bench-recall.sh` reads for its quality table.
//!
//! Gold: a question's `evidence` message ids; the 116 questions without any
//! (abstention and six others) are skipped and counted, 984 remain. Queries
//! ask `--limit` 50 hits by default. The metrics are LoCoMo's, averaged
//! overall, per split (`100K`, `500K`) and per category.
//!
//! Floor: one in-memory FTS5 table per conversation (one for all when
//! merged), one row per message with its `content` as the text, queried as
//! for LoCoMo, top 50 rows. Published (per conversation): budget recall
//! 0.186, any evidence in top 5 0.437, any evidence session in the first 5
//! sessions 0.600. This harness measures 0.183 / 0.437 / 0.600; a Python
//! `sqlite3` run of the same rule gives 0.184, the 0.001 left being `\w+`
//! (Rust's `\w` splits `x²`, Python's keeps it).
//!
//! # BEIR SciFact (`beir-scifact/`)
//!
//! Each `corpus.jsonl` doc becomes `data/scifact/doc-<n>.md`, a Markdown
//! ticket with frontmatter `id` and `title` written as JSON (= YAML
//! double-quoted) strings and the text as body, indexed with
//! `--kind ticket` into the project `beir-scifact`. Only the queries of
//! `qrels/test.tsv` are run (300); `--split train` runs those of
//! `qrels/train.tsv` instead (809), which no default was chosen on. A hit
//! maps to a doc through `source.ticket_id` (falling back to the hit id
//! before `#`); several parts of one doc are deduplicated, keeping the
//! best rank. nDCG@10 is the BEIR /
//! trec_eval one (graded gain = qrel score, `1/log2(rank+1)` discount, ideal
//! from the qrels); recall@100 is over the first 100 distinct docs of the
//! hits returned (`--limit`, 100 by default). Floor: the same FTS5 rule with
//! one row per doc, `title + " " + text`. Published: nDCG@10 0.6874,
//! R@100 0.9253.
//!
//! # jira-dups (`jira-dups/`)
//!
//! A new bug ticket asks for the earlier tickets its developers linked as
//! its duplicates. Each corpus ticket becomes `data/jira-dups/<KEY>.md`, a
//! Markdown ticket with frontmatter `id`, `title`, `created` (RFC 3339)
//! and `labels` (its JIRA components), the description as body, indexed
//! with `--kind ticket` into the project `jira-dups`. The 24 queries that
//! quote their gold's key are skipped (942 remain). Each query is the
//! ticket's `text` (title, blank line, description), asked with `--until`
//! one second before the ticket was filed and `--limit` 100; its hits
//! collapse into distinct tickets (`source.ticket_id`), and the query's
//! own ticket and every ticket created at or after it are dropped (past
//! tickets only, for the floor alike). Metrics over those: nDCG@10 (gain
//! 1 per gold ticket), recall@10 (any gold in the first 10) and MRR (over
//! the first 100). Floor: one FTS5 row per ticket, `title + " " + text`,
//! every matching row ranked by `bm25()` (the floor's usual rule) and
//! filtered the same way, the first 100 kept. Published (issue #24): nDCG@10 0.472,
//! recall@10 0.583.
//!
//! # swe-sessions (`swe-sessions/`)
//!
//! An issue asks for the one coding-agent session (of 500) that worked on
//! it. Each line of `sessions.jsonl.gz` is already a neutral transcript in
//! the document form; it is written as `data/swe-sessions/<id>.json` and
//! indexed with `--kind session` into the project `swe-sessions`. Two
//! query forms: the issue's title (`queries_title.jsonl`, `--titles`) and
//! its full text (`queries.jsonl`, `--full`); both by default. Hits
//! (`--limit` 50) collapse into distinct sessions (`source.session_id`) in
//! rank order, each ranked by its best hit; metrics hit@1, hit@5 and MRR
//! (over the first 50 sessions). Floor: one FTS5 row per message (its
//! session named), the best 2,000 rows collapsed the same way. Published
//! (issue #24): hit@1 0.952 with titles.
//!
//! # Paraphrase (`testdata/paraphrase/`)
//!
//! Questions about the real agent transcripts asked in other words than
//! the record or passage that answers them: top-1, top-5 and MRR beside
//! the floor. See `eval/paraphrase.rs` and the set's README.
//!
//! # All sets (`all`, alias `suite`)
//!
//! Runs LoCoMo, BEAM per conversation, BEAM merged, SciFact, jira-dups and
//! swe-sessions with titles and with full issues (paths default to
//! `../shared/data/...`, overridable with `--locomo`, `--beam`,
//! `--scifact`, `--jira` and `--swe`) in one workspace, with the same flags for every set
//! (`--limit` overrides every set's default). Each set's own table goes to
//! stderr; stdout gets one table `set | metric | recall | floor | delta`
//! (delta = ours − floor): budget recall with its per-category rows for
//! LoCoMo and BEAM (BEAM also per split, and its top-5 hit and session
//! rates), and nDCG@10 and recall@100 for SciFact. `--json OUT` writes
//! `{"locomo","beam","beam_merged","scifact","jira","swe_titles","swe_full"}`, each the per-question
//! results of that set. A set that fails is reported and skipped; the run
//! then exits 2 after printing the others.
//!
//! `--scale` then runs the scale curve (below) with its defaults, in the
//! same workspace, its `--json` going to `OUT` with the extension
//! `.scale.json`. It is not run by default: it takes longer than every
//! other set together (see `docs/benchmarks.md` for its wall time).
//!
//! # Scale curve (`scale`)
//!
//! Quality as history grows (issue #24 item 4): each set is run alone,
//! then inside more unrelated history, and recall and the floor are
//! printed at each size. `--sizes` (default `1,4,16`) counts characters
//! (Unicode scalar values) of indexed text: the messages' contents of a
//! session, the title and text of a ticket. Size `n` means each of the
//! set's projects holds `n` times the set's own characters: the set and
//! `n - 1` times as much distractor text (1 = the set alone, its usual
//! projects and index). `--sets` (default all five:
//! `locomo,beam,beam-merged,jira,swe`) chooses the sets: LoCoMo and BEAM
//! (one project per conversation, each drawing its own distractors), BEAM
//! merged (one project), jira-dups, and swe-sessions with title queries. Each set is
//! run by its own code (conversion, queries, floor, metrics, per-set
//! table on stderr) into the projects `<project>-x<n>`.
//!
//! Distractors come from every other set of the five (LoCoMo, BEAM,
//! swe-sessions as sessions; jira-dups and SciFact as tickets), each in
//! the form its set's converter writes. Each source is put in a fixed
//! order (a seeded blake3 hash of its ids); a project draws from the
//! source with the fewest characters drawn so far, starting at a place
//! hashed from the project's name, taking each document that still fits
//! what is left of the budget, never one twice. When the pool runs out
//! (jira-dups reaches about 8x, swe-sessions about 4x, BEAM merged about
//! 1.75x) the ratio reached is printed and the larger sizes are not run,
//! being the same corpus. Every id a distractor carries (session,
//! message, ticket) is written `x:<source>:<id>`, which no gold id starts
//! with; each distractor is dated at an instant hashed from its id inside
//! the set's own time span (a LoCoMo or BEAM conversation's session
//! dates, jira-dups' creation dates; undated for swe-sessions), so that
//! `--until` does not hide it and recency does not single it out.
//!
//! The floor indexes the same distractors beside the set's rows, by its
//! usual rule: one row per message (its session named), one per ticket
//! (title and text). In jira-dups and swe-sessions rankings a distractor
//! session or ticket is one item that is not gold (jira-dups keeps those
//! dated before the query, like its tickets); in LoCoMo and BEAM a
//! distractor hit takes its share of the budget and of the top 5 hits,
//! and a distractor session one of the first 5 sessions (a ticket hit has
//! no session).
//!
//! Stdout gets one table `set | size | reached | metric | recall | floor |
//! margin` (budget recall and session any@5 for LoCoMo and BEAM; nDCG@10,
//! recall@10 and MRR for jira-dups; hit@1 and MRR for swe-sessions), then
//! one row per set and size with the set's and the distractors'
//! characters, the distractors' sessions and tickets, the characters each
//! source gave, and the wall time (indexing, queries and floor). `--json
//! OUT` writes `{"points": [...], "notes", "wall_s", "results":
//! {"<set>": {"<size>": per-question results}}}`, each point holding its
//! headlines and what its draws added.
//!
//! Every query is asked `--at` one fixed time (`--at WHEN`, by default
//! 2026-11-25T12:00:00Z): recency and relative times ("last week") are
//! read against it, so a figure does not drift with the calendar.
//!
//! Latency: p50/p95 of the engine's own `timings_ms.total` and of the wall
//! time of each `recall` process, plus the total wall time of the query
//! phase. The floor's latency is in-process and only indicative.
//!
//! `--json OUT` writes every per-question result (question, category, gold,
//! hit ids, covered ids, floor results) for error analysis.

#[path = "eval/args.rs"]
mod args;
#[path = "eval/beam.rs"]
mod beam;
#[path = "eval/beam_eval.rs"]
mod beam_eval;
#[path = "eval/beir.rs"]
mod beir;
#[path = "eval/data.rs"]
mod data;
#[path = "eval/distract.rs"]
mod distract;
#[path = "eval/evidence.rs"]
mod evidence;
#[path = "eval/floor.rs"]
mod floor;
#[path = "eval/jira.rs"]
mod jira;
#[path = "eval/locomo.rs"]
mod locomo;
#[path = "eval/metrics.rs"]
mod metrics;
#[path = "eval/paraphrase.rs"]
mod paraphrase;
#[path = "eval/report.rs"]
mod report;
#[path = "eval/runner.rs"]
mod runner;
#[path = "eval/scale.rs"]
mod scale;
#[path = "eval/suite.rs"]
mod suite;
#[path = "eval/swe.rs"]
mod swe;
#[path = "eval/workspace.rs"]
mod workspace;

use anyhow::Result;
use clap::{CommandFactory as _, FromArgMatches as _};

use args::{Common, Dataset};
use beam::Target;
use report::{write_json, Run};
use runner::Recall;
use workspace::Workspace;

fn main() -> std::process::ExitCode {
    // `paraphrase` has its own flags (in its module), beside the sets of `args`.
    let matches = args::Cli::command()
        .subcommand(paraphrase::Opts::command())
        .get_matches();
    let result = match matches.subcommand() {
        Some(("paraphrase", m)) => paraphrase::Opts::from_arg_matches(m)
            .map_err(Into::into)
            .and_then(paraphrase::main),
        _ => args::Cli::from_arg_matches(&matches)
            .map_err(Into::into)
            .and_then(|cli| run(cli.dataset)),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("eval: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

fn run(dataset: Dataset) -> Result<()> {
    let common = match &dataset {
        Dataset::Locomo { common, .. }
        | Dataset::Beir { common, .. }
        | Dataset::Beam { common, .. }
        | Dataset::Jira { common, .. }
        | Dataset::Swe { common, .. }
        | Dataset::All { common, .. }
        | Dataset::Scale { common, .. } => common.clone(),
    };
    let home = match &dataset {
        Dataset::Beam { into, .. } => into.home.clone(),
        _ => None,
    };
    let ws = Workspace::open(common.keep_home.as_deref())?.with_home(home.as_deref())?;
    let recall =
        Recall::new(common.recall_bin.as_deref(), ws.home(), &common.at)?.with_semantic(&common)?;
    let ws = ws.built_by(recall.fingerprint());
    eprintln!("eval: recall binary {}", recall.bin().display());
    let run = match dataset {
        Dataset::Locomo { path, all_user, .. } => {
            locomo::run(&path, all_user, &common, &ws, &recall)?
        }
        Dataset::Beir { dir, split, .. } => beir::run(&dir, &split, &common, &ws, &recall)?,
        Dataset::Beam {
            path,
            merged,
            into,
            summary,
            ..
        } => {
            let target = if merged {
                Target::merged(into.project.as_deref())
            } else {
                Target::per_conversation()
            };
            let run = beam_eval::run(&path, target, &common, &ws, &recall)?;
            if let Some(out) = &summary {
                write_json(out, &run.summary)?;
            }
            run
        }
        Dataset::Jira { dir, .. } => jira::run(&dir, &common, &ws, &recall)?,
        Dataset::Swe {
            dir, titles, full, ..
        } => {
            let forms = match (titles, full) {
                (true, _) => vec![swe::Form::Title],
                (_, true) => vec![swe::Form::Full],
                _ => vec![swe::Form::Title, swe::Form::Full],
            };
            let runs = swe::run(&dir, &forms, &common, &ws, &recall)?;
            let mut results = serde_json::Map::new();
            for (form, run) in forms.iter().zip(&runs) {
                print!("{}", run.markdown());
                results.insert(form.key().into(), run.results.clone());
            }
            if let Some(out) = &common.json {
                write_json(out, &serde_json::Value::Object(results))?;
            }
            return Ok(());
        }
        Dataset::All { paths, scale, .. } => {
            let sets = suite::run(&paths, &common, &ws, &recall);
            if !scale {
                return sets;
            }
            // The curve writes its own --json next to the sets'.
            let common = Common {
                json: common.json.as_ref().map(|p| p.with_extension("scale.json")),
                ..common
            };
            let curve = scale::run(
                (&paths, scale::DEFAULT_SETS, scale::DEFAULT_SIZES),
                &common,
                &ws,
                &recall,
            );
            return sets.and(curve);
        }
        Dataset::Scale {
            paths, sizes, sets, ..
        } => return scale::run((&paths, &sets, &sizes), &common, &ws, &recall),
    };
    finish(&run, &common)
}

/// Print one set's table and write its `--json`.
fn finish(run: &Run, common: &Common) -> Result<()> {
    print!("{}", run.markdown());
    match &common.json {
        Some(out) => write_json(out, &run.results),
        None => Ok(()),
    }
}
