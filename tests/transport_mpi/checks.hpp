// Plain checks for programs run under mpirun (doctest's runner does not fit a program whose
// processes must all reach the same collective calls): each failure is printed with the process
// that saw it, and main returns nonzero when there was any.
#pragma once

#include <initializer_list>
#include <string>

#include "tessera/sdk/status.h"

namespace transport_test {

// What a call into the transport table returned.
struct Outcome {
  tessera_status status = TESSERA_OK;
  std::string message;
};

void set_process(int index);  // for the failure lines
int failure_count();
void expect(bool ok, const std::string& what);
void expect_ok(const Outcome& outcome, const std::string& what);
// `outcome` failed with `status`, and its message contains every one of `parts`.
void expect_error(const Outcome& outcome, tessera_status status, std::initializer_list<std::string> parts,
                  const std::string& what);
// Prints "[process i] <what>" on stdout (progress, skips).
void note(const std::string& what);

}  // namespace transport_test
