#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job: the default scenario (scenarios/default.yaml).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh
exec build/ttsim run scenarios/default.yaml "$@"
