#!/usr/bin/env bash
# Query latency while `recall index` writes a large corpus into the same
# project, against the same queries on an idle machine.
#
#   bash scripts/bench-concurrent.sh [--mb N] [--base-mb N] [--queries N]
#                                    [--idle-runs N] [--seed S] [--no-build]
#
# 1. Builds the release `recall` and the `index` bench helper, which
#    generates seeded synthetic Claude Code corpora (cached in
#    $RECALL_BENCH_CACHE, default ~/.cache/recall-bench, never in the
#    repository): a base corpus of --base-mb (default 100) MB and a load
#    corpus of --mb (default 1000) MB.
# 2. Indexes the base corpus into project `bench` of a fresh home in a temp
#    dir (removed on exit).
# 3. Draws --queries (default 20) seeded queries of 12 words each from the
#    base corpus text.
# 4. Idle: --idle-runs (default 300) `recall query --format prompt` runs,
#    round-robin over the queries, one at a time.
# 5. Under load: starts `recall index` of the load corpus into the same
#    project (at the configured `index.nice`, default 19) and runs the same
#    queries one at a time until the index job ends.
# 6. Prints one Markdown table: runs, p50, p95, p99 and max of each phase,
#    the p99 ratio (target <= 3), failed queries (exit status other than 0
#    or 1) and "database is locked" messages (target 0), and the index job's
#    wall time and exit status.
# Every query is timed as a whole process (spawn to exit) with bash's
# $EPOCHREALTIME, the same way in both phases.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MB=1000
BASE_MB=100
QUERIES=20
IDLE_RUNS=300
SEED=42
BUILD=1
while [ $# -gt 0 ]; do
    case "$1" in
        --mb) MB="$2"; shift ;;
        --base-mb) BASE_MB="$2"; shift ;;
        --queries) QUERIES="$2"; shift ;;
        --idle-runs) IDLE_RUNS="$2"; shift ;;
        --seed) SEED="$2"; shift ;;
        --no-build) BUILD=0 ;;
        -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
log() { echo "[bench-concurrent] $*" >&2; }
die() { echo "bench-concurrent: $*" >&2; exit 1; }
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
CACHE="${RECALL_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recall-bench}"
mkdir -p "$CACHE"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/recall-concurrent.XXXXXX")"
INDEX_PID=""
cleanup() {
    [ -n "$INDEX_PID" ] && kill "$INDEX_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

cd "$ROOT"
if [ "$BUILD" = 1 ]; then
    log "building the release binary and the index bench helper"
    cargo build --release --bin recall --quiet
fi
BENCH_BIN="$(cargo bench --bench index --no-run --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*/deps/index-[^"]*"' | tail -1 | cut -d'"' -f4)"
[ -n "$BENCH_BIN" ] && [ -x "$BENCH_BIN" ] || die "cannot build/find the index bench binary"
RECALL="$TARGET_DIR/release/recall"
[ -x "$RECALL" ] || die "no $RECALL (run without --no-build)"

gen() { # gen MB -> prints the corpus dir (the same cache names as bench-index.sh)
    local dir="$CACHE/claude-${1}mb-seed$SEED"
    log "corpus $dir"
    "$BENCH_BIN" generate --out "$dir" --seed "$SEED" --bytes "$(($1 * 1000000))" >"$WORK/gen.json"
    echo "$dir"
}
BASE="$(gen "$BASE_MB")"
LOAD="$(gen "$MB")"
HOME_DIR="$WORK/home"
log "indexing the base corpus ($BASE_MB MB)"
"$RECALL" --home "$HOME_DIR" --project bench index --json "$BASE" >"$WORK/base.json" 2>"$WORK/base.err" \
    || { cat "$WORK/base.err" >&2; die "indexing the base corpus failed"; }

# Seeded queries: 12 words of 5+ letters from the base corpus text.
# (`yes SEED` as shuf's byte source: the same draw for the same seed.)
seeded() { yes "recall-$SEED"; }
find "$BASE" -type f -name '*.jsonl' | sort >"$WORK/files.txt"
head -20 "$WORK/files.txt" | xargs cat | sed 's/\\[nt]/ /g' | grep -oE '\b[a-z]{5,}\b' >"$WORK/words.txt"
shuf -n "$((QUERIES * 12))" --random-source=<(seeded) "$WORK/words.txt" \
    | paste -d' ' $(printf -- '- %.0s' $(seq 1 12)) >"$WORK/queries.txt"
