#!/usr/bin/env bash
# Regenerates tests/golden/fingerprints.txt and tests/golden/scenarios/ from the current simulator — deliberately, after a change in
# simulated behaviour has been checked and is intended. Shows the diff afterwards.
#   tools/update-golden.sh [BUILD_DIR]      (default: build/)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[[ -x $build/tests/ttsim_tests ]] || { echo "no $build/tests/ttsim_tests; build first (tools/build.sh)" >&2; exit 1; }
TTSIM_UPDATE_GOLDEN=1 "$build/tests/ttsim_tests" "[fingerprints]" >/dev/null
# The shipped scenarios' tables and results.csv (tests/cli/shipped_scenarios.sh).
TTSIM_UPDATE_GOLDEN=1 bash tests/cli/shipped_scenarios.sh "$PWD/$build/ttsim" "$PWD" >/dev/null
git --no-pager diff --stat -- tests/golden || true
echo "updated tests/golden/fingerprints.txt and tests/golden/scenarios/"
