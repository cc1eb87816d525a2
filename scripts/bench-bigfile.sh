#!/usr/bin/env bash
# Peak memory and wall time of `recall index` on one large transcript
# (issue 26 item 15: memory grew with the size of one session file).
#
#   bash scripts/bench-bigfile.sh [--sizes "20 77 155"] [--before BIN]
#                                 [--reps N] [--seed S] [--no-build]
#
# 1. Builds the release `recall` (the binary measured as "after") and the
#    `index` bench helper, which writes one seeded Claude Code session of
#    each size in MB (`generate-one`; same seed and size: the same bytes)
#    into $RECALL_BIGFILE_DIR (default /tmp/recall-bigfile, kept and reused
#    between runs).
# 2. For the --before binary (optional: a build of the commit to compare
#    with, e.g. `git worktree add /tmp/base main && (cd /tmp/base && cargo
#    build --release)`, then --before /tmp/base/target/release/recall) and
#    the after binary, for each size, --reps times (default 3), into a fresh
#    home each time:
#      /usr/bin/time -v recall --home H --project p index --json FILE
#    and takes the median wall time and the largest peak RSS.
# 3. Floors, measured in the same run with each binary: the peak RSS of
#    `recall --version` and of indexing a 20 KB transcript.
# 4. Prints one Markdown table: peak RSS, RSS / file size, RSS above the
#    small-file floor, wall time and MB/s per size and binary; then the
#    after/before ratios of wall time and peak RSS, and whether both runs
#    wrote the same number of passages (chunks in `index --json`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SIZES="20 77 155"
BEFORE=""
REPS=3
SEED=42
BUILD=1
while [ $# -gt 0 ]; do
    case "$1" in
        --sizes) SIZES="$2"; shift ;;
        --before) BEFORE="$2"; shift ;;
        --reps) REPS="$2"; shift ;;
        --seed) SEED="$2"; shift ;;
        --no-build) BUILD=0 ;;
        -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
log() { echo "[bench-bigfile] $*" >&2; }
die() { echo "bench-bigfile: $*" >&2; exit 1; }
[ -x /usr/bin/time ] || die "needs GNU time at /usr/bin/time"
[ -z "$BEFORE" ] || [ -x "$BEFORE" ] || die "--before $BEFORE is not an executable"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
DATA="${RECALL_BIGFILE_DIR:-/tmp/recall-bigfile}"
mkdir -p "$DATA"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/recall-bigfile-run.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

cd "$ROOT"
if [ "$BUILD" = 1 ]; then
    log "building the release binary and the index bench helper"
    cargo build --release --bin recall --quiet
fi
AFTER="$TARGET_DIR/release/recall"
[ -x "$AFTER" ] || die "no $AFTER (run without --no-build)"
BENCH_BIN="$(cargo bench --bench index --no-run --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*/deps/index-[^"]*"' | tail -1 | cut -d'"' -f4)"
[ -n "$BENCH_BIN" ] && [ -x "$BENCH_BIN" ] || die "cannot build/find the index bench binary"

# --- files ------------------------------------------------------------------
file_for() { echo "$DATA/claude-${1}mb-seed$SEED.jsonl"; }
for mb in $SIZES 0.02; do
    f="$(file_for "$mb")"
    if [ ! -s "$f" ]; then
        bytes="$(awk -v m="$mb" 'BEGIN { printf "%d", m * 1000000 }')"
        log "writing $f"
        "$BENCH_BIN" generate-one --out "$f.tmp" --bytes "$bytes" --seed "$SEED" >/dev/null
        mv "$f.tmp" "$f"
    fi
done
TINY="$(file_for 0.02)"

