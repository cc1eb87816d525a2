#!/usr/bin/env bash
# What recall's hooks add to one turn of each real launcher (Claude Code,
# Codex, Gemini CLI): the same non-interactive turn with recall installed
# and without, against a fake model on loopback that answers at once
# (scripts/launcher_fake_model.py), so a turn is the launcher's own time
# plus what its hooks take.
#
#   bash scripts/bench-launchers.sh [--runs N] [--hook-runs N] [--only LIST]
#                                   [--recall-bin PATH] [--no-build] [--keep]
#
# Target (the issue): the hooks add at most 50 ms median to a turn. A
# benchmark, not a timed test: absolute times drift on a loaded machine;
# the setups are interleaved so that drift hits all of them alike.
#
# 1. Builds the release `recall` (or takes --recall-bin) and copies it to
#    the work folder as `recall`, first on PATH: the hook commands the
#    install writes call it by that name, and a rebuild while this runs
#    changes nothing measured.
# 2. Takes the launchers from $RECALL_TEST_LAUNCHERS/node_modules/.bin
#    (default target/launchers): claude, codex, gemini (--only claude,codex
#    picks some). A missing one is skipped, with the npm command for it.
# 3. For each launcher, three setups, each its own private HOME,
#    RECALL_HOME and git project (one commit), the launcher pointed at the
#    fake, and the same memory (one record, `deploy`, and the four small
#    sessions of testdata/{recall,demo}/sessions indexed):
#      without    recall not installed;
#      hooks      `recall hook install --LAUNCHER --yes --no-backfill`, then
#                 its MCP server taken out again: the hooks alone;
#      hooks+mcp  the install as it writes it: the hooks and the MCP server
#                 the launcher starts at every session.
#    Each setup has one untimed warm-up turn (the launcher's first-run work;
#    with hooks, its session is indexed), is then saved, and every timed
#    turn starts from a fresh copy at the same path: all turns of a setup
#    see the same state.
# 4. Times --runs (default 9) turns per setup, interleaved (A B C, then
#    C B A, ...): `claude -p`, `codex exec` or `gemini -p` with the prompt
#    "How do we deploy the service?", stdin /dev/null, spawn to exit with
#    bash's $EPOCHREALTIME. A turn must exit 0 and print the fake's answer.
#    The fake logs each turn's requests: the record's text ("make
#    ship-it") must reach the model in every turn with recall and in none
#    without; the table says how many did.
# 5. --hook-runs (default 3; 0 skips) more turns of `hooks`, untimed, with
#    a `recall` wrapper first on PATH timing each hook process: the median
#    milliseconds of each event's hook and its calls per turn.
# 6. Prints a Markdown table: the median turn of each setup, its
#    difference from `without` and the ratio. --keep keeps the work folder
#    (setups, each turn's request log, raw times).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS=9
HOOK_RUNS=3
ONLY="claude,codex,gemini"
RECALL_BIN=""
BUILD=1
KEEP=0
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS="$2"; shift ;;
        --hook-runs) HOOK_RUNS="$2"; shift ;;
        --only) ONLY="$2"; shift ;;
        --recall-bin) RECALL_BIN="$2"; shift ;;
        --no-build) BUILD=0 ;;
        --keep) KEEP=1 ;;
        -h|--help) sed -n '2,47p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done

log() { echo "[bench-launchers] $*" >&2; }
die() { echo "bench-launchers: $*" >&2; exit 1; }

