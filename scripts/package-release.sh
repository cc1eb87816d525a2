#!/usr/bin/env bash
# Build and package one release binary: what .github/workflows/release.yml
# runs on each platform, and what `.ci/run` runs here for this machine's
# target (the release workflow's dry run).
#
#   bash scripts/package-release.sh [TARGET]    # default: this machine's
#
# Writes dist/recall-<version>-<target>.tar.gz (the stripped binary, README,
# the docs) and its .sha256, and fails when the binary is over 32 MB (the
# release profile strips it: about 22 MB with candle, which `recall model`
# needs, against over 100 MB unstripped) or, for this machine's target,
# does not run.
set -euo pipefail
cd "$(dirname "$0")/.."

host=$(rustc -vV | sed -n 's/^host: //p')
target=${1:-$host}
version=$(cargo pkgid --locked -p recall | sed 's/.*[#@]//')
max_bytes=$((32 * 1024 * 1024))

echo "== building recall $version for $target"
cargo build --release --locked --bin recall --target "$target"
bin="${CARGO_TARGET_DIR:-target}/$target/release/recall"

size=$(wc -c <"$bin")
echo "== $bin: $((size / 1024 / 1024)) MB ($size bytes)"
if [ "$size" -gt "$max_bytes" ]; then
    echo "error: $bin is $size bytes, over the 32 MB a stripped release stays under; check [profile.release] in Cargo.toml" >&2
    exit 1
fi
if [ "$target" = "$host" ]; then
    "$bin" --version
fi

name="recall-$version-$target"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name" dist
cp "$bin" README.md ARCHITECTURE.md "$stage/$name/"
cp -r docs "$stage/$name/docs"
tar -C "$stage" -czf "dist/$name.tar.gz" "$name"
if command -v sha256sum >/dev/null; then
    (cd dist && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
else
    (cd dist && shasum -a 256 "$name.tar.gz" >"$name.tar.gz.sha256") # macOS
fi
echo "== dist/$name.tar.gz ($(wc -c <"dist/$name.tar.gz") bytes)"
cat "dist/$name.tar.gz.sha256"