mapfile -t QS <"$WORK/queries.txt"
[ "${#QS[@]}" -ge 1 ] || die "no queries drawn from $BASE"

# run_one I OUTFILE: one query, appends "ms status locked" to OUTFILE.
run_one() {
    local q="${QS[$(($1 % ${#QS[@]}))]}" t0 t1 code=0
    t0=$EPOCHREALTIME
    "$RECALL" --home "$HOME_DIR" --project bench query --format prompt "$q" >/dev/null 2>"$WORK/q.err" || code=$?
    t1=$EPOCHREALTIME
    local locked=0
    grep -qi "locked" "$WORK/q.err" && locked=1
    awk -v a="$t0" -v b="$t1" -v c="$code" -v l="$locked" 'BEGIN { printf "%.3f %d %d\n", (b - a) * 1000, c, l }' >>"$2"
}

log "idle: $IDLE_RUNS queries"
: >"$WORK/idle.txt"
for i in $(seq 0 $((IDLE_RUNS - 1))); do run_one "$i" "$WORK/idle.txt"; done

log "load: recall index of $MB MB into the same project, queries until it ends"
: >"$WORK/load.txt"
START=$EPOCHREALTIME
"$RECALL" --home "$HOME_DIR" --project bench index --json "$LOAD" >"$WORK/load-index.json" 2>"$WORK/load-index.err" &
INDEX_PID=$!
i=0
while kill -0 "$INDEX_PID" 2>/dev/null; do
    run_one "$i" "$WORK/load.txt"
    i=$((i + 1))
done
INDEX_CODE=0
wait "$INDEX_PID" || INDEX_CODE=$?
INDEX_PID=""
INDEX_SECS="$(awk -v a="$START" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')"
[ "$INDEX_CODE" = 0 ] || { tail -5 "$WORK/load-index.err" >&2; log "the index job exited $INDEX_CODE"; }

# stats FILE -> "runs p50 p95 p99 max failed locked"
stats() {
    awk '{ print $1 }' "$1" | sort -g | awk '{ a[NR] = $1 } END {
        n = NR;
        printf "%d %.1f %.1f %.1f %.1f", n, a[int(n * 0.50 + 0.999)], a[int(n * 0.95 + 0.999)], a[int(n * 0.99 + 0.999)], a[n] }'
    awk '$2 != 0 && $2 != 1 { f++ } $3 == 1 { l++ } END { printf " %d %d\n", f, l }' "$1"
}
read -r IN I50 I95 I99 IMAX IF IL < <(stats "$WORK/idle.txt")
read -r LN L50 L95 L99 LMAX LF LL < <(stats "$WORK/load.txt")
RATIO="$(awk -v a="$L99" -v b="$I99" 'BEGIN { printf "%.2f", a / b }')"
MET="$(awk -v r="$RATIO" -v f="$((LF + IF))" -v l="$((LL + IL))" 'BEGIN { print (r <= 3 && f == 0 && l == 0) ? "yes" : "no" }')"
CHUNKS="$(grep -o '"chunks":[0-9]*' "$WORK/load-index.json" | head -1 | cut -d: -f2 || true)"
echo
echo "## Query latency under a concurrent \`recall index\` of $MB MB"
echo
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'); base project: $BASE_MB MB indexed; ${#QS[@]} queries of 12 words; \`recall query --format prompt\`, one at a time, whole-process wall time."
echo
echo "| phase | runs | p50 ms | p95 ms | p99 ms | max ms | failed | locked |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
echo "| idle | $IN | $I50 | $I95 | $I99 | $IMAX | $IF | $IL |"
echo "| during \`recall index\` ($MB MB, ${CHUNKS:-?} chunks, ${INDEX_SECS} s, exit $INDEX_CODE) | $LN | $L50 | $L95 | $L99 | $LMAX | $LF | $LL |"
echo
echo "p99 ratio (load / idle): **$RATIO** (target ≤ 3, with 0 failed and 0 locked): $MET"
