#!/usr/bin/env bash
# Before a GPU check through the device tool (run here, on the Debian 12 development machine): the
# device image (Ubuntu 24.04 with CUDA, no network) lacks Tessera's C++ dependencies, so this
# downloads their Debian packages into .debs/ (about 36 MB; ignored by git through
# .git/info/exclude) for the run to carry. Then, on the device:
#   run(command="bash scripts/gpu-device.sh", carry=[".debs"])
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.debs/' .git/info/exclude 2>/dev/null || echo '/.debs/' >> .git/info/exclude
mkdir -p .debs
cd .debs
# The packages of install-deps.sh that the CUDA build needs, with the libraries they pull in that
# the image does not have (Boost 1.74's graph and its regex/serialization/test parts, Boost.Context, OpenBLAS's
# pthread flavour and its Fortran runtime).
apt-get download \
  libboost-dev libboost1.74-dev libboost-graph-dev libboost-graph1.74-dev libboost-graph1.74.0 \
  libboost-regex1.74-dev libboost-regex1.74.0 libboost-serialization1.74-dev libboost-serialization1.74.0 \
  libboost-test1.74-dev libboost-test1.74.0 libicu72 \
  libboost-context-dev libboost-context1.74-dev libboost-context1.74.0 \
  libfmt-dev libfmt9 libspdlog-dev libspdlog1.10 \
  libopenblas-dev libopenblas-pthread-dev libopenblas0 libopenblas0-pthread libgfortran5 libquadmath0 \
  libtomlplusplus-dev libtomlplusplus3 nlohmann-json3-dev libdlpack-dev libcli11-dev \
  libbenchmark-dev libbenchmark1debian
echo "gpu-carry-deps.sh: $(ls ./*.deb | wc -l) packages in .debs/ ($(du -sh . | cut -f1))"
