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
# The bad-input campaign (issue 15): every family of hostile input against the
# release binaries, each within 20 s and 8 GiB, must end in a located
# diagnostic (or, for valid input, a success); about 5 s.
cargo build --release -q -p tritonc -p triton-opgen
python3 scripts/bad_input_campaign.py
