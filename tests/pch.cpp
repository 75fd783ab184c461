// The suite with no cases that compiles the other suites' shared precompiled header
// (tests/CMakeLists.txt); it is built, never run.
