#!/usr/bin/env bash
# Install round trip: the installed Tessera package is usable on its own.
#
#   round_trip.sh <source dir> <build dir> [extra cmake arguments for the example projects...]
#
#  1. cmake --install the (already built) main build into a fresh prefix;
#  2. build examples/plugin-out-of-tree against that prefix and install the naive plugin;
#  3. build examples/embed against that prefix;
#  4. run tessera-embed with the example's tessera.toml, pointed at the installed naive plugin, with
#     no TESSERA_* variable set: the "cpu" backend must come from <prefix>/lib/tessera/plugins.
# Everything lives under <build dir>/install-test, wiped at the start.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 <source dir> <build dir> [cmake args...]" >&2
  exit 2
fi
source_dir=$(cd "$1" && pwd -P)
build_dir=$(cd "$2" && pwd -P)
shift 2
extra_args=("$@")

work="$build_dir/install-test"
prefix="$work/prefix"
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
libdir=${libdir:-lib}
step() { echo; echo "=== $*"; }
fail() { echo "FAILED: $*" >&2; exit 1; }

# Nothing may come from the environment: the installed files alone must do.
while IFS= read -r name; do unset "$name"; done < <(compgen -e | grep '^TESSERA_' || true)

rm -rf "$work"
mkdir -p "$work"

step "install Tessera into $prefix"
cmake --install "$build_dir" --prefix "$prefix"
[[ -f "$prefix/$libdir/tessera/plugins/libtessera-backend-cpu.so" ]] || fail "backend-cpu plugin was not installed"
[[ -f "$prefix/$libdir/tessera/plugins/libtessera-backend-meta.so" ]] || fail "backend-meta plugin was not installed"

configure() {  # configure <source> <build> [args...]
  cmake -G "Unix Makefiles" -S "$1" -B "$2" -DCMAKE_PREFIX_PATH="$prefix" "${extra_args[@]}" "${@:3}"
}

step "build the out-of-tree plugins (naive backend, block-cyclic placement, hierarchical all_reduce, the minimal plugins)"
configure "$source_dir/examples/plugin-out-of-tree" "$work/naive-build" -DCMAKE_INSTALL_LIBDIR=lib
cmake --build "$work/naive-build" -j2
cmake --install "$work/naive-build" --prefix "$work/naive-prefix"
naive_dir="$work/naive-prefix/lib/tessera/plugins"
for plugin in $(sed -n 's/^#   \([a-z-]*\)  .*\.\(c\|cpp\) .*/\1/p' "$source_dir/examples/plugin-out-of-tree/CMakeLists.txt"); do
  [[ -f "$naive_dir/libtessera-$plugin.so" ]] || fail "$plugin was not installed"
  # The installed tessera tool, with no configuration, must accept each one.
  "$prefix/bin/tessera" plugins --load "$naive_dir/libtessera-$plugin.so" | grep -q "^accepted: $plugin " ||
    fail "the installed tessera does not accept $plugin"
done
# The installed conformance suite passes on the installed CPU backend and on the example backend
# (which provides a few ops: the rest are skipped, visibly).
"$prefix/bin/tessera-conformance" --backend cpu > "$work/conformance-cpu.txt" || fail "tessera-conformance failed on cpu"
"$prefix/bin/tessera-conformance" --backend "$naive_dir/libtessera-backend-naive.so" > "$work/conformance-naive.txt" ||
  fail "tessera-conformance failed on the naive example backend"
grep -q "SKIP sub: not provided by naive" "$work/conformance-naive.txt" || fail "the naive backend's skips are not shown"
[[ -f "$prefix/share/doc/tessera/sdk/README.md" && -f "$prefix/share/doc/tessera/sdk/KERNELS.md" ]] ||
  fail "the SDK's authoring guide and kernel catalogue were not installed"

step "build the embed example"
configure "$source_dir/examples/embed" "$work/embed-build"
cmake --build "$work/embed-build" -j2

step "run tessera-embed"
# The example's own tessera.toml, its search_path pointed at the installed naive plugin.
mkdir -p "$work/run"
sed "s|^search_path = .*|search_path = [\"$naive_dir\"]|" "$source_dir/examples/embed/tessera.toml" \
  > "$work/run/tessera.toml"
grep -qF "search_path = [\"$naive_dir\"]" "$work/run/tessera.toml" || fail "could not set search_path"
set +e
"$work/embed-build/tessera-embed" "$work/run/tessera.toml" > "$work/run/output.txt" 2>&1
status=$?
set -e
cat "$work/run/output.txt"
[[ $status -eq 0 ]] || fail "tessera-embed exited with status $status"

step "check the output"
expect() { grep -qF -- "$1" "$work/run/output.txt" || fail "the output lacks: $1"; }
expect "on backend 'naive':"
expect "on backend 'cpu':"
expect "backend-naive 0.1.0 from $naive_dir/libtessera-backend-naive.so: backend 'naive'"
# backend-cpu must be the installed copy, found beside the installed libtessera.
expect "  backend-cpu "
expect "from $prefix/$libdir/tessera/plugins/libtessera-backend-cpu.so: backend 'cpu'"
expect "backends 'naive' and 'cpu' agree"
# And the host must have run on the installed libtessera, not the build tree's.
resolved=$(ldd "$work/embed-build/tessera-embed" | grep -F "libtessera.so")
[[ "$resolved" == *"=> $prefix/$libdir/libtessera.so"* ]] ||
  fail "tessera-embed does not resolve libtessera.so from $prefix/$libdir: $resolved"

step "run the API contract program (collectives, meshes, DTensors from installed plugins)"
"$work/embed-build/spec-contract" || fail "spec-contract failed against the installed package"

echo; echo "install round trip: OK"
