#!/usr/bin/env bash
# End-to-end recall latency vs. one equivalent SQLite FTS5 query, and beside
# it, retrieval quality at scale (BEAM budget recall with query latency).
#
#   bash scripts/bench-recall.sh [--reps N] [--tickets N] [--naive-reps N]
#                                [--records N] [--chunks N] [--seed S]
#                                [--no-build] [--hyperfine]
#                                [--no-latency] [--no-beam]
#                                [--beam-merged] [--beam-in-corpus]
#                                [--beam PATH] [--beam-questions N]
#                                [--eval-workers N] [--beam-fresh]
#
# What runs (default: all three parts):
#   latency             steps 1-5 below; --no-latency skips them.
#   BEAM merged         step 6a; quality of all 55 BEAM conversations in one
#                       project (`eval beam --merged`).
#   BEAM in corpus      step 6b; the same conversations inside the 1M-chunk
#                       synthetic corpus.
#   --beam-merged and --beam-in-corpus select quality rows: given either,
#   only the rows named run (so `--no-latency --beam-in-corpus` runs 6b
#   alone). --no-beam skips both rows.
#
# 1. Builds the release `recall`, the `sqlite_floor` and `eval` examples and
#    the `recall` bench helper (benches/recall/).
# 2. Generates, or reuses, a project of 100,000 records and 1,000,000
#    session chunks (seeded; cached in $RECALL_BENCH_CACHE, default
#    ~/.cache/recall-bench, never in the repository; about 6.5 GB). Chunks are written
#    straight into the index tables; records are real Markdown files indexed
#    by recall's own sync code (see the header of benches/recall/main.rs).
# 3. Writes --tickets (default 20) seeded tickets of exactly 300 words.
# 4. Runs, interleaved in one run, --reps (default 15) times per ticket:
#      a. `recall --home H --project P query --format prompt "<ticket>"`;
#      b. the floor: `sqlite_floor INDEX "<SQL>"`, a minimal sqlite3-CLI
#         stand-in linked with the same bundled SQLite as recall, running
#         ONE statement: recall's own chunk candidate query
#         (src/recall/candidates.rs) with the MATCH expression recall plans
#         for that ticket (same terms, same bm25 weights, same LIMIT, same
#         joins); the SQL is computed with recall's library planner
#         beforehand and saved next to each ticket (ticket-NN.floor.sql);
#      c. --naive-reps (default 1) times: the same statement with every
#         sanitizer term of the ticket OR-ed (no document-frequency
#         selection), for context.
#    Both sides are timed as whole processes (spawn to exit, output to
#    /dev/null), so both pay process start-up and the database open; the
#    order alternates between runs. recall also pays what the floor does
#    not: planning (vocabulary look-ups), the record and ticket queries,
#    passage selection, rendering and the salience update it writes after
#    printing.
# 5. Prints a Markdown table: p50, p95 of each side and the ratios.
#    Target: recall p50 <= 1.5 x floor p50.
# 6. Quality at scale, with the harness examples/eval.rs (see its header for
#    every rule) on BEAM (--beam PATH, default
#    ../shared/data/beam/beam_100k_500k.json.gz; 984 questions with gold
#    evidence; --beam-questions N asks only the first N):
#      a. `eval beam --merged`: the 55 conversations (43,790 messages) in
#         one project of their own; indexed once into the eval workspace
#         $RECALL_BENCH_CACHE/eval-beam and reused;
#      b. `eval beam --merged --home H-beam --project bench`: the same
#         conversations indexed by `recall index` INTO the synthetic corpus,
#         so real questions must find real evidence among a million
#         distractor chunks and 100,000 records. The cached corpus H is
#         never touched: it is copied once (cp --reflink=auto -a) to the
#         sibling H-beam, BEAM is indexed into its `bench` project once (the
#         harness leaves the marker H-beam/.eval-indexed-beam-merged-into-bench.json)
#         and later runs reuse it. The copy is redone when H's corpus marker
#         changes (a regenerated corpus).
#    Each question is one `recall query --format json --limit 50` process;
#    --eval-workers (default 1) run at once, so on an idle machine the
#    latency is one query's. Prints one Markdown table: set | budget recall
#    | floor | p50 ms | p95 ms (process wall time, spawn to exit). The floor
#    is plain SQLite FTS5 over the BEAM messages alone in both rows
#    (computed once, about 3 minutes).
#    Target: in-corpus budget recall >= 0.9 x the merged one.
#    --beam-fresh rebuilds both: re-indexes 6a (`recall index --full`) and
#    copies H and indexes BEAM into the copy again for 6b (do it after a
#    change to the indexer: a reused index is reported in the notes when it
#    was built by another `recall` binary).
#
# Why not the system sqlite3? It is 3.40 here and cannot read our index:
# `secure-delete` bumps the FTS5 on-disk format ("invalid fts5 file format
# (found 5, expected 4)").
#
# Note: every `recall` run updates hit counters (salience) in the cached
# index; this barely moves rankings and does not change the corpus.
# --hyperfine additionally times ticket 00 with hyperfine (if installed) as
# a cross-check of the built-in timing loop.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REPS=15
NTICKETS=20
NAIVE_REPS=1
RECORDS=100000
CHUNKS=1000000
SEED=42
BUILD=1
HYPERFINE=0
LATENCY=1
BEAM_PATH="$ROOT/../shared/data/beam/beam_100k_500k.json.gz"
BEAM_MERGED=""
BEAM_IN_CORPUS=""
NO_BEAM=0
BEAM_QUESTIONS=""
EVAL_WORKERS=1
BEAM_FRESH=0
while [ $# -gt 0 ]; do
    case "$1" in
        --reps) REPS="$2"; shift ;;
        --tickets) NTICKETS="$2"; shift ;;
        --naive-reps) NAIVE_REPS="$2"; shift ;;
        --records) RECORDS="$2"; shift ;;
        --chunks) CHUNKS="$2"; shift ;;
        --seed) SEED="$2"; shift ;;
        --no-build) BUILD=0 ;;
        --hyperfine) HYPERFINE=1 ;;
        --no-latency) LATENCY=0 ;;
        --no-beam) NO_BEAM=1 ;;
        --beam-merged) BEAM_MERGED=1 ;;
        --beam-in-corpus) BEAM_IN_CORPUS=1 ;;
        --beam) BEAM_PATH="$2"; shift ;;
        --beam-questions) BEAM_QUESTIONS="$2"; shift ;;
        --eval-workers) EVAL_WORKERS="$2"; shift ;;
        --beam-fresh) BEAM_FRESH=1 ;;
        -h|--help) sed -n '2,86p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done
