#include "checks.hpp"

#include <cstdio>

namespace transport_test {
namespace {

int process = -1;
int failures = 0;

}  // namespace

void set_process(int index) { process = index; }
int failure_count() { return failures; }

void expect(bool ok, const std::string& what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "[process %d] FAILED: %s\n", process, what.c_str());
  std::fflush(stderr);
}

void expect_ok(const Outcome& outcome, const std::string& what) {
  expect(outcome.status == TESSERA_OK, what + ": status " + std::to_string(outcome.status) + " (" +
                                           outcome.message + "), expected TESSERA_OK");
}

void expect_error(const Outcome& outcome, tessera_status status, std::initializer_list<std::string> parts,
                  const std::string& what) {
  expect(outcome.status == status, what + ": status " + std::to_string(outcome.status) + " (" +
                                       outcome.message + "), expected " + std::to_string(status));
  for (const std::string& part : parts)
    expect(outcome.message.find(part) != std::string::npos,
           what + ": message '" + outcome.message + "' does not contain '" + part + "'");
}

void note(const std::string& what) {
  std::printf("[process %d] %s\n", process, what.c_str());
  std::fflush(stdout);
}

}  // namespace transport_test
