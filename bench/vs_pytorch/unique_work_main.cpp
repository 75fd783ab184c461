// bench_unique_work: each compare.py case against the unique work it contains (harness.hpp,
// unique_work_cases.cpp). The design's limit rule holds a simulated program to 1.5x of it.
#include "harness.hpp"

int main(int argc, char** argv) { return vs_pytorch::run_unique_work_main(argc, argv); }