PROMPT="How do we deploy the service?"
RECORD="Deploys go through make ship-it from the release branch."
ANSWER="Fake answer: deploy with the fake."
SESSIONS=("$ROOT"/testdata/recall/sessions/*.jsonl "$ROOT"/testdata/demo/sessions/*)
MODES=(without hooks hooks+mcp)
LAUNCHERS="${RECALL_TEST_LAUNCHERS:-$ROOT/target/launchers}"
LBIN="$LAUNCHERS/node_modules/.bin"
NPM="npm install --ignore-scripts --prefix ${RECALL_TEST_LAUNCHERS:-target/launchers} @anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0 @google/gemini-cli@0.61.0"

# --- recall -------------------------------------------------------------------
cd "$ROOT"
if [ -z "$RECALL_BIN" ]; then
    if [ "$BUILD" = 1 ]; then
        log "building the release recall"
        cargo build --release --quiet --bin recall
    fi
    RECALL_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/recall"
fi
[ -x "$RECALL_BIN" ] || die "no recall at $RECALL_BIN (build it, or pass --recall-bin)"
command -v node >/dev/null || die "node is not on PATH (the launchers need it)"

W="$(mktemp -d "${TMPDIR:-/tmp}/recall-bench-launchers.XXXXXX")"
FAKE=""
cleanup() {
    local rc=$?
    [ -z "$FAKE" ] || kill "$FAKE" 2>/dev/null || true
    if [ "$KEEP" = 1 ]; then log "kept $W"; else rm -rf "$W"; fi
    exit "$rc"
}
trap cleanup EXIT
mkdir -p "$W/bin" "$W/hookbin" "$W/logs"
cp "$RECALL_BIN" "$W/bin/recall"
BASE_PATH="$W/bin:$LBIN:$(dirname "$(command -v node)"):/usr/local/bin:/usr/bin:/bin"

# The wrapper for step 5: times each `recall ... hook ...` process (the
# payload is read first, so the launcher's writing it is not counted) and
# appends "<event> <microseconds>" to $W/hooktimes.txt.
cat >"$W/hookbin/recall" <<EOF
#!/usr/bin/env bash
case " \$* " in *" hook "*) ;; *) exec "$W/bin/recall" "\$@" ;; esac
payload=\$(cat)
t0=\$EPOCHREALTIME
printf '%s' "\$payload" | "$W/bin/recall" "\$@"
rc=\$?
t1=\$EPOCHREALTIME
event=\$(printf '%s' "\$payload" | grep -o '"hook_event_name": *"[A-Za-z]*"' | head -1 | grep -o '[A-Za-z]*"\$' | tr -d '"')
echo "\$event \$(( \${t1/[.,]/} - \${t0/[.,]/} ))" >>"$W/hooktimes.txt"
exit \$rc
EOF
chmod +x "$W/hookbin/recall"

# --- the fake model -------------------------------------------------------------
python3 "$ROOT/scripts/launcher_fake_model.py" --port-file "$W/port" --log "$W/fake.jsonl" \
    --text "$ANSWER" 2>"$W/fake.err" &
FAKE=$!
for _ in $(seq 100); do [ -s "$W/port" ] && break; sleep 0.05; done
[ -s "$W/port" ] || die "the fake model did not start: $(cat "$W/fake.err")"
PORT="$(cat "$W/port")"
URL="http://127.0.0.1:$PORT"

# ENV: the whole environment of a launcher (or recall) run in setup $1,
# nothing inherited; $2 replaces PATH.
set_env() {
    local d="$1"
    ENV=(env -i -C "$d/proj" "PATH=${2:-$BASE_PATH}" "HOME=$d/home" "RECALL_HOME=$d/recall"
        "CODEX_HOME=$d/home/.codex" LANG=C.UTF-8 USER=bench
        "ANTHROPIC_BASE_URL=$URL" ANTHROPIC_API_KEY=dummy DISABLE_TELEMETRY=1
        DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
        "GOOGLE_GEMINI_BASE_URL=$URL" GEMINI_API_KEY=dummy GEMINI_CLI_TRUST_WORKSPACE=true)
}

# TURN: the command of one turn of launcher $1.
set_turn() {
    case "$1" in
        claude) TURN=("$LBIN/claude" -p "$PROMPT") ;;
        codex) TURN=("$LBIN/codex" exec "$PROMPT") ;;
        gemini) TURN=("$LBIN/gemini" -p "$PROMPT") ;;
    esac
}

# turn LAUNCHER DIR NAME [PATH]: one turn in setup DIR; sets US (wall
# microseconds) and RECALLED (requests holding the record's text); the
# fake's log of it is kept as $W/logs/NAME.jsonl.
turn() {
    local l="$1" d="$2" name="$3" t0 t1 rc=0
    set_env "$d" "${4:-}"
    set_turn "$l"
    rm -f "$W/fake.jsonl"
    t0=$EPOCHREALTIME
    timeout 300 "${ENV[@]}" "${TURN[@]}" </dev/null >"$W/out" 2>"$W/err" || rc=$?
    t1=$EPOCHREALTIME
    US=$(( ${t1/[.,]/} - ${t0/[.,]/} ))
    touch "$W/fake.jsonl"
    mv "$W/fake.jsonl" "$W/logs/$name.jsonl"
    if [ "$rc" != 0 ] || ! grep -qF "$ANSWER" "$W/out"; then
        tail -20 "$W/err" >&2
        die "$name: $l exited $rc without the fake's answer (requests: $W/logs/$name.jsonl; --keep keeps them)"
    fi
    RECALLED=$(grep -cF "make ship-it" "$W/logs/$name.jsonl" || true)
}

# setup LAUNCHER MODE DIR: a fresh setup, warmed up once and saved as DIR.tmpl.
setup() {
    local l="$1" mode="$2" d="$3"
    mkdir -p "$d/home" "$d/recall" "$d/proj"
    git -C "$d/proj" init -q
    git -C "$d/proj" -c user.name=bench -c user.email=bench@example.com commit -q --allow-empty -m init
    case "$l" in
        codex)
            mkdir -p "$d/home/.codex"
            cat >"$d/home/.codex/config.toml" <<EOF
model = "fake-model"
model_provider = "fake"

[model_providers.fake]
name = "Fake"
base_url = "$URL/v1"
wire_api = "responses"

[features]
plugins = false
EOF
            ;;
        gemini)
            mkdir -p "$d/home/.gemini"
            echo '{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false}}' \
                >"$d/home/.gemini/settings.json"
            ;;
    esac
    set_env "$d"
    "${ENV[@]}" recall record add --category decisions --key deploy "$RECORD" >/dev/null
    "${ENV[@]}" recall index --kind session "${SESSIONS[@]}" >"$d.index.log" 2>&1 \
        || die "recall index failed: $(cat "$d.index.log")"
    if [ "$mode" != without ]; then
        local flag="--$l"
        [ "$l" = claude ] && flag=--claude-code
        "${ENV[@]}" recall hook install "$flag" --yes --no-backfill >"$d.install.log" 2>&1 \
            || die "recall hook install $flag failed: $(cat "$d.install.log")"
    fi
    if [ "$mode" = hooks ]; then
        case "$l" in
            claude) rm "$d/proj/.mcp.json" ;;
            gemini) python3 - "$d/proj/.gemini/settings.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
del s["mcpServers"]["recall"]
s["mcpServers"] or s.pop("mcpServers")
json.dump(s, open(sys.argv[1], "w"), indent=2)
EOF
                ;;
            codex) python3 - "$d/home/.codex/config.toml" <<'EOF'
import re, sys
out, skip = [], False
for line in open(sys.argv[1]):
    if line.startswith("["):
        skip = re.match(r"\[mcp_servers\.recall[.\]]", line) is not None
    if not skip:
        out.append(line)
open(sys.argv[1], "w").write("".join(out))
EOF
                ;;
        esac
    fi
    turn "$l" "$d" "$l-$mode-warmup"
    cp -a "$d" "$d.tmpl"
}

# reset DIR: DIR as saved after its warm-up (a process the last turn left
# behind may still be writing: try again once).
reset() {
    rm -rf "$1" 2>/dev/null || { sleep 0.5; rm -rf "$1"; }
    cp -a "$1.tmpl" "$1"
}

# --- the runs ---------------------------------------------------------------------
LOAD_START="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
T0=$(date +%s)
: >"$W/times.txt"
: >"$W/hooks.txt"
: >"$W/versions.txt"
SKIPPED=()
for l in ${ONLY//,/ }; do
    case "$l" in claude|codex|gemini) ;; *) die "--only: unknown launcher $l" ;; esac
    if [ ! -x "$LBIN/$l" ]; then
        SKIPPED+=("$l")
        log "$l: not in $LBIN, skipped; install the launchers with: $NPM"
        continue
    fi
    mkdir -p "$W/version-home"
    echo "$l $(timeout 60 env -i PATH="$BASE_PATH" HOME="$W/version-home" "$LBIN/$l" --version 2>/dev/null </dev/null \
        | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -1)" >>"$W/versions.txt"
    for mode in "${MODES[@]}"; do
        log "$l: setting up $mode"
        setup "$l" "$mode" "$W/$l-$mode"
    done
    order=("${MODES[@]}")
    for i in $(seq 1 "$RUNS"); do
        line="$l round $i:"
        for mode in "${order[@]}"; do
            reset "$W/$l-$mode"
            turn "$l" "$W/$l-$mode" "$l-$mode-$i"
            echo "$l $mode $i $US $RECALLED" >>"$W/times.txt"
            line+=" $mode $((US / 1000)) ms"
        done
        log "$line"
        # Reverse the order for the next round.
        for ((a = 0, b = ${#order[@]} - 1; a < b; a++, b--)); do
            t="${order[a]}"; order[a]="${order[b]}"; order[b]="$t"
        done
    done
    for i in $(seq 1 "$HOOK_RUNS"); do
        reset "$W/$l-hooks"
        : >"$W/hooktimes.txt"
        turn "$l" "$W/$l-hooks" "$l-hooktimes-$i" "$W/hookbin:$BASE_PATH"
        sed "s/^/$l /" "$W/hooktimes.txt" >>"$W/hooks.txt"
    done
done
T1=$(date +%s)
[ -s "$W/times.txt" ] || die "no launcher to measure (install them with: $NPM)"

# --- the table --------------------------------------------------------------------
echo
echo "## What the hooks add to a launcher's turn ($(date -u +%Y-%m-%dT%H:%MZ), $RUNS turns per setup)"
echo
python3 - "$W/times.txt" "$W/hooks.txt" "$W/versions.txt" "$HOOK_RUNS" <<'EOF'
import collections, statistics, sys
times, hooks, versions = collections.defaultdict(dict), collections.defaultdict(list), {}
for line in open(sys.argv[1]):
    l, mode, i, us, recalled = line.split()
    times[l].setdefault(mode, {})[int(i)] = (int(us) / 1000, int(recalled))
for line in open(sys.argv[2]):
    l, event, us = line.split()
    hooks[l].append((event, int(us) / 1000))
for line in open(sys.argv[3]):
    l, _, v = line.strip().partition(" ")
    versions[l] = v
hook_runs = int(sys.argv[4])
med = lambda xs: statistics.median(xs)

print("| launcher | without ms | hooks ms | Δ hooks | hooks / without | hooks+MCP ms | Δ hooks+MCP | hooks+MCP / without | turns whose requests held the record |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
notes = []
for l, by_mode in times.items():
    m = {mode: med([t for t, _ in runs.values()]) for mode, runs in by_mode.items()}
    base = m["without"]
    held = ", ".join(f"{mode} {sum(1 for _, r in runs.values() if r)}/{len(runs)}"
                     for mode, runs in by_mode.items())
    cells = [f"{l} {versions.get(l, '')}".strip(), f"{base:.0f}"]
    for mode in ("hooks", "hooks+mcp"):
        cells += [f"{m[mode]:.0f}", f"{m[mode] - base:+.0f} ms", f"{m[mode] / base:.2f}"]
    print("| " + " | ".join(cells) + f" | {held} |")
    # The same difference taken round by round (each round ran the three
    # setups back to back), less exposed to drift between rounds.
    paired = {mode: med([by_mode[mode][i][0] - by_mode["without"][i][0] for i in by_mode[mode]])
              for mode in ("hooks", "hooks+mcp")}
    spread = ", ".join(f"{mode} {min(t for t, _ in runs.values()):.0f}–{max(t for t, _ in runs.values()):.0f}"
                       for mode, runs in by_mode.items())
    notes.append(f"- {l}: round-by-round difference (median) hooks {paired['hooks']:+.0f} ms, "
                 f"hooks+MCP {paired['hooks+mcp']:+.0f} ms; range (ms) {spread}")
    if hooks.get(l):
        per = collections.OrderedDict()
        for event, ms in hooks[l]:
            per.setdefault(event, []).append(ms)
        total = sum(sum(v) for v in per.values()) / hook_runs
        each = ", ".join(f"{e} {med(v):.0f} ms" + (f" ×{len(v) / hook_runs:g}" if len(v) != hook_runs else "")
                         for e, v in per.items())
        notes.append(f"  recall's hook processes per turn ({hook_runs} turns, medians): {each}; "
                     f"all of them {total:.0f} ms per turn")
print()
print("\n".join(notes))
EOF
cat <<EOF

Each turn: one \`claude -p\` / \`codex exec\` / \`gemini -p\` "$PROMPT" (stdin /dev/null)
against a fake model on loopback that answers at once, timed spawn to exit; the setups
interleaved, every turn from the same saved state. Δ: median minus the median without
recall; target: hooks Δ <= 50 ms. hooks = the hooks \`recall hook install\` writes, its MCP
server taken out; hooks+MCP = the install as written. The record column counts turns whose
requests to the model held the record's text (the hooks ran and their context arrived).
$([ ${#SKIPPED[@]} = 0 ] || echo "Skipped (not installed): ${SKIPPED[*]}; install with: $NPM")
load average at start: $LOAD_START; at end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'); $(nproc) CPUs; measured in $((T1 - T0)) s
EOF
