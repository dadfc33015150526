#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 30), one after another.
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
# Crashes are left in fuzz/artifacts/TARGET/; the corpus grows in fuzz/corpus/TARGET/, seeded
# from fuzz/seeds/TARGET/ where that exists (mcp_client: core/tests/fuzz_bodies/mcp.rs; bridge_session: the ACP transcripts, made by
# core/tests/fuzz_bodies/acp.rs).
set -euo pipefail
seconds=${1:-30}
cd "$(dirname "$0")"
targets=$(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^musewire-fuzz$')
cargo +nightly fuzz build -O $targets >/dev/null 2>&1 || cargo +nightly fuzz build -O
for t in $targets; do
  mkdir -p "corpus/$t"
  for seed in seeds/"$t"/*; do
    if [ -f "$seed" ] && [ ! -e "corpus/$t/${seed##*/}" ]; then cp "$seed" "corpus/$t/"; fi
  done
  echo "fuzz/run.sh: $t for ${seconds}s"
  cargo +nightly fuzz run -O "$t" "corpus/$t" -- \
    -max_total_time="$seconds" -rss_limit_mb=4096 -max_len=1100000 -print_final_stats=1 2>&1 |
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|==|SUMMARY|Done)|ERROR|panicked" || true
  if [ -n "$(ls -A "artifacts/$t" 2>/dev/null)" ]; then
    echo "fuzz/run.sh: $t found a crash: $(ls "artifacts/$t")" >&2
    exit 1
  fi
  echo "fuzz/run.sh: $t ok, corpus $(ls "corpus/$t" | wc -l) inputs"
done