# No row named: both rows, unless --no-beam.
if [ -z "$BEAM_MERGED$BEAM_IN_CORPUS" ]; then
    BEAM_MERGED=1
    BEAM_IN_CORPUS=1
fi
if [ "$NO_BEAM" = 1 ]; then
    BEAM_MERGED=0
    BEAM_IN_CORPUS=0
fi
BEAM_MERGED="${BEAM_MERGED:-0}"
BEAM_IN_CORPUS="${BEAM_IN_CORPUS:-0}"
BEAM=$((BEAM_MERGED || BEAM_IN_CORPUS))
# The corpus is needed for the latency and for BEAM inside it.
CORPUS=$((LATENCY || BEAM_IN_CORPUS))
[ "$LATENCY" = 1 ] || [ "$BEAM" = 1 ] || { echo "nothing to run: --no-latency and --no-beam" >&2; exit 2; }

log() { echo "[bench-recall] $*" >&2; }
die() { echo "bench-recall: $*" >&2; exit 1; }

TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export CARGO_TARGET_DIR="$TARGET_DIR"
CACHE="${RECALL_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recall-bench}"
HOME_DIR="$CACHE/recall-${RECORDS}r-${CHUNKS}c-seed$SEED"
BEAM_HOME="$HOME_DIR-beam"
EVAL_WS="$CACHE/eval-beam"
mkdir -p "$CACHE" "$CACHE/results"
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/recall-bench.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
if [ "$BEAM" = 1 ] && [ ! -f "$BEAM_PATH" ]; then
    die "no BEAM file at $BEAM_PATH: pass --beam PATH, or --no-beam"
fi

# --- build -------------------------------------------------------------------
cd "$ROOT"
if [ "$BUILD" = 1 ]; then
    log "building release binaries (target: $TARGET_DIR)"
    cargo build --release --quiet --bin recall --example sqlite_floor --example eval
