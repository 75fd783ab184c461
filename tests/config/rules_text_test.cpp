// Collective rule text ([collectives] algorithms, TESSERA_COLL, dist::set_algorithms): inputs the
// fuzzer (tests/fuzz/rules_fuzzer.cpp) found, and the edges around them. Each case leaves the
// rules as it found them.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {

struct RestoreRules {
  std::string rules = ts::dist::algorithms();
  ~RestoreRules() { ts::dist::set_algorithms(rules); }
};

std::string rules_error(const std::string& rules) {
  try {
    ts::dist::set_algorithms(rules);
  } catch (const ts::ConfigError& e) {
    return e.what();
  }
  FAIL_CHECK("no ConfigError for '" << rules << "'");
  return {};
}

}  // namespace

// 2^63 - 1 bytes is the largest size; with a suffix, the largest count is that over the unit.
TEST_CASE("a rule size whose unit makes it overflow is rejected, not wrapped around") {
  const RestoreRules restore;
  // Found by the fuzzer: 60000088430623 x 2^30 overflowed int64 (undefined behaviour, then a
  // garbage range).
  const std::string message = rules_error("all_gather[0-00060000088430623G]:rd");
  CAPTURE(message);
  CHECK(message.find("size '00060000088430623G' is too large") != std::string::npos);

  CHECK(rules_error("all_gather[8589934592G-]:rd").find("too large") != std::string::npos);  // 2^33 GiB
  CHECK(rules_error("all_gather[0-9007199254740992K]:rd").find("too large") !=
        std::string::npos);                                                                      // 2^53 KiB
  CHECK(rules_error("all_gather[0-8796093022208M]:rd").find("too large") != std::string::npos);  // 2^43 MiB

  // One below each limit is a size like any other.
  ts::dist::set_algorithms("all_gather[8589934591G-]:rd;*:direct");
  CHECK(ts::dist::algorithms() ==
        "all_gather[" + std::to_string(int64_t{8589934591} << 30) + "-]:rd;*:direct");
  ts::dist::set_algorithms("all_gather[0-9007199254740991K]:rd;*:direct");
  CHECK(ts::dist::algorithm_for("all_gather", 4, 1 << 20) == "rd");
  ts::dist::set_algorithms("all_gather[0-8796093022207M]:rd;*:direct");
  CHECK(ts::dist::algorithm_for("all_gather", 4, 1 << 20) == "rd");
}

TEST_CASE("a rule size too large for any integer is rejected as not a byte count") {
  const RestoreRules restore;
  const std::string message = rules_error("all_gather[0-99999999999999999999]:rd");
  CAPTURE(message);
  CHECK(message.find("is not a byte count") != std::string::npos);
}
