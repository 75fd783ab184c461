// bench_vs_pytorch: the Tessera side of compare.py (harness.hpp).
#include "harness.hpp"

int main(int argc, char** argv) { return vs_pytorch::run_main(argc, argv); }
