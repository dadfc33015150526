#!/usr/bin/env bash
# Installs the pinned Python host contraagent 0.9.2 (PyPI) into a virtual environment at
# conformance/peers/python, for the test in which its unmodified omp RPC backend drives
# `musewire agent` (drivers/cli/tests/agent_contraagent.rs). contraagent needs Python >= 3.12:
# the first of $CONTRAAGENT_PYTHON, python3.14..python3.12 on PATH and pyenv's installed
# 3.12+ versions that runs is used (pyenv is not asked to download anything). Idempotent: does
# nothing when the pinned version is already there. Prints the venv's python.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv="$here/python"
want="0.9.2"

installed() {
  [ -x "$venv/bin/python" ] &&
    [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("contraagent"))' 2>/dev/null)" = "$want" ]
}

# A Python >= 3.12 interpreter, or nothing.
find_python() {
  local candidates=()
  [ -n "${CONTRAAGENT_PYTHON:-}" ] && candidates+=("$CONTRAAGENT_PYTHON")
  candidates+=(python3.14 python3.13 python3.12)
  local root="${PYENV_ROOT:-$HOME/.pyenv}"
  if command -v pyenv >/dev/null 2>&1; then root=$(pyenv root); fi
  for dir in $(ls -d "$root"/versions/3.1[2-9]* 2>/dev/null | sort -rV); do
    candidates+=("$dir/bin/python3")
  done
  for python in "${candidates[@]}"; do
    if "$python" -c 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; then
      command -v "$python" 2>/dev/null || echo "$python"
      return 0
    fi
  done
  return 1
}

if ! installed; then
  python=$(find_python) || {
    echo "install-python.sh: no Python >= 3.12 found (set CONTRAAGENT_PYTHON)" >&2
    exit 1
  }
  rm -rf "$venv"
  "$python" -m venv "$venv"
  for attempt in 1 2 3 4; do
    if "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "contraagent==$want"; then break; fi
    echo "install-python.sh: pip install failed (attempt $attempt), retrying" >&2
    sleep $((attempt * 5))
  done
fi
installed || { echo "install-python.sh: contraagent $want not installed" >&2; exit 1; }
echo "contraagent: $venv/bin/python"
