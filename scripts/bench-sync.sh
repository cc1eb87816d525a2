#!/usr/bin/env bash
# Team memory figures, with PostgreSQL on loopback (started here, in a
# temporary folder, as the `postgres` user when run as root).
#
#   bash scripts/bench-sync.sh [--no-build] [--rounds N] [--no-beam]
#                              [--beam PATH] [--beam-questions N]
#                              [--fresh-only] [--fresh-records N]
#                              [--fresh-runs N] [--synth] [--synth-only]
#                              [--synth-mb N] [--synth-records N]
#                              [--synth-runs N]
#
# 1. Convergence: hosts A and B run `recall sync --watch --interval 0.5`;
#    A adds a record, and B is polled (`record get`) until it has it.
#    p50/p95 of write-to-visible over --rounds (default 20) records.
#    Target p95 <= 2 s.
# 2. No-op sync: `recall sync` with nothing to send or receive, p50 of 20
#    whole processes (start, connect, schema check, pull, push). Target
#    <= 50 ms. Beside it, the floor: psql connecting and running SELECT 1.
# 3. Throughput (BEAM merged, all 55 conversations): one host indexes all of
#    it (the floor: `recall index`'s passages per second, whole process);
#    then three hosts each index a third, and each syncs twice: every host
#    pushes its third and pulls the other two. Passages pushed and pulled
#    per second (each sync's own push and pull times, from `sync --json`)
#    against the floor. Target >= 0.5x.
# 4. Parity: BEAM merged budget recall asked on each of the three hosts
#    after sync (examples/eval, with each host's home as the workspace's
#    home) against the single host. Target within 0.002.
# 5. Hook cost: SessionStart hook p50 on a host with sync on (server up,
#    server stopped, server at an unroutable address) against the same
#    host with sync off, the two run in turns, 40 of each, timed in
#    microseconds. Target ratio of the medians <= 1.05.
# 6. Fresh host: a host holding --fresh-records (default 20,000) records
#    and all of BEAM merged pushes them; a fresh home then runs
#    `recall sync --init` and pulls everything, under /usr/bin/time -v:
#    wall time, passages/s, bytes written (File system outputs) against the
#    size of what it built (index.db and WAL, record files), peak RSS. The
#    floor: the same on a fresh home without the server, `recall index` of
#    the sessions plus the record scan of the same record files (`recall
#    reindex`), timed the same way; ratio = floor time / pull time. The
#    floor and the pull run in turns, --fresh-runs times each (default 5),
#    and the row gives their medians and each run's ratio: run minutes
#    apart on a shared machine, one of each swung 0.75x-1.45x.
#    Target >= 1.0x, bytes written <= 3x. --fresh-only runs only this.
# 7. Fresh host at 1,000,000 passages (--synth): the same as 6 over the
#    seeded synthetic Claude Code corpus (the `synth` generator through
#    benches/index.rs `generate`, seed 42, --synth-mb MB of transcripts,
#    default 4,500: about 1,000,000 passages in 8,910 sessions), with
#    --synth-records records (default 0), --synth-runs turns (default 1:
#    one turn is about 15 minutes). The corpus is cached in
#    $RECALL_BENCH_CACHE (default ~/.cache/recall-bench, 4.3 GB) as
#    bench-index.sh's are; the run needs about 20 GB more in /tmp (three
#    homes and the server), freed as soon as the row is measured.
#    --synth-only runs only this row; --fresh-only --synth runs 6 and 7.
#
# Absolute times drift on these machines: read the ratios.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=1 ROUNDS=20 BEAM=1 BEAM_PATH=../shared/data/beam/beam_100k_500k.json.gz QUESTIONS=""
FRESH=1 FRESH_ONLY=0 FRESH_RECORDS=20000 FRESH_RUNS=5
SYNTH=0 SYNTH_ONLY=0 SYNTH_MB=4500 SYNTH_RECORDS=0 SYNTH_RUNS=1
while [ $# -gt 0 ]; do
    case "$1" in
        --no-build) BUILD=0 ;;
        --rounds) ROUNDS="$2"; shift ;;
        --no-beam) BEAM=0; FRESH=0 ;;
        --beam) BEAM_PATH="$2"; shift ;;
        --beam-questions) QUESTIONS="$2"; shift ;;
        --fresh-only) FRESH_ONLY=1 ;;
        --fresh-records) FRESH_RECORDS="$2"; shift ;;
        --fresh-runs) FRESH_RUNS="$2"; shift ;;
        --synth) SYNTH=1 ;;
        --synth-only) SYNTH=1; SYNTH_ONLY=1 ;;
        --synth-mb) SYNTH_MB="$2"; shift ;;
        --synth-records) SYNTH_RECORDS="$2"; shift ;;
        --synth-runs) SYNTH_RUNS="$2"; shift ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

