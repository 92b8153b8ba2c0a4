#!/usr/bin/env bash
# Installs every Debian 12 package ttsim needs to build, test, fuzz, benchmark and plot. Idempotent; run as root.
set -euo pipefail
packages=(
  build-essential cmake ninja-build          # toolchain
  libboost-graph-dev                         # topology graphs and shortest paths
  libyaml-cpp-dev                            # scenario files
  libtbb-dev                                 # parallel sweeps
  libnlopt-cxx-dev libnlopt-dev              # calibration (derivative-free optimisation)
  nlohmann-json3-dev                         # JSON output
  libfmt-dev                                 # text formatting (fmt::format)
  libeigen3-dev                              # linear algebra (calibration's parameter covariance)
  catch2                                     # unit tests (Catch2 v2)
  libbenchmark-dev                           # benchmark programs
  libopenmpi-dev openmpi-bin                 # sweeps and plans over MPI ranks (mpirun)
  clang libclang-rt-14-dev                   # libFuzzer targets and sanitizers
  gnuplot-nox                                # plots (PNG and SVG)
  python3                                    # test helpers (JSON checks)
  chromium                                   # report.html test: headless rendering (tests/cli/report_html.sh)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
