#!/usr/bin/env bash
# Sets up a fresh machine (scripts/setup.sh) and runs every test: unit and
# integration tests of the workspace, including the PTX checks of every test
# kernel with ptxas for sm_80 and sm_90. `.ci/run` calls this.
set -euo pipefail
cd "$(dirname "$0")/.."
PTXAS="$(bash scripts/setup.sh)"
export PTXAS
export LLVM_SYS_191_PREFIX=/usr/lib/llvm-19
cargo fmt --all -- --check
cargo test --workspace --release 2>&1