if [ "$BUILD" = 1 ]; then
    cargo build --release --quiet --bin recall --example eval
fi
if [ "$SYNTH" = 1 ]; then
    # The corpus generator: the index bench binary's `generate` mode
    # ($RECALL_BENCH_GEN names one already built).
    GEN="${RECALL_BENCH_GEN:-}"
    [ -n "$GEN" ] || GEN=$(cargo bench --bench index --no-run --message-format=json 2>/dev/null \
        | grep -o '"executable":"[^"]*/deps/index-[^"]*"' | tail -1 | cut -d'"' -f4)
    [ -n "$GEN" ] && [ -x "$GEN" ] || { echo "cannot build the index bench binary" >&2; exit 2; }
    SYNTH_DIR="${RECALL_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recall-bench}/claude-${SYNTH_MB}mb-seed42"
    mkdir -p "$(dirname "$SYNTH_DIR")"
    "$GEN" generate --out "$SYNTH_DIR" --seed 42 --bytes "$((SYNTH_MB * 1000000))" >&2
fi
W=$(mktemp -d /tmp/recall-bench-sync.XXXXXX)
chmod 755 "$W"
# Copies, so a rebuild while this runs changes nothing measured.
cp target/release/recall target/release/examples/eval "$W/"
R="$W/recall"
EVAL="$W/eval"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort | tail -1)
[ -x "$PGBIN/initdb" ] || { echo "PostgreSQL is not installed: apt-get install -y postgresql" >&2; exit 2; }
AS=""
[ "$(id -u)" = 0 ] && AS="runuser -u postgres --"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$W/pg"
[ -n "$AS" ] && chown postgres "$W/pg"
$AS "$PGBIN/initdb" -D "$W/pg/data" -U recall --auth=trust -E UTF8 --no-sync >/dev/null
pg() { $AS "$PGBIN/pg_ctl" -D "$W/pg/data" -o "-p $PORT -k $W/pg -c listen_addresses=127.0.0.1" -l "$W/pg/log" -w "$@" >/dev/null; }
pg start
WA="" WB=""
# Exits with the script's own status: the last command of an EXIT trap
# would otherwise be the exit status, and under `set -e` a failed kill of a
# watcher already gone ended the trap with 1.
cleanup() {
    local rc=$?
    [ -z "$WA" ] || kill $WA $WB 2>/dev/null || true
    pg -m immediate stop 2>/dev/null || true
    rm -rf "$W"
    exit "$rc"
}
trap cleanup EXIT
"$PGBIN/psql" -h "$W/pg" -p "$PORT" -U recall -d postgres -qc "CREATE DATABASE team"
URL="postgres://recall@127.0.0.1:$PORT/team"
export USER=bench

host() { local h="$1"; shift; "$R" --home "$W/$h" --project app "$@"; }

# percentiles of numbers on stdin (milliseconds)
pct() { python3 -c 'import sys,statistics as s; v=sorted(float(x) for x in sys.stdin if x.strip()); q=lambda p: v[min(len(v)-1, int(round(p*(len(v)-1))))]; print(f"{q(0.5):.0f} {q(0.95):.0f}")'; }
# Milliseconds from bash itself: a forked timer would add its own start-up
# to every figure.
now_ms() { local t=${EPOCHREALTIME/[.,]/}; echo $(( t / 1000 )); }
now_us() { local t=${EPOCHREALTIME/[.,]/}; echo $(( t )); }

