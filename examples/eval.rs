//! Retrieval quality harness for `recall`: runs public benchmarks through the
//! `recall` CLI (the stable contract) and compares the results with a plain
//! SQLite FTS5 floor computed in the same run.
//!
//! ```text
//! cargo build --release --bin recall --example eval
//! target/release/examples/eval locomo ../shared/data/locomo/locomo10.json [--keep-home DIR] [--json OUT]
//! target/release/examples/eval beir ../shared/data/beir-scifact [--keep-home DIR] [--json OUT]
//! ```
//!
//! The harness builds nothing: it runs the `recall` binary given by
//! `--recall-bin`, by default the one next to this executable
//! (`target/release/recall`). Every run creates a temporary workspace (or
//! uses `--keep-home DIR`, which is kept and, once indexed, reused without
//! re-indexing; `--reindex` forces it). A workspace holds `home/` (the
//! recall home), `data/` (the converted files) and one `indexed-<set>.json`
//! marker per indexed dataset. Queries run one `recall` process each, on
//! `--workers` threads (2 by default).
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
//! `source.message_ids`):
//! - **budgeted evidence recall** (headline): hits are taken while the sum of
//!   `len(text)` (Unicode scalar values) stays within 4,000 characters,
//!   stopping *before* the first hit that would pass it; the score is the
//!   fraction of gold ids covered by the hits taken.
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
//! # BEIR SciFact (`beir-scifact/`)
//!
//! Each `corpus.jsonl` doc becomes `data/scifact/doc-<n>.md`, a Markdown
//! ticket with frontmatter `id` and `title` written as JSON (= YAML
//! double-quoted) strings and the text as body, indexed with
//! `--kind ticket` into the project `beir-scifact`. Only the queries of
//! `qrels/test.tsv` are run (300). A hit maps to a doc through
//! `source.ticket_id` (falling back to the hit id before `#`); several parts
//! of one doc are deduplicated, keeping the best rank. nDCG@10 is the BEIR /
//! trec_eval one (graded gain = qrel score, `1/log2(rank+1)` discount, ideal
//! from the qrels); recall@100 is over the first 100 distinct docs of the
//! hits returned (`--limit`, 100 by default). Floor: the same FTS5 rule with
//! one row per doc, `title + " " + text`. Published: nDCG@10 0.6874,
//! R@100 0.9253.
//!
//! Latency: p50/p95 of the engine's own `timings_ms.total` and of the wall
//! time of each `recall` process, plus the total wall time of the query
//! phase. The floor's latency is in-process and only indicative.
//!
//! `--json OUT` writes every per-question result (question, category, gold,
//! hit ids, covered ids, floor results) for error analysis.

#[path = "eval/args.rs"]
mod args;
#[path = "eval/beir.rs"]
mod beir;
#[path = "eval/floor.rs"]
mod floor;
#[path = "eval/locomo.rs"]
mod locomo;
#[path = "eval/metrics.rs"]
mod metrics;
#[path = "eval/report.rs"]
mod report;
#[path = "eval/runner.rs"]
mod runner;
#[path = "eval/workspace.rs"]
mod workspace;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = args::Cli::parse();
    let result = match cli.dataset {
        args::Dataset::Locomo {
            path,
            all_user,
            common,
        } => locomo::run(&path, all_user, &common),
        args::Dataset::Beir { dir, common } => beir::run(&dir, &common),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("eval: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}