fi
RECALL="$TARGET_DIR/release/recall"
FLOOR="$TARGET_DIR/release/examples/sqlite_floor"
EVAL="$TARGET_DIR/release/examples/eval"
[ -x "$RECALL" ] || die "no $RECALL (run without --no-build)"
[ "$LATENCY" = 0 ] || [ -x "$FLOOR" ] || die "no $FLOOR (run without --no-build)"
[ "$BEAM" = 0 ] || [ -x "$EVAL" ] || die "no $EVAL (run without --no-build)"
if [ "$CORPUS" = 1 ]; then
    BENCH_BIN="$(cargo bench --bench recall --no-run --message-format=json 2>/dev/null \
        | grep -o '"executable":"[^"]*/deps/recall-[^"]*"' | tail -1 | cut -d'"' -f4)"
    [ -n "$BENCH_BIN" ] && [ -x "$BENCH_BIN" ] || die "cannot build/find the recall bench binary"
fi

# --- corpus ------------------------------------------------------------------
GEN=""
if [ "$CORPUS" = 1 ]; then
    log "corpus $HOME_DIR ($RECORDS records, $CHUNKS chunks, seed $SEED)"
    "$BENCH_BIN" generate --home "$HOME_DIR" --project bench --records "$RECORDS" \
        --chunks "$CHUNKS" --seed "$SEED" >"$WORK/gen.json"
    GEN="$(cat "$WORK/gen.json")"
    log "  $GEN"
fi

json_num() { echo "$2" | grep -o "\"$1\":[0-9.]*" | head -1 | cut -d: -f2; }

# --- latency -----------------------------------------------------------------
if [ "$LATENCY" = 1 ]; then
    "$BENCH_BIN" tickets --home "$HOME_DIR" --out "$WORK/tickets" --count "$NTICKETS" --words 300 >/dev/null
    LOAD_START="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
    T0=$(date +%s)
    "$BENCH_BIN" compare --recall "$RECALL" --floor "$FLOOR" --home "$HOME_DIR" --project bench \
        --tickets "$WORK/tickets" --reps "$REPS" --naive-reps "$NAIVE_REPS" \
        --json "$WORK/compare.json" >"$WORK/table.md"
    T1=$(date +%s)
    cp "$WORK/compare.json" "$CACHE/results/recall-$STAMP.json"
    cp -r "$WORK/tickets" "$CACHE/results/tickets-$STAMP"

    HF=""
    if [ "$HYPERFINE" = 1 ]; then
        if command -v hyperfine >/dev/null; then
            log "hyperfine cross-check on ticket-00"
            INDEX="$(ls "$HOME_DIR"/projects/*/index.db)"
            # sqlite_floor reads its SQL from stdin when given only the database;
            # recall reads the ticket with --query-file and ignores stdin.
            hyperfine -N --warmup 2 --runs "$REPS" --input "$WORK/tickets/ticket-00.floor.sql" \
                --export-json "$WORK/hf.json" \
                -n recall "$RECALL --home $HOME_DIR --project bench query --format prompt --query-file $WORK/tickets/ticket-00.txt" \
                -n floor "$FLOOR $INDEX" >"$WORK/hf.out" 2>&1 || { cat "$WORK/hf.out" >&2; die "hyperfine failed"; }
            cp "$WORK/hf.json" "$CACHE/results/hyperfine-$STAMP.json"
            HF="hyperfine cross-check (ticket-00, $REPS runs, medians): $(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
m = {x["command"]: x["median"] * 1e3 for x in r}
print("recall %.1f ms, floor %.1f ms, ratio %.2f" % (m["recall"], m["floor"], m["recall"] / m["floor"]))
' "$WORK/hf.json" 2>/dev/null || echo "see $CACHE/results/hyperfine-$STAMP.json")"
        else
            HF="(hyperfine not installed: built-in timing loop only)"
        fi
    fi

    cat <<EOF

## recall --format prompt vs. one equivalent FTS5 query ($(date -u +%Y-%m-%dT%H:%MZ), seed $SEED)

$(cat "$WORK/table.md")

