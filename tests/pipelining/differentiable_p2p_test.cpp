// Differentiable point-to-point inside ts::spawn: a chain of stages over 2 and 3 ranks gives every
// rank's parameters the gradients of the same chain computed on one rank.
#include <doctest/doctest.h>

#include <string>
#include <tessera/tessera.hpp>
#include <vector>

namespace ts = tessera;

namespace {

// Stage r's weight: 3x3, values that differ per stage and keep tanh away from saturation.
ts::Tensor stage_weight(int r) {
  std::vector<float> w(9);
  for (int i = 0; i < 9; ++i)
    w[static_cast<size_t>(i)] = 0.1f * static_cast<float>((i * 7 + r * 3) % 11) - 0.45f;
  return ts::from_values(w, {3, 3}).set_requires_grad(true);
}

ts::Tensor chain_input() {
  return ts::from_values(std::vector<float>{0.5f, -1.f, 0.25f, 2.f, 0.f, -0.75f}, {2, 3})
      .set_requires_grad(true);
}

ts::Tensor stage(const ts::Tensor& h, const ts::Tensor& w) { return ts::tanh(ts::matmul(h, w)); }

void check_close(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-6));
}

}  // namespace

TEST_CASE("functional send/recv: a chain over 2 and 3 ranks has the gradients of the one-rank chain") {
  for (int n : {2, 3}) {
    CAPTURE(n);
    // The oracle: the same chain on one rank, no messages.
    std::vector<std::vector<float>> want_w(static_cast<size_t>(n));
    std::vector<float> want_x;
    float want_loss = 0;
    {
      ts::Tensor x = chain_input();
      std::vector<ts::Tensor> ws;
      ts::Tensor h = x;
      for (int r = 0; r < n; ++r) {
        ws.push_back(stage_weight(r));
        h = stage(h, ws.back());
      }
      ts::Tensor loss = ts::sum(h * h);
      loss.backward();
      want_loss = loss.item<float>();
      for (int r = 0; r < n; ++r)
        want_w[static_cast<size_t>(r)] = ws[static_cast<size_t>(r)].grad().to_vector<float>();
      want_x = x.grad().to_vector<float>();
    }

    std::vector<std::vector<float>> got_w(static_cast<size_t>(n));
    std::vector<float> got_x;
    float got_loss = 0;
    ts::spawn(n, [&](int rank) {
      ts::Tensor w = stage_weight(rank);
      ts::Tensor x = chain_input();
      ts::Tensor in = rank == 0 ? x : ts::dist::functional::recv(ts::empty({2, 3}), rank - 1, /*tag=*/5);
      if (rank > 0) CHECK(in.requires_grad());
      ts::Tensor h = stage(in, w);
      if (rank == n - 1) {
        ts::Tensor loss = ts::sum(h * h);
        loss.backward();
        got_loss = loss.item<float>();
      } else {
        ts::Tensor token = ts::dist::functional::send(h, rank + 1, /*tag=*/5);
        CHECK(token.dim() == 0);
        token.backward();
      }
      got_w[static_cast<size_t>(rank)] = w.grad().to_vector<float>();
      if (rank == 0) got_x = x.grad().to_vector<float>();
    });
    CHECK(got_loss == doctest::Approx(want_loss).epsilon(1e-6));
    for (int r = 0; r < n; ++r) {
      CAPTURE(r);
      check_close(got_w[static_cast<size_t>(r)], want_w[static_cast<size_t>(r)]);
    }
    check_close(got_x, want_x);
  }
}

TEST_CASE("functional send/recv: gradients never match a user's message with the same tag") {
  // Rank 1 sends a user message with tag 7 back to rank 0 while rank 0 already waits for the
  // gradient of tag 7: the gradient must still be the one backward computed (2 * received = 6).
  std::vector<float> grad, user;
  ts::spawn(2, [&](int rank) {
    if (rank == 0) {
      ts::Tensor x = ts::full({2}, 3.f).set_requires_grad(true);
      ts::dist::functional::send(x, 1, 7).backward();
      grad = x.grad().to_vector<float>();
      ts::Tensor t = ts::zeros({2});
      ts::dist::recv(t, 1, 7);
      user = t.to_vector<float>();
    } else {
      ts::Tensor h = ts::dist::functional::recv(ts::empty({2}), 0, 7);
      ts::dist::send(ts::full({2}, 42.f), 0, 7);
      ts::sum(h * h).backward();
    }
  });
  CHECK(grad == std::vector<float>{6.f, 6.f});
  CHECK(user == std::vector<float>{42.f, 42.f});
}

TEST_CASE("functional send/recv: without grad the token and the received tensor do not require grad") {
  ts::spawn(2, [&](int rank) {
    if (rank == 0) {
      CHECK_FALSE(ts::dist::functional::send(ts::full({2}, 1.f), 1).requires_grad());
    } else {
      const ts::NoGradGuard off;
      ts::Tensor h = ts::dist::functional::recv(ts::empty({2}), 0);
      CHECK_FALSE(h.requires_grad());
      CHECK(h.to_vector<float>() == std::vector<float>{1.f, 1.f});
    }
  });
}

TEST_CASE("functional send/recv: errors") {
  SUBCASE("outside ts::spawn") {
    CHECK_THROWS_WITH_AS(ts::dist::functional::send(ts::ones({2}), 1),
                         doctest::Contains("inside a rank's program"), ts::Error);
    CHECK_THROWS_WITH_AS(ts::dist::functional::recv(ts::ones({2}), 1), doctest::Contains("outside ts::spawn"),
                         ts::Error);
  }
  SUBCASE("a received tensor that gets no gradient leaves the sender's backward waiting: a deadlock") {
    std::string what;
    try {
      ts::spawn(2, [&](int rank) {
        if (rank == 0) {
          ts::dist::functional::send(ts::ones({2}).set_requires_grad(true), 1, 3).backward();
        } else {
          (void)ts::dist::functional::recv(ts::empty({2}), 0, 3);
        }
      });
    } catch (const ts::Error& e) {
      what = e.what();
    }
    CHECK(what.find("functional::send's backward(src=1, gradient of tag=3)") != std::string::npos);
  }
  SUBCASE("an integer tensor cannot carry a gradient") {
    CHECK_THROWS_WITH_AS(ts::spawn(2,
                                   [&](int rank) {
                                     if (rank == 0)
                                       ts::dist::send(ts::ones({2}, ts::kInt64), 1);
                                     else
                                       (void)ts::dist::functional::recv(ts::empty({2}, ts::kInt64), 0);
                                   }),
                         doctest::Contains("only floating-point tensors can carry gradients"), ts::RankError);
  }
}