# --- measuring --------------------------------------------------------------
# measure BIN ARGS... -> "peak_kb wall_s" of one run (stdout to $WORK/out.json)
measure() {
    local bin="$1"; shift
    /usr/bin/time -v "$bin" "$@" >"$WORK/out.json" 2>"$WORK/time.txt" \
        || { cat "$WORK/time.txt" >&2; die "$bin $* failed"; }
    local kb wall
    kb="$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$WORK/time.txt")"
    wall="$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$WORK/time.txt" \
        | awk -F: '{ if (NF == 3) print $1 * 3600 + $2 * 60 + $3; else print $1 * 60 + $2 }')"
    echo "$kb $wall"
}
# index BIN FILE -> "peak_kb wall_s chunks" (max RSS, median wall over REPS)
index_file() {
    local bin="$1" file="$2" kbs="" walls="" chunks=""
    for _ in $(seq "$REPS"); do
        local home="$WORK/home"
        rm -rf "$home"
        read -r kb wall < <(measure "$bin" --home "$home" --project p index --json "$file")
        kbs="$kbs $kb"; walls="$walls $wall"
        chunks="$(grep -o '"chunks": *[0-9]*' "$WORK/out.json" | grep -o '[0-9]*$')"
    done
    local kb wall
    kb="$(echo $kbs | tr ' ' '\n' | sort -n | tail -1)"
    wall="$(echo $walls | tr ' ' '\n' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')"
    echo "$kb $wall $chunks"
}

declare -A RSS WALL CHUNKS FLOOR_V FLOOR_T
BINS="after"
[ -n "$BEFORE" ] && BINS="before after"
for which in $BINS; do
    bin="$AFTER"; [ "$which" = before ] && bin="$BEFORE"
    read -r kb _ < <(measure "$bin" --version)
    FLOOR_V[$which]="$kb"
    read -r kb _ _ < <(index_file "$bin" "$TINY")
    FLOOR_T[$which]="$kb"
    for mb in $SIZES; do
        log "$which: index $(basename "$(file_for "$mb")")"
        read -r kb wall chunks < <(index_file "$bin" "$(file_for "$mb")")
        RSS[$which,$mb]="$kb"; WALL[$which,$mb]="$wall"; CHUNKS[$which,$mb]="$chunks"
    done
done

# --- table ------------------------------------------------------------------
mb_of() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
echo
echo "Peak RSS of \`recall --home H --project p index --json FILE\` (largest of $REPS runs; wall time: median)"
echo
echo "| binary | file | peak RSS MB | RSS / file | RSS - floor MB | wall s | MB/s | chunks |"
echo "|---|---|---|---|---|---|---|---|"
for which in $BINS; do
    for mb in $SIZES; do
        f="$(file_for "$mb")"
        size=$(stat -c %s "$f")
        kb=${RSS[$which,$mb]}; wall=${WALL[$which,$mb]}
        awk -v w="$which" -v mb="$mb" -v s="$size" -v kb="$kb" -v fl="${FLOOR_T[$which]}" \
            -v t="$wall" -v c="${CHUNKS[$which,$mb]}" 'BEGIN {
            printf "| %s | %s MB | %.1f | %.2f | %.1f | %.2f | %.1f | %s |\n",
                w, mb, kb / 1024, kb * 1024 / s, (kb - fl) / 1024, t, s / 1e6 / t, c }'
    done
    echo "| $which | floor: --version | $(mb_of "${FLOOR_V[$which]}") | | | | | |"
    echo "| $which | floor: 20 KB file | $(mb_of "${FLOOR_T[$which]}") | | | | | |"
done
if [ -n "$BEFORE" ]; then
    echo
    echo "| file | wall after / before | peak RSS after / before | same chunks |"
    echo "|---|---|---|---|"
    for mb in $SIZES; do
        awk -v mb="$mb" -v ta="${WALL[after,$mb]}" -v tb="${WALL[before,$mb]}" \
            -v ra="${RSS[after,$mb]}" -v rb="${RSS[before,$mb]}" \
            -v ca="${CHUNKS[after,$mb]}" -v cb="${CHUNKS[before,$mb]}" 'BEGIN {
            printf "| %s MB | %.2f | %.2f | %s |\n", mb, ta / tb, ra / rb, (ca == cb ? "yes" : "no: " cb " -> " ca) }'
    done
fi
