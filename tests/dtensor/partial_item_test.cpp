// item() of a Partial DTensor's to_local(): each rank holds its own contribution, not the value,
// so the error names that case and what to call instead; full_tensor() gives the reduced value.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

namespace ts = tessera;

TEST_CASE("to_local().item() of a Partial DTensor says to reduce it first") {
  ts::LocalMode mode(3);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  ts::Tensor x;
  {
    ts::DisabledLocalMode plain;
    x = ts::from_values<double>({1, 2, 3, 4, 5, 6}, {6}, ts::kFloat64);  // ranks hold 1+2, 3+4, 5+6
  }
  const ts::DTensor total = ts::sum(ts::distribute_tensor(x, mesh, {ts::Shard(0)}));
  REQUIRE(total.placements() == ts::Placements{ts::Partial("sum")});
  CHECK_THROWS_WITH_AS(total.to_local().item(),
                       doctest::Contains("differs between ranks (0: 3, 1: 7, 2: 11)"), ts::Error);
  CHECK_THROWS_WITH_AS(total.to_local().item(), doctest::Contains("to_local() of a Partial DTensor"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(total.to_local().item(), doctest::Contains("call full_tensor() on the DTensor"),
                       ts::Error);
  // The fix the message names gives the sum, 21.
  CHECK(total.full_tensor().item().to_double() == 21.0);
  CHECK(total.redistribute({ts::Replicate()}).to_local().item().to_double() == 21.0);
}