Floor method: \`sqlite_floor\` (examples/sqlite_floor.rs) is a minimal stand-in for the
sqlite3 CLI built against the same bundled SQLite $("$FLOOR" :memory: 'select sqlite_version()') as recall (the system
sqlite3 $(sqlite3 --version 2>/dev/null | cut -d' ' -f1) cannot read our secure-delete FTS5 index); it opens the index
read-only and prints the rows of ONE statement: recall's chunk candidate query with the
MATCH expression recall planned for the ticket. Both sides are whole processes, timed
spawn-to-exit by the bench helper, interleaved and alternating order.
Generation: $(json_num seconds "$GEN") s (records $(json_num records_seconds "$GEN") s), index $(awk -v b="$(json_num db_bytes "$GEN")" 'BEGIN { printf "%.2f GB", b / 1e9 }') (reused: $(echo "$GEN" | grep -o '"reused":[a-z]*' | cut -d: -f2)).
${HF}
load average at start: $LOAD_START; at end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'); $(nproc) CPUs; measured in $((T1 - T0)) s
raw results: $CACHE/results/recall-$STAMP.json
EOF
fi

[ "$BEAM" = 1 ] || exit 0

# --- quality at scale: BEAM ----------------------------------------------------

# A number of the harness's --summary JSON (pretty-printed), empty for null.
sum_num() { grep -o "\"$1\": *[-0-9.eE+]*" "$2" 2>/dev/null | head -1 | sed 's/.*: *//'; }
fmt() { if [ -n "$2" ]; then printf "%.${1}f" "$2"; else printf 'n/a'; fi; }

# eval_beam NAME ARGS...: run the harness on BEAM merged; its table goes to
# $CACHE/results/NAME-$STAMP.md, the summary to $WORK/NAME.json. Returns
# non-zero (after logging) when the harness fails.
eval_beam() {
    local name="$1"; shift
    local extra=()
    [ -z "$BEAM_QUESTIONS" ] || extra+=(--limit-questions "$BEAM_QUESTIONS")
    [ "$BEAM_FRESH" = 0 ] || [ "$name" != beam-merged ] || extra+=(--reindex)
    local t0; t0=$(date +%s)
    if "$EVAL" beam "$BEAM_PATH" --merged --keep-home "$EVAL_WS" --recall-bin "$RECALL" \
        --workers "$EVAL_WORKERS" --summary "$WORK/$name.json" \
        --json "$CACHE/results/$name-$STAMP.json" "${extra[@]}" "$@" \
        >"$CACHE/results/$name-$STAMP.md"; then
        echo $(($(date +%s) - t0)) >"$WORK/$name.secs"
        cp "$WORK/$name.json" "$CACHE/results/$name-$STAMP.summary.json"
    else
        log "eval for $name failed (see above)"
        return 1
    fi
}

# The copy of the corpus that BEAM goes into: made once, remade when the
# corpus was regenerated (its marker differs) or with --beam-fresh.
prepare_beam_home() {
    if [ -d "$BEAM_HOME" ] && { [ "$BEAM_FRESH" = 1 ] \
        || ! cmp -s "$HOME_DIR/.recall-bench.json" "$BEAM_HOME/.recall-bench.json"; }; then
        log "removing the stale copy $BEAM_HOME"
        rm -rf "$BEAM_HOME"
    fi
    [ -d "$BEAM_HOME" ] && return 0
    local need free
    need=$(du -sk "$HOME_DIR" | cut -f1)
    free=$(df -Pk "$CACHE" | awk 'NR == 2 { print $4 }')
    if [ "$free" -le $((need + need / 5 + 1048576)) ]; then
        log "not enough disk for a copy of $HOME_DIR ($((need / 1048576)) GB, $((free / 1048576)) GB free)"
        return 1
    fi
    log "copying $HOME_DIR to $BEAM_HOME ($((need / 1048576)) GB)"
    local t0; t0=$(date +%s)
    rm -rf "$BEAM_HOME.partial"
    cp --reflink=auto -a "$HOME_DIR" "$BEAM_HOME.partial"
    mv "$BEAM_HOME.partial" "$BEAM_HOME"
    COPY_SECS=$(($(date +%s) - t0))
    log "  copied in ${COPY_SECS} s"
}

FAILED=0
COPY_SECS=""
if [ "$BEAM_MERGED" = 1 ]; then
    log "BEAM merged: 55 conversations in one project (workspace $EVAL_WS)"
    eval_beam beam-merged || FAILED=1
fi
if [ "$BEAM_IN_CORPUS" = 1 ]; then
    if prepare_beam_home; then
        log "BEAM in corpus: 55 conversations inside project bench of $BEAM_HOME"
        # Its floor is the merged row's (the same BEAM messages): computed
        # again only when that row did not run.
        floor=()
        [ ! -f "$WORK/beam-merged.json" ] || floor=(--no-floor)
        eval_beam beam-in-corpus --home "$BEAM_HOME" --project bench "${floor[@]}" || FAILED=1
    else
        FAILED=1
    fi
fi

# row NAME LABEL: one table row from NAME's summary ("failed" without one).
row() {
    local s="$WORK/$1.json"
    if [ ! -f "$s" ]; then
        echo "| $2 | failed | - | - | - |"
        return
    fi
    local recall; recall="$(fmt 3 "$(sum_num budget_recall "$s")")"
    if [ "$1" = beam-in-corpus ] && [ -f "$WORK/beam-merged.json" ]; then
        recall="$recall ($(awk -v a="$(sum_num budget_recall "$s")" \
            -v b="$(sum_num budget_recall "$WORK/beam-merged.json")" \
            'BEGIN { if (b > 0) printf "%.2f×", a / b; else printf "n/a" }') merged)"
    fi
    local floor; floor="$(sum_num floor_budget_recall "$s")"
    [ -n "$floor" ] || floor="$(sum_num floor_budget_recall "$WORK/beam-merged.json")"
    echo "| $2 | $recall | $(fmt 3 "$floor")$3 | $(fmt 1 "$(sum_num wall_p50_ms "$s")") | $(fmt 1 "$(sum_num wall_p95_ms "$s")") |"
}

# note NAME LABEL [EXTRA]: the notes on NAME's run.
note() {
    local s="$WORK/$1.json"
    [ -f "$s" ] || return 0
    local idx; idx="$(sum_num index_seconds "$s")"
    if [ -n "$idx" ]; then
        idx="BEAM indexed in $(fmt 0 "$idx") s"
    elif grep -q '"index_reused_from_other_build": *true' "$s"; then
        idx="index reused, built by another recall binary (--beam-fresh rebuilds it)"
    else
        idx="index reused"
    fi
    echo "- $2: $(sum_num questions "$s") questions ($(sum_num skipped "$s") without evidence skipped, $(sum_num failed "$s") failed); engine \`timings_ms.total\` p50 $(fmt 1 "$(sum_num engine_p50_ms "$s")") ms, p95 $(fmt 1 "$(sum_num engine_p95_ms "$s")") ms; $idx; query phase $(fmt 0 "$(sum_num query_seconds "$s")") s; whole step $(cat "$WORK/$1.secs") s${3:-}."
    echo "  Tables: $CACHE/results/$1-$STAMP.md; per question: $CACHE/results/$1-$STAMP.json"
}

# 1000000 as 1,000,000.
thousands() { echo "$1" | sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/' -e 'ta'; }

ROWS=""
NOTES=""
if [ "$BEAM_MERGED" = 1 ]; then
    ROWS+="$(row beam-merged "BEAM merged: 55 conversations in one project" "")"$'\n'
    NOTES+="$(note beam-merged "Merged (workspace $EVAL_WS)")"$'\n'
fi
if [ "$BEAM_IN_CORPUS" = 1 ]; then
    ROWS+="$(row beam-in-corpus "BEAM in corpus: the same inside $(thousands "$CHUNKS") chunks + $(thousands "$RECORDS") records" " ¹")"$'\n'
    NOTES+="$(note beam-in-corpus "In corpus ($BEAM_HOME)" "${COPY_SECS:+ (copying the corpus: $COPY_SECS s)}")"$'\n'
    NOTES+="- ¹ The floor is plain SQLite FTS5 (bm25, porter, every question word OR-ed) over the BEAM
  messages alone, the merged row's (computed once per run), not over the synthetic corpus:
  what matters here is ours in the corpus against ours merged."$'\n'
fi
cat <<EOF

## Quality at scale: BEAM budget recall and query latency ($(date -u +%Y-%m-%dT%H:%MZ))

| set | budget recall | floor | p50 ms | p95 ms |
|---|---:|---:|---:|---:|
${ROWS}
Budget recall: the fraction of a question's gold evidence messages covered by the hits taken
in rank order within 4,000 characters of hit text, averaged over BEAM's questions with evidence
(examples/eval.rs). Target: in corpus >= 0.9 x merged. p50/p95: wall time of each
\`recall query --format json --limit 50\` process, spawn to exit, $EVAL_WORKERS at a time.

${NOTES}load average at end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'); $(nproc) CPUs
EOF
[ "$FAILED" = 0 ] || die "a BEAM run failed"
