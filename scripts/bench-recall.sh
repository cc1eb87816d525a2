#!/usr/bin/env bash
# End-to-end recall latency vs. one equivalent SQLite FTS5 query.
#
#   bash scripts/bench-recall.sh [--reps N] [--tickets N] [--naive-reps N]
#                                [--records N] [--chunks N] [--seed S]
#                                [--no-build] [--hyperfine]
#
# 1. Builds the release `recall`, the `sqlite_floor` example and the
#    `recall` bench helper (benches/recall.rs).
# 2. Generates, or reuses, a project of 100,000 records and 1,000,000
#    session chunks (seeded; cached in $RECALL_BENCH_CACHE, default
#    ~/.cache/recall-bench, never in the repository; about 6.5 GB). Chunks are written
#    straight into the index tables; records are real Markdown files indexed
#    by recall's own sync code (see the header of benches/recall.rs).
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
        -h|--help) sed -n '2,45p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done

log() { echo "[bench-recall] $*" >&2; }
die() { echo "bench-recall: $*" >&2; exit 1; }

TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export CARGO_TARGET_DIR="$TARGET_DIR"
CACHE="${RECALL_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recall-bench}"
HOME_DIR="$CACHE/recall-${RECORDS}r-${CHUNKS}c-seed$SEED"
mkdir -p "$CACHE"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/recall-bench.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# --- build -------------------------------------------------------------------
cd "$ROOT"
if [ "$BUILD" = 1 ]; then
    log "building release binaries (target: $TARGET_DIR)"
    cargo build --release --quiet --bin recall --example sqlite_floor
fi
BENCH_BIN="$(cargo bench --bench recall --no-run --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*/deps/recall-[^"]*"' | tail -1 | cut -d'"' -f4)"
[ -n "$BENCH_BIN" ] && [ -x "$BENCH_BIN" ] || die "cannot build/find the recall bench binary"
RECALL="$TARGET_DIR/release/recall"
FLOOR="$TARGET_DIR/release/examples/sqlite_floor"
[ -x "$RECALL" ] && [ -x "$FLOOR" ] || die "no $RECALL or $FLOOR (run without --no-build)"

# --- corpus ------------------------------------------------------------------
log "corpus $HOME_DIR ($RECORDS records, $CHUNKS chunks, seed $SEED)"
"$BENCH_BIN" generate --home "$HOME_DIR" --project bench --records "$RECORDS" \
    --chunks "$CHUNKS" --seed "$SEED" >"$WORK/gen.json"
GEN="$(cat "$WORK/gen.json")"
log "  $GEN"
"$BENCH_BIN" tickets --home "$HOME_DIR" --out "$WORK/tickets" --count "$NTICKETS" --words 300 >/dev/null

# --- measure -----------------------------------------------------------------
LOAD_START="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
T0=$(date +%s)
"$BENCH_BIN" compare --recall "$RECALL" --floor "$FLOOR" --home "$HOME_DIR" --project bench \
    --tickets "$WORK/tickets" --reps "$REPS" --naive-reps "$NAIVE_REPS" \
    --json "$WORK/compare.json" >"$WORK/table.md"
T1=$(date +%s)
mkdir -p "$CACHE/results"
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
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

json_num() { echo "$2" | grep -o "\"$1\":[0-9.]*" | head -1 | cut -d: -f2; }
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