# The median of the numbers given (the lower middle one of an even count).
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# Wall seconds, bytes written (MB) and peak RSS (MB) from `time -v` output.
time_wall() {
    awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0;
        for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$1"
}
time_written_mb() { awk -F': ' '/File system outputs/ { printf "%.0f", $2 * 512 / 1048576 }' "$1"; }
time_rss_mb() { awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$1"; }

# 6. A fresh host pulls the team memory; the floor indexes the same here.
# fresh_host DATA RECORDS TEAM RUNS: adds its rows to FRESH_TABLE and
# removes the homes it made.
fresh_host() {
    local data="$1" n="$2" team="$3" runs="$4" src="$W/fresh-src" floor="$W/fresh-floor" pull="$W/fresh-pull"
    "$R" --home "$src" --project fresh sync --init "$URL" --team "$team" >/dev/null 2>&1
    local pdir; pdir=$(ls -d "$src"/projects/fresh-*)
    python3 - "$pdir/records" "$n" <<'EOF'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(36)
words = ("deploy cache shard replica latency budget retry queue schema index token "
         "rollout canary flag service worker batch window quota region tenant").split()
cats = ["decisions", "procedures", "principles", "incidents", "preferences"]
for c in cats:
    os.makedirs(os.path.join(root, c), exist_ok=True)
for i in range(n):
    c = cats[i % len(cats)]
    body = " ".join(rng.choice(words) for _ in range(rng.randint(12, 40)))
    with open(os.path.join(root, c, f"fact-{i}.md"), "w") as f:
        f.write(f"---\nid: fact-{i}\nkey: fact-{i}\ncategory: {c}\nscope: project\nsource: manual\n"
                f"created: 2026-01-01T00:00:00Z\nupdated: 2026-01-01T00:00:00Z\n---\n\n"
                f"Fact {i} (item{i}): {body}\n")
EOF
    "$R" --home "$src" --project fresh index --kind session "$data" >/dev/null
    "$R" --home "$src" --project fresh sync >/dev/null
    # The floor and the pull, in turns, $runs times each: on a shared
    # machine the load of the moment then weighs on both alike. Medians.
    local i tf=() tp=() wp=() wf=() rp=() rf=() qdir
    for i in $(seq 1 "$runs"); do
        # The floor: the same work on a fresh home, without the server.
        rm -rf "$floor" "$pull"
        /usr/bin/time -v -o "$W/floor-index.time" "$R" --home "$floor" --project fresh index --kind session "$data" >/dev/null
        local fdir; fdir=$(ls -d "$floor"/projects/fresh-*)
        cp -r "$pdir/records" "$fdir/records"
        /usr/bin/time -v -o "$W/floor-records.time" "$R" --home "$floor" --project fresh reindex >/dev/null 2>&1
        # The pull.
        /usr/bin/time -v -o "$W/pull.time" "$R" --home "$pull" --project fresh sync --init "$URL" --team "$team" >/dev/null 2>"$W/pull.err" \
            || { cat "$W/pull.err" >&2; exit 1; }
        tf+=("$(python3 -c "print($(time_wall "$W/floor-index.time") + $(time_wall "$W/floor-records.time"))")")
        tp+=("$(time_wall "$W/pull.time")")
        wp+=("$(time_written_mb "$W/pull.time")")
        wf+=("$(( $(time_written_mb "$W/floor-index.time") + $(time_written_mb "$W/floor-records.time") ))")
        rp+=("$(time_rss_mb "$W/pull.time")")
        rf+=("$(time_rss_mb "$W/floor-index.time")")
        echo "fresh host, run $i of $runs: pull ${tp[-1]} s (${wp[-1]} MB written, ${rp[-1]} MB RSS); floor ${tf[-1]} s (${wf[-1]} MB written)" >&2
    done
    qdir=$(ls -d "$pull"/projects/fresh-*)
    FRESH_PASSAGES=$(sqlite3 "$qdir/index.db" "SELECT count(*) FROM chunks")
    FRESH_RECORDS_GOT=$(sqlite3 "$qdir/index.db" "SELECT count(*) FROM records")
    FRESH_RUNS=$runs
    FRESH_T_FLOOR=$(median "${tf[@]}")
    FRESH_T_PULL=$(median "${tp[@]}")
    FRESH_RATIOS=$(python3 -c "import sys; a=sys.argv[1:]; n=len(a)//2; print(' '.join(f'{float(f)/max(float(p),1e-9):.2f}' for f,p in zip(a[:n],a[n:])))" "${tf[@]}" "${tp[@]}")
    FRESH_W_PULL=$(median "${wp[@]}")
    FRESH_W_FLOOR=$(median "${wf[@]}")
    FRESH_SIZE=$(du -sm --apparent-size "$qdir" | cut -f1)
    FRESH_RSS=$(median "${rp[@]}")
    FRESH_RSS_FLOOR=$(median "${rf[@]}")
    echo "fresh host: $FRESH_RECORDS_GOT records, $FRESH_PASSAGES passages pulled in $FRESH_T_PULL s ($FRESH_W_PULL MB written, $FRESH_RSS MB RSS); floor $FRESH_T_FLOOR s ($FRESH_W_FLOOR MB written); built $FRESH_SIZE MB; ratio per run: $FRESH_RATIOS" >&2
    FRESH_TABLE+=$(fresh_rows)$'\n'
    rm -rf "$src" "$floor" "$pull"
}
FRESH_TABLE=""

fresh_rows() {
    printf '| fresh host pull: %d records + %d passages, `sync --init` (median of %d, in turns with the floor) | %.1f s, %.0f passages/s (%sx of index + record scan, %.1f s; per run %s) | >= 1.0x |\n' \
        "$FRESH_RECORDS_GOT" "$FRESH_PASSAGES" "$FRESH_RUNS" "$FRESH_T_PULL" "$(python3 -c "print($FRESH_PASSAGES / max($FRESH_T_PULL, 1e-9))")" \
        "$(ratio "$FRESH_T_FLOOR" "$FRESH_T_PULL")" "$FRESH_T_FLOOR" "$FRESH_RATIOS"
    printf '| ... bytes written / size built | %d MB / %d MB (%sx; floor %d MB) | <= 3x |\n' \
        "$FRESH_W_PULL" "$FRESH_SIZE" "$(ratio "$FRESH_W_PULL" "$FRESH_SIZE")" "$FRESH_W_FLOOR"
    printf '| ... peak RSS | %d MB (recall index: %d MB) | - |\n' "$FRESH_RSS" "$FRESH_RSS_FLOOR"
}

ratio() { python3 -c "print(f'{$1/max($2,1e-9):.2f}')"; }

beam_data() { # converts (and indexes once) BEAM merged in $W/ws0; prints the data folder
    local q=(); [ -n "$QUESTIONS" ] && q=(--limit-questions "$QUESTIONS")
    "$EVAL" beam "$BEAM_PATH" --merged --recall-bin "$R" --keep-home "$W/ws0" --summary "$W/s0.json" "${q[@]}" >/dev/null
    echo "$W/ws0/data/beam-merged"
}

synth_host() {
    echo "== 7. fresh host, synth corpus" >&2
    fresh_host "$SYNTH_DIR" "$SYNTH_RECORDS" bench/synth "$SYNTH_RUNS"
}

if [ "$FRESH_ONLY" = 1 ] || [ "$SYNTH_ONLY" = 1 ]; then
    if [ "$SYNTH_ONLY" = 0 ]; then
        echo "== 6. fresh host" >&2
        [ -n "$QUESTIONS" ] || QUESTIONS=1
        fresh_host "$(beam_data)" "$FRESH_RECORDS" bench/fresh "$FRESH_RUNS"
        rm -rf "$W/ws0"
    fi
    [ "$SYNTH" = 0 ] || synth_host
    echo
    echo "## recall sync bench: fresh host (PostgreSQL on loopback, $(nproc) cores)"
    echo
    echo "| figure | value | target |"
    echo "|---|---:|---|"
    printf '%s' "$FRESH_TABLE"
    exit 0
fi

echo "== 1. convergence (--watch --interval 0.5 on both hosts)" >&2
host a sync --init "$URL" --team bench/app >/dev/null 2>&1
host b sync --init "$URL" --team bench/app >/dev/null 2>&1
"$R" --home "$W/a" --project app sync --watch --interval 0.5 >/dev/null 2>&1 & WA=$!
"$R" --home "$W/b" --project app sync --watch --interval 0.5 >/dev/null 2>&1 & WB=$!
: > "$W/conv.txt"
for i in $(seq 1 "$ROUNDS"); do
    t0=$(now_ms)
    host a record add --category decisions --key "conv-$i" "convergence probe $i" >/dev/null
    until host b record get "conv-$i" >/dev/null 2>&1; do sleep 0.05; done
    echo $(( $(now_ms) - t0 )) >> "$W/conv.txt"
done
kill $WA $WB 2>/dev/null; wait $WA $WB 2>/dev/null || true
read CONV50 CONV95 < <(pct < "$W/conv.txt")

echo "== 2. no-op sync" >&2
host a sync >/dev/null; host a sync >/dev/null
: > "$W/noop.txt"
for i in $(seq 1 20); do
    t0=$(now_ms); host a sync >/dev/null; echo $(( $(now_ms) - t0 )) >> "$W/noop.txt"
done
read NOOP50 NOOP95 < <(pct < "$W/noop.txt")
# The floor: the smallest round trip a client can make, a new connection
# running `SELECT 1` (psql, the PostgreSQL client).
: > "$W/floor.txt"
for i in $(seq 1 20); do
    t0=$(now_ms); "$PGBIN/psql" -h 127.0.0.1 -p "$PORT" -U recall -d team -AtXc 'SELECT 1' >/dev/null; echo $(( $(now_ms) - t0 )) >> "$W/floor.txt"
done
read FLOOR50 FLOOR95 < <(pct < "$W/floor.txt")

echo "== 5. hook cost" >&2
payload='{"hook_event_name":"SessionStart","session_id":"s1","cwd":"/tmp"}'
# The hook with sync off and with sync on, run in turns so that the load of
# the moment weighs on both alike; microseconds, since the hook takes a few
# milliseconds and a millisecond step would be a fifth of it. Prints the
# p50 of each in ms and their ratio.
hook_pair() { # home, then env assignments for the sync-on runs
    local h="$1"; shift
    : > "$W/hook-off.txt"; : > "$W/hook-on.txt"
    for i in $(seq 1 40); do
        # Both through `env`, whose own exec is about a millisecond.
        t0=$(now_us); echo "$payload" | env "$R" --home "$W/off" --project app hook claude-code >/dev/null 2>&1; echo $(( $(now_us) - t0 )) >> "$W/hook-off.txt"
        t0=$(now_us); echo "$payload" | env "$@" "$R" --home "$W/$h" --project app hook claude-code >/dev/null 2>&1; echo $(( $(now_us) - t0 )) >> "$W/hook-on.txt"
    done
    python3 -c 'import sys,statistics as s
off=s.median(float(x) for x in open(sys.argv[1]) if x.strip())
on=s.median(float(x) for x in open(sys.argv[2]) if x.strip())
print(f"{off/1000:.1f} {on/1000:.1f} {on/off:.2f}")' "$W/hook-off.txt" "$W/hook-on.txt"
}
mkdir -p "$W/off"; cp -r "$W/a/." "$W/off/"; rm -f "$W/off/config.toml"
read HOOK_OFF HOOK_UP HOOK_UP_X < <(hook_pair a)
read HOOK_OFF_U HOOK_UNROUTABLE HOOK_UNROUTABLE_X < <(hook_pair a RECALL_SYNC_URL="postgres://recall@192.0.2.1:5432/team?connect_timeout=5")
pg -m immediate stop
read HOOK_OFF_D HOOK_DOWN HOOK_DOWN_X < <(hook_pair a)
pg start

if [ "$BEAM" = 1 ]; then
    echo "== 3-4. BEAM merged: one host, then three hosts through sync" >&2
    Q=(); [ -n "$QUESTIONS" ] && Q=(--limit-questions "$QUESTIONS")
    DATA=$(beam_data)
    PASSAGES=$(sqlite3 "$(ls -d "$W"/ws0/home/projects/beam-merged-*)/index.db" "SELECT count(*) FROM chunks" 2>/dev/null || echo 0)
    # The floor: indexing all of it once more on a fresh host, timed.
    t0=$(now_ms); "$R" --home "$W/floor" --project beam-merged index --kind session "$DATA" >/dev/null; T_INDEX=$(( $(now_ms) - t0 ))
    mapfile -t CONVS < <(ls "$DATA")
    for i in 1 2 3; do
        mkdir -p "$W/ws$i"; ln -s "$W/ws0/data" "$W/ws$i/data"; cp "$W/ws0/indexed-beam-merged.json" "$W/ws$i/"
        # Shared before it holds anything, so this first sync moves nothing.
        "$R" --home "$W/ws$i/home" --project beam-merged sync --init "$URL" --team bench/beam >/dev/null 2>&1
        part=(); for j in "${!CONVS[@]}"; do [ $(( j % 3 + 1 )) = "$i" ] && part+=("$DATA/${CONVS[$j]}"); done
        "$R" --home "$W/ws$i/home" --project beam-merged index --kind session "${part[@]}" >/dev/null
    done
    # Two rounds: each host pushes its third and pulls the other two. Each
    # sync reports the passages it moved and the time of each half.
    : > "$W/rounds.jsonl"
    for round in 1 2; do
        for i in 1 2 3; do
            "$R" --home "$W/ws$i/home" --project beam-merged sync --json >> "$W/rounds.jsonl"
        done
    done
    read PUSHED T_PUSH PULLED T_PULL < <(python3 -c '
import json, sys
t = [0, 0, 0, 0]
for line in open(sys.argv[1]):
    for s in json.loads(line)["scopes"]:
        if s["project"] == "bench/beam":
            t[0] += s["passages_pushed"]; t[1] += s["push_ms"]; t[2] += s["passages_pulled"]; t[3] += s["pull_ms"]
print(*t)' "$W/rounds.jsonl")
    echo "push: $PUSHED passages in $T_PUSH ms; pull: $PULLED in $T_PULL ms; index: $PASSAGES in $T_INDEX ms" >&2
    BR0=$(python3 -c "import json; print(json.load(open('$W/s0.json'))['budget_recall'])")
    PAR=""
    for i in 1 2 3; do
        "$EVAL" beam "$BEAM_PATH" --merged --recall-bin "$R" --keep-home "$W/ws$i" --summary "$W/s$i.json" "${Q[@]}" >/dev/null 2>&1
        PAR="$PAR $(python3 -c "import json; print(round(json.load(open('$W/s$i.json'))['budget_recall'], 4))")"
    done
    if [ "$FRESH" = 1 ]; then
        echo "== 6. fresh host" >&2
        fresh_host "$DATA" "$FRESH_RECORDS" bench/fresh "$FRESH_RUNS"
    fi
    INDEX_RATE=$(python3 -c "print($PASSAGES / ($T_INDEX / 1000))")
    PUSH_RATE=$(python3 -c "print($PUSHED / ($T_PUSH / 1000))")
    PULL_RATE=$(python3 -c "print($PULLED / ($T_PULL / 1000))")
fi
[ "$SYNTH" = 0 ] || synth_host

echo
echo "## recall sync bench (PostgreSQL on loopback, $(nproc) cores)"
echo
echo "| figure | value | target |"
echo "|---|---:|---|"
echo "| write on A to visible on B, p50 / p95 (--watch 0.5 s, $ROUNDS records) | ${CONV50} / ${CONV95} ms | p95 <= 2000 ms |"
echo "| no-op sync, p50 / p95 (whole process) | ${NOOP50} / ${NOOP95} ms | <= 50 ms |"
echo "| ... floor: psql -c 'SELECT 1', p50 / p95 | ${FLOOR50} / ${FLOOR95} ms ($(ratio "$NOOP50" "$FLOOR50")x) | - |"
echo "| SessionStart hook p50, sync off (run in turns with each row below) | ${HOOK_OFF} / ${HOOK_OFF_D} / ${HOOK_OFF_U} ms | - |"
echo "| ... sync on, server up | ${HOOK_UP} ms (${HOOK_UP_X}x) | <= 1.05x |"
echo "| ... sync on, server stopped | ${HOOK_DOWN} ms (${HOOK_DOWN_X}x) | <= 1.05x |"
echo "| ... sync on, server unroutable | ${HOOK_UNROUTABLE} ms (${HOOK_UNROUTABLE_X}x) | <= 1.05x |"
if [ "$BEAM" = 1 ]; then
    printf '| BEAM merged passages | %d |  |\n' "$PASSAGES"
    printf '| recall index (floor) | %.0f passages/s |  |\n' "$INDEX_RATE"
    printf '| push, 3 hosts | %.0f passages/s (%sx) | >= 0.5x |\n' "$PUSH_RATE" "$(ratio "$PUSH_RATE" "$INDEX_RATE")"
    printf '| pull, 3 hosts | %.0f passages/s (%sx) | >= 0.5x |\n' "$PULL_RATE" "$(ratio "$PULL_RATE" "$INDEX_RATE")"
    echo "| budget recall: single host / hosts 1-3 after sync | $(printf '%.4f' "$BR0") /$PAR | within 0.002 |"
fi
printf '%s' "$FRESH_TABLE"
