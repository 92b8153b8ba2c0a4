#!/usr/bin/env bash
# Regenerates tests/golden/fingerprints.txt from the current simulator — deliberately, after a change in
# simulated behaviour has been checked and is intended. Shows the diff afterwards.
#   tools/update-golden.sh [BUILD_DIR]      (default: build/)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[[ -x $build/ttsim_tests ]] || { echo "no $build/ttsim_tests; build first (tools/build.sh)" >&2; exit 1; }
TTSIM_UPDATE_GOLDEN=1 "$build/ttsim_tests" "[fingerprints]" >/dev/null
git --no-pager diff --stat -- tests/golden/fingerprints.txt || true
echo "updated tests/golden/fingerprints.txt"
