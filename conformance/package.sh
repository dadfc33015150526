#!/usr/bin/env bash
# Would every publishable crate publish? `cargo publish --workspace --dry-run --locked` packages
# each crate without `publish = false`, in dependency order (a workspace dependency not yet on
# crates.io is taken from the package made before it), builds each package on its own from its
# .crate as crates.io would build it, and stops short of the upload. Then each package's file
# list (`cargo package --list`) is checked: no file over 1 MiB, nothing private (keys, env files,
# node_modules, build output). Fails when a crate would not publish. Usage:
# bash conformance/package.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

# The dry run verifies each package against the ones made before it through a local registry
# (target/package/tmp-registry). Cargo unpacks that registry's crates under
# $CARGO_HOME/registry/src/-HASH/ and never unpacks a name and version again once it is there,
# nor rebuilds a registry crate it has built: an earlier run's musewire-core 0.1.0 would be
# verified against in place of this one. Both go first.
cargo_home=${CARGO_HOME:-$HOME/.cargo}
for unpacked in "$cargo_home"/registry/src/-*/musewire-[0-9]* "$cargo_home"/registry/src/-*/musewire-[a-z]*-[0-9]*; do
  [ -d "$unpacked" ] && rm -rf "$unpacked"
done
rm -rf target/package

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# --allow-dirty: a developer's uncommitted work is packaged as it stands (CI's clone is clean).
cargo publish --workspace --dry-run --locked --allow-dirty 2>&1 | tee "$log"

max_bytes=$((1024 * 1024))
private='(^|/)(\.env[^/]*|\.git/.*|node_modules/.*|target/.*|[^/]*\.(pem|key|p12)|id_(rsa|ecdsa|ed25519)[^/]*|\.?credentials[^/]*)$'

crates=0
failed=0
# Each crate the dry run would have uploaded, with its folder; what goes into its package is
# `cargo package --list` (files cargo writes itself, such as Cargo.toml.orig, are not in the folder).
while read -r name version dir; do
  crates=$((crates + 1))
  files=0
  bytes=0
  list=$(cargo package --list --allow-dirty --locked -p "$name")
  while read -r file; do
    files=$((files + 1))
    if [[ "$file" =~ $private ]]; then
      echo "package: $name: $file looks private" >&2
      failed=1
    fi
    [ -f "$dir/$file" ] || continue
    size=$(stat -c %s "$dir/$file")
    bytes=$((bytes + size))
    if [ "$size" -gt "$max_bytes" ]; then
      echo "package: $name: $file is $size bytes (over $max_bytes)" >&2
      failed=1
    fi
  done <<<"$list"
  echo "package: $name $version: $files files, $bytes bytes before compression"
done < <(sed -n 's/^ *Uploading \([^ ]*\) \(v[^ ]*\) (\(.*\))$/\1 \2 \3/p' "$log")

if [ "$crates" -eq 0 ]; then
  echo "package: no crate was packaged" >&2
  exit 1
fi
if [ "$failed" -ne 0 ]; then
  exit 1
fi
echo "package: all $crates publishable crates would publish"
