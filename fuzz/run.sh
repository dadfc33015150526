#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 30), JOBS at a time (default: the number of
# CPUs, at most 4; `FUZZ_JOBS` overrides it). Each target is one libFuzzer process on one core,
# so on two cores two at a time take half the wall time for the same fuzzing per target.
# Needs the nightly toolchain only: the targets are built here with the flags cargo-fuzz 0.13
# gives `cargo fuzz build -O -s none` (its src/project.rs) but two, and run as they are (what
# `cargo fuzz run` does), so CI compiles no cargo-fuzz (a minute) and no build waits on one
# core. The two: cargo-fuzz's `-Ccodegen-units=1` on every crate (one core per crate: the fuzz
# build took 408 s, with 16 units 231 s, for 75-92% of the executions a second) and its
# line-tables override (Cargo.toml's `debug = 1` does the same). `cargo fuzz` still works on
# these targets (cmin, tmin, a run of one).
# Crashes are left in fuzz/artifacts/TARGET/; the corpus grows in fuzz/corpus/TARGET/, seeded
# from fuzz/seeds/TARGET/ where that exists (mcp_client: core/tests/fuzz_bodies/mcp.rs;
# bridge_session: the ACP transcripts, made by core/tests/fuzz_bodies/acp.rs). Each target's
# report is printed whole when it ends.
#
# No sanitizer (`-s none`): the core is `#![forbid(unsafe_code)]`, so AddressSanitizer finds
# nothing there that a panic would not, and it slows every run (with it, the bridge_session unit
# CI once reported slow took 1.05 s of CPU; without it and with the harness's MCP-15 check
# searching bytes as bytes, 0.18 s).
# What fails the run: a crash (a panic: a broken invariant), a leak, an out-of-memory, or a unit
# over TIMEOUT seconds (default 60; libFuzzer's `timeout-` artifact). A unit over 10 s of wall
# time is listed as slow (`slow-unit-`) but does not fail: on a busy 2-core machine the wall time
# says more of the machine than of the unit; run it alone (`target/.../TARGET FILE`) to see.
set -euo pipefail
seconds=${1:-30}
timeout=${TIMEOUT:-60}
cd "$(dirname "$0")"
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -gt 4 ] && jobs=4
[ "$jobs" -lt 1 ] && jobs=1
targets=$(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^musewire-fuzz$')
triple=$(rustc +nightly -vV | sed -n 's/^host: //p')
# With --target, RUSTFLAGS reach the targets' crates and not build scripts or proc macros.
RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing \
-Cllvm-args=-simplifycfg-branch-fold-threshold=0 -Cllvm-args=-sanitizer-coverage-stack-depth" \
  cargo +nightly build --release --target "$triple" --bins
bin=target/$triple/release
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# One target's run, its report written to $logs/TARGET.
fuzz_one() {
  local t=$1
  {
    echo "fuzz/run.sh: $t for ${seconds}s"
    "$bin/$t" -artifact_prefix="artifacts/$t/" "corpus/$t" \
      -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=4096 -max_len=1100000 -print_final_stats=1 2>&1 |
      grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|==|SUMMARY|Done|Slowest unit)|ERROR|panicked" || true
  } >"$logs/$t" 2>&1
}

for t in $targets; do
  mkdir -p "corpus/$t" "artifacts/$t"
  for seed in seeds/"$t"/*; do
    if [ -f "$seed" ] && [ ! -e "corpus/$t/${seed##*/}" ]; then cp "$seed" "corpus/$t/"; fi
  done
done

running=0
for t in $targets; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait

crashed=0
for t in $targets; do
  cat "$logs/$t"
  slow=$(ls "artifacts/$t" 2>/dev/null | grep '^slow-unit-' || true)
  if [ -n "$slow" ]; then
    echo "fuzz/run.sh: $t: a unit took over 10 s of wall time (not a failure): $slow"
  fi
  failed=$(ls "artifacts/$t" 2>/dev/null | grep -v '^slow-unit-' || true)
  if [ -n "$failed" ]; then
    echo "fuzz/run.sh: $t found a crash: $failed" >&2
    crashed=1
  else
    echo "fuzz/run.sh: $t ok, corpus $(ls "corpus/$t" | wc -l) inputs"
  fi
done
exit "$crashed"
