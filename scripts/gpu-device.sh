#!/usr/bin/env bash
# On the device machine (scripts/gpu-carry-deps.sh prepared .debs/): unpacks the carried packages,
# then runs scripts/gpu-check.sh for the H200 (sm_90). Everything printed also goes to
# $OUT/device.log. The image has its own Boost 1.83 without the graph library and g++ 13, whose
# newer warnings CI's g++ 12 does not give: the build uses the carried Boost 1.74 and keeps warnings
# as warnings (TESSERA_WERROR=OFF); CI stays -Werror.
set -uo pipefail
cd "$(dirname "$0")/.."
exec > >(tee "${OUT:-.}/device.log") 2>&1
head -2 /etc/os-release; g++ --version | head -1; nvcc --version | tail -1
for deb in .debs/*.deb; do
  name=$(basename "$deb")
  case "$name" in
    libgfortran5_* | libquadmath0_*)  # the image's own (newer) runtime, when it has one
      if ldconfig -p | grep -q "${name%%_*}"; then continue; fi ;;
  esac
  dpkg -x "$deb" / || echo "gpu-device.sh: could not unpack $name"
done
# Debian's alternatives would point the linker at OpenBLAS's pthread build; dpkg -x sets none.
echo /usr/lib/x86_64-linux-gnu/openblas-pthread > /etc/ld.so.conf.d/zz-tessera-openblas.conf
ldconfig
export TESSERA_GPU_CMAKE_ARGS="-DTESSERA_WERROR=OFF -DBoost_DIR=/usr/lib/x86_64-linux-gnu/cmake/Boost-1.74.0 \
-DOpenBLAS_DIR=/usr/lib/x86_64-linux-gnu/openblas-pthread/cmake/openblas"
timeout 480 bash scripts/gpu-check.sh "${1:-90}"
status=$?
echo "gpu-device.sh: gpu-check.sh exited with $status"
exit "$status"
