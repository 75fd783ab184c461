// An error raised inside one rank's task (a per-rank factory, rank_map) comes back as the same
// tessera error type, with the rank added to its message: a caller catching ConfigError or
// PluginError still catches it. Anything else becomes a tessera Error.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {

// rank_map over 3 ranks whose factory throws `error` on rank 1 only.
template <class Exception>
void throw_on_rank_one(const std::string& message) {
  ts::LocalMode mode(3);
  (void)ts::rank_map([&](int rank) {
    if (rank == 1) throw Exception(message);
    return ts::full({2}, static_cast<float>(rank));
  });
}

}  // namespace

TEST_CASE("a ConfigError in a per-rank factory stays a ConfigError, naming the rank") {
  CHECK_THROWS_WITH_AS(throw_on_rank_one<ts::ConfigError>("key 'x': bad value"),
                       "rank_map on rank 1: key 'x': bad value", ts::ConfigError);
  // A real one: a collective rule refused while a rank's tensor is made.
  const std::string rules = ts::dist::algorithms();
  ts::LocalMode mode(3);
  CHECK_THROWS_WITH_AS((void)ts::rank_map([](int rank) {
                         if (rank == 2) ts::dist::set_algorithms("all_reduce:bruck");
                         return ts::full({1}, 1.0f);
                       }),
                       doctest::Contains("rank_map on rank 2: collective rule 'all_reduce:bruck'"),
                       ts::ConfigError);
  CHECK(ts::dist::algorithms() == rules);
}

TEST_CASE("a PluginError in a per-rank factory stays a PluginError, other errors become Error") {
  CHECK_THROWS_WITH_AS(throw_on_rank_one<ts::PluginError>("plugin 'p' refused"),
                       "rank_map on rank 1: plugin 'p' refused", ts::PluginError);
  // A plain Error is not promoted to a ConfigError.
  bool config_error = false;
  try {
    throw_on_rank_one<ts::Error>("shape mismatch");
  } catch (const ts::ConfigError&) {
    config_error = true;
  } catch (const ts::Error& e) {
    CHECK(std::string(e.what()) == "rank_map on rank 1: shape mismatch");
  }
  CHECK_FALSE(config_error);
  CHECK_THROWS_WITH_AS(throw_on_rank_one<std::runtime_error>("not ours"), "rank_map on rank 1: not ours",
                       ts::Error);
}
