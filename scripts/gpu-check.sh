#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU (docs/gpu.md):
# builds Tessera with the CUDA backend in build-gpu/, then
#   1. `tessera plugins`: backend-cuda must be accepted (its init finds the device);
#   2. `tessera-conformance --backend cuda`: every kernel against the CPU backend;
#   3. `tessera tour` with the cuda backend as the default: the tutorial scenarios;
#   4. bench_cuda: sgemm 4096 vs cuBLAS, 64 MiB all_reduce on 8 ranks vs device memcpy, per-op cost.
# Stops at the first failure. Everything printed also goes to $OUT/gpu-check.log when OUT is set
# (the device tool brings that folder back). Needs the packages of scripts/install-deps.sh and the
# CUDA toolkit; a machine without network must have them already. About 5 minutes on 16 cores.
#   scripts/gpu-check.sh [CUDA architectures, default: native]
set -euo pipefail
cd "$(dirname "$0")/.."

log="${OUT:-build-gpu}/gpu-check.log"
mkdir -p "$(dirname "$log")"
exec > >(tee "$log") 2>&1

architectures="${1:-native}"
echo "== gpu-check.sh: $(date -u +%FT%TZ) on $(hostname)"
if ! nvidia-smi -L; then
  echo "gpu-check.sh: nvidia-smi sees no GPU here; this check needs one" >&2
  exit 1
fi
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"

echo "== build (CUDA architectures: $architectures)"
# TESSERA_GPU_CMAKE_ARGS: extra configure arguments (scripts/gpu-device.sh passes its package dirs).
# shellcheck disable=SC2086
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_BUILD_CUDA=ON ${TESSERA_GPU_CMAKE_ARGS:-} \
  -DCMAKE_CUDA_ARCHITECTURES="$architectures" -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_EXAMPLES=ON >/dev/null
cmake --build build-gpu -j"$(nproc)" --target tessera_cli tessera_conformance tessera-backend-cuda bench_cuda

# The checks must not depend on whoever runs them.
unset TESSERA_CONFIG TESSERA_PLUGIN_PATH TESSERA_THREADS TESSERA_COLL TESSERA_TRACE

echo "== 1. plugins"
build-gpu/bin/tessera plugins
build-gpu/bin/tessera plugins --load backend-cuda  # exit status 1 when its init refuses

echo "== 2. conformance on cuda"
build-gpu/bin/tessera-conformance --backend cuda

echo "== 3. tutorial scenarios with cuda as the default backend"
config="$(mktemp --suffix=.toml)"
trap 'rm -f "$config"' EXIT
printf '[backend]\ndefault = "cuda"\n' > "$config"
TESSERA_CONFIG="$config" build-gpu/bin/tessera tour

echo "== 4. benchmarks"
build-gpu/bin/bench_cuda --benchmark_min_time=0.5

echo "== gpu-check.sh: passed"
