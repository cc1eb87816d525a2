#!/usr/bin/env bash
# Install the launchers the end-to-end suite drives (tests/it/launchers)
# from npm, pinned, into a folder (default: target/launchers), when they
# are not there and working yet. `.ci/run` runs it; run it yourself to run
# those tests outside CI:
#
#   bash scripts/install-launchers.sh [DIR]
#   RECALL_TEST_LAUNCHERS=DIR cargo test --test it launchers::
set -euo pipefail
cd "$(dirname "$0")/.."

DIR="${1:-${CARGO_TARGET_DIR:-$PWD/target}/launchers}"
LAUNCHER_PKGS=(@anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0 @google/gemini-cli@0.61.0)

working() {
    for bin in claude codex gemini; do
        "$DIR/node_modules/.bin/$bin" --version >/dev/null 2>&1 || return 1
    done
}

if working; then
    exit 0
fi
if ! command -v npm >/dev/null; then
    echo "== installing nodejs and npm (the launchers' runtime; apt-get needs root)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
echo "== installing the launchers from npm into $DIR: ${LAUNCHER_PKGS[*]}"
# No install scripts (one builds a native module the suite does not use);
# Claude Code's own only puts its platform's binary, an npm dependency,
# in place of its placeholder, so it is run by hand.
npm install --silent --no-audit --no-fund --ignore-scripts --prefix "$DIR" "${LAUNCHER_PKGS[@]}"
node "$DIR/node_modules/@anthropic-ai/claude-code/install.cjs"
working || {
    echo "error: a launcher in $DIR/node_modules/.bin does not run (\`<launcher> --version\` failed)" >&2
    exit 1
}
