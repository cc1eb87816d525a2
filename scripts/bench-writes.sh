#!/usr/bin/env bash
# How long a record write waits while `recall index` writes one large
# transcript into the same project (issue 26 item 7), against the same
# writes on an idle index.
#
#   bash scripts/bench-writes.sh [--mb N] [--idle-runs N] [--rounds N]
#                                [--seed S] [--recall BIN] [--no-build]
#
# 1. Builds the release `recall` and the `index` bench helper, which
#    generates one seeded synthetic Claude Code transcript of --mb (default
#    400) MB (cached in $RECALL_BIGFILE_DIR, default /tmp/recall-bigfile,
#    the same files as bench-bigfile.sh).
# 2. Idle: --idle-runs (default 30) `recall record add` of a new key into a
#    fresh project, one at a time: the floor.
# 3. Under load, --rounds (default 3) times: a fresh project, `recall index`
#    of the transcript (at the configured `index.nice`, default 19), and a
#    `record add` of a new key every 200 ms until the job ends.
# 4. Prints one Markdown table: runs, p50, p90, p99 and max of each phase,
#    failed writes, and the p99 and max of the load phase over the idle p50.
# Every write is timed as a whole process (spawn to exit) with bash's
# $EPOCHREALTIME. --recall BIN measures another build (for a before/after
# run, one after the other on the same machine state).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MB=400
IDLE_RUNS=30
ROUNDS=3
SEED=42
BUILD=1
RECALL=""
while [ $# -gt 0 ]; do
    case "$1" in
        --mb) MB="$2"; shift ;;
        --idle-runs) IDLE_RUNS="$2"; shift ;;
        --rounds) ROUNDS="$2"; shift ;;
        --seed) SEED="$2"; shift ;;
        --recall) RECALL="$2"; shift ;;
        --no-build) BUILD=0 ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
log() { echo "[bench-writes] $*" >&2; }
die() { echo "bench-writes: $*" >&2; exit 1; }
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
DATA="${RECALL_BIGFILE_DIR:-/tmp/recall-bigfile}"
mkdir -p "$DATA"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/recall-writes.XXXXXX")"
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
RECALL="${RECALL:-$TARGET_DIR/release/recall}"
[ -x "$RECALL" ] || die "no $RECALL (run without --no-build, or give --recall)"
FILE="$DATA/claude-${MB}mb-seed$SEED.jsonl"
if [ ! -s "$FILE" ]; then
    BENCH_BIN="$(cargo bench --bench index --no-run --message-format=json 2>/dev/null \
        | grep -o '"executable":"[^"]*/deps/index-[^"]*"' | tail -1 | cut -d'"' -f4)"
    [ -n "$BENCH_BIN" ] && [ -x "$BENCH_BIN" ] || die "cannot build/find the index bench binary"
    log "generating $FILE"
    "$BENCH_BIN" generate-one --out "$FILE.tmp" --bytes "$((MB * 1000000))" --seed "$SEED" >/dev/null
    mv "$FILE.tmp" "$FILE"
fi

# write_one HOME KEY OUTFILE: one record add, appends "ms status" to OUTFILE.
write_one() {
    local t0 t1 code=0
    t0=$EPOCHREALTIME
    "$RECALL" --home "$1" --project bench record add --category decisions --key "$2" \
        "A decision written while the index is busy." >/dev/null 2>>"$WORK/writes.err" || code=$?
    t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" -v c="$code" 'BEGIN { printf "%.3f %d\n", (b - a) * 1000, c }' >>"$3"
}

log "idle: $IDLE_RUNS record writes"
: >"$WORK/idle.txt"
for i in $(seq 1 "$IDLE_RUNS"); do write_one "$WORK/idle-home" "idle-$i" "$WORK/idle.txt"; done

: >"$WORK/load.txt"
INDEX_SECS=""
for r in $(seq 1 "$ROUNDS"); do
    log "round $r of $ROUNDS: recall index of $MB MB, a record write every 200 ms"
    home="$WORK/home-$r"
    write_one "$home" "seed" "$WORK/seed.txt"
    start=$EPOCHREALTIME
    "$RECALL" --home "$home" --project bench index --json "$FILE" >"$WORK/index.json" 2>"$WORK/index.err" &
    INDEX_PID=$!
    i=0
    while kill -0 "$INDEX_PID" 2>/dev/null; do
        write_one "$home" "load-$r-$i" "$WORK/load.txt"
        i=$((i + 1))
        sleep 0.2
    done
    code=0
    wait "$INDEX_PID" || code=$?
    INDEX_PID=""
    [ "$code" = 0 ] || { tail -5 "$WORK/index.err" >&2; die "the index job exited $code"; }
    INDEX_SECS="$INDEX_SECS $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')"
    rm -rf "$home"
done

# stats FILE -> "runs p50 p90 p99 max failed"
stats() {
    awk '{ print $1 }' "$1" | sort -g | awk '{ a[NR] = $1 } END {
        n = NR;
        printf "%d %.1f %.1f %.1f %.1f", n, a[int(n * 0.50 + 0.999)], a[int(n * 0.90 + 0.999)], a[int(n * 0.99 + 0.999)], a[n] }'
    awk '$2 != 0 { f++ } END { printf " %d\n", f }' "$1"
}
read -r IN I50 I90 I99 IMAX IF < <(stats "$WORK/idle.txt")
read -r LN L50 L90 L99 LMAX LF < <(stats "$WORK/load.txt")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
echo
echo "## Record writes during a \`recall index\` of one $MB MB transcript"
echo
echo "\`$RECALL\`; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'); index job wall time per round (s):$INDEX_SECS."
echo
echo "| phase | runs | p50 ms | p90 ms | p99 ms | max ms | failed |"
echo "|---|---:|---:|---:|---:|---:|---:|"
echo "| idle | $IN | $I50 | $I90 | $I99 | $IMAX | $IF |"
echo "| during \`recall index\` | $LN | $L50 | $L90 | $L99 | $LMAX | $LF |"
echo
echo "Load p99 / idle p50: **$(ratio "$L99" "$I50")x**; load max / idle p50: **$(ratio "$LMAX" "$I50")x**; failed writes: $((IF + LF))."
[ ! -s "$WORK/writes.err" ] || { echo; echo "Messages of failed writes:"; sort "$WORK/writes.err" | uniq -c | head -5 | sed 's/^/    /'; }
