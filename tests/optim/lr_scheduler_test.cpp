// Learning-rate schedulers against sequences computed with PyTorch 2.15 (torch.optim.lr_scheduler
// over torch.optim.SGD, one parameter group; printed with repr and pasted here as literals). Each
// sequence is the lr after construction, then after each step(); every value is compared exactly,
// so the recursive forms must round as PyTorch's do (the closed forms differ in the last bits).
#include <numbers>

#include "reference.hpp"

namespace ts = tessera;
namespace sched = ts::optim::lr_scheduler;
using optim_test::make;
using optim_test::Values;

namespace {

ts::optim::SGD sgd_with_lr(double lr) { return ts::optim::SGD({make({0.0}, ts::kFloat64)}, {.lr = lr}); }

// The optimizer's lr and get_last_lr() after construction and after each of expected.size()-1 steps.
void check_schedule(sched::LRScheduler& scheduler, const Values& expected) {
  for (size_t epoch = 0; epoch < expected.size(); ++epoch) {
    if (epoch > 0) scheduler.step();
    CHECK_MESSAGE(scheduler.optimizer().lr() == expected[epoch], "epoch " << epoch);
    REQUIRE(scheduler.get_last_lr().size() == 1);
    CHECK_MESSAGE(scheduler.get_last_lr()[0] == expected[epoch], "epoch " << epoch);
    CHECK(scheduler.last_epoch() == static_cast<int64_t>(epoch));
  }
}

}  // namespace

TEST_CASE("LambdaLR scales the initial lr by the function of the epoch") {
  auto opt = sgd_with_lr(0.1);
  sched::LambdaLR scheduler(opt, [](int64_t epoch) { return std::pow(0.95, static_cast<double>(epoch)); });
  CHECK(scheduler.base_lrs() == Values{0.1});
  check_schedule(scheduler,
                 {0.1, 0.095, 0.09025, 0.0857375, 0.081450625, 0.07737809374999999, 0.07350918906249998});
}

TEST_CASE("LinearLR: PyTorch's defaults, a warm-up and a decay") {
  const sched::LinearLROptions defaults;
  CHECK(defaults.start_factor == 1.0 / 3);
  CHECK(defaults.end_factor == 1.0);
  CHECK(defaults.total_iters == 5);
  auto opt = sgd_with_lr(0.1);
  sched::LinearLR warmup(opt);
  check_schedule(warmup, {0.03333333333333333, 0.04666666666666667, 0.060000000000000005, 0.07333333333333335,
                          0.08666666666666668, 0.1, 0.1, 0.1, 0.1});
  auto opt2 = sgd_with_lr(0.05);
  sched::LinearLR decay(opt2, {.start_factor = 1.0, .end_factor = 0.25, .total_iters = 3});
  check_schedule(decay, {0.05, 0.037500000000000006, 0.025000000000000005, 0.012500000000000002,
                         0.012500000000000002, 0.012500000000000002});
}

TEST_CASE("CosineAnnealingLR follows PyTorch's recursive form, past T_max and back up") {
  auto opt = sgd_with_lr(0.1);
  sched::CosineAnnealingLR scheduler(opt, 10, 0.001);
  CHECK(scheduler.T_max() == 10);
  CHECK(scheduler.eta_min() == 0.001);
  const Values expected = {
      0.1, 0.09757729755661011, 0.0905463412215599, 0.07959536998847742, 0.0657963412215599, 0.0505,
      0.03520365877844011, 0.02140463001152259, 0.010453658778440109, 0.0034227024433899004, 0.001,
      // Epoch 11 is the step after the minimum (PyTorch adds instead of taking a 0/0 ratio).
      0.0034227024433899004, 0.01045365877844014, 0.02140463001152267, 0.035203658778440255,
      0.05050000000000022, 0.06579634122156018, 0.07959536998847777, 0.09054634122156031, 0.09757729755661054,
      0.10000000000000045, 0.09757729755661054, 0.09054634122156033, 0.07959536998847778, 0.0657963412215602,
      0.050500000000000225, 0.03520365877844027, 0.021404630011522683, 0.010453658778440154,
      0.003422702443389916, 0.001, 0.0034227024433899004, 0.010453658778440112};
  check_schedule(scheduler, expected);
  // The closed form gives other doubles at epochs 7 and 11 on (PyTorch differs there too): the
  // pinned values are the recursive form's.
  const double closed_7 = 0.001 + (0.1 - 0.001) * (1 + std::cos(std::numbers::pi * 7 / 10)) / 2;
  CHECK(closed_7 != expected[7]);
}

TEST_CASE("schedulers stepped one after the other on one optimizer compose (the chainable form)") {
  auto opt = sgd_with_lr(0.1);
  sched::LinearLR warmup(opt, {.start_factor = 0.5, .total_iters = 2});
  sched::CosineAnnealingLR cosine(opt, 4);
  const Values expected = {0.05, 0.06401650429449554, 0.05, 0.014644660940672627, 0.0, 0.014644660940672622};
  CHECK(opt.lr() == expected[0]);
  for (size_t epoch = 1; epoch < expected.size(); ++epoch) {
    warmup.step();
    cosine.step();
    CHECK_MESSAGE(opt.lr() == expected[epoch], "epoch " << epoch);
  }
}

TEST_CASE("SequentialLR: a warm-up then a cosine, as PyTorch builds and steps it") {
  auto opt = sgd_with_lr(0.1);
  auto warmup =
      std::make_shared<sched::LinearLR>(opt, sched::LinearLROptions{.start_factor = 0.1, .total_iters = 4});
  CHECK(opt.lr() == 0.010000000000000002);
  auto cosine = std::make_shared<sched::CosineAnnealingLR>(opt, 6, 0.01);
  // The cosine's construction keeps the lr it finds; both scale the lr the first one recorded.
  CHECK(opt.lr() == 0.010000000000000002);
  CHECK(opt.initial_lr() == 0.1);
  CHECK(cosine->base_lrs() == Values{0.1});
  sched::SequentialLR scheduler(opt, {warmup, cosine}, {4});
  // Construction undid both schedulers' steps and made the warm-up's again.
  CHECK(scheduler.last_epoch() == 0);
  CHECK(warmup->last_epoch() == 0);
  CHECK(cosine->last_epoch() == -1);
  check_schedule(scheduler,
                 {0.010000000000000002, 0.03250000000000001, 0.055000000000000014, 0.07750000000000003, 0.1,
                  0.09397114317029975, 0.07750000000000001, 0.055000000000000014, 0.032500000000000015,
                  0.01602885682970026, 0.01, 0.01602885682970026, 0.03250000000000001});
  CHECK(warmup->last_epoch() == 3);
  CHECK(cosine->last_epoch() == 8);
}

TEST_CASE("SequentialLR: three phases, and a first milestone at 0") {
  auto opt = sgd_with_lr(0.2);
  auto lambda = std::make_shared<sched::LambdaLR>(
      opt, [](int64_t epoch) { return 1.0 / static_cast<double>(epoch + 1); });
  auto linear =
      std::make_shared<sched::LinearLR>(opt, sched::LinearLROptions{.start_factor = 0.5, .total_iters = 2});
  auto cosine = std::make_shared<sched::CosineAnnealingLR>(opt, 3);
  sched::SequentialLR three(opt, {lambda, linear, cosine}, {2, 5});
  check_schedule(three, {0.2, 0.1, 0.1, 0.15000000000000002, 0.2, 0.2, 0.15000000000000002,
                         0.05000000000000003, 0.0, 0.04999999999999999, 0.1500000000000001});

  // Milestone 0: the second scheduler runs from the start and the first never does.
  auto opt2 = sgd_with_lr(0.2);
  auto skipped =
      std::make_shared<sched::LinearLR>(opt2, sched::LinearLROptions{.start_factor = 0.5, .total_iters = 2});
  auto from_start = std::make_shared<sched::CosineAnnealingLR>(opt2, 3);
  sched::SequentialLR at_zero(opt2, {skipped, from_start}, {0});
  check_schedule(
      at_zero, {0.2, 0.15000000000000002, 0.05000000000000003, 0.0, 0.04999999999999999, 0.1500000000000001});
  CHECK(skipped->last_epoch() == -1);
}

TEST_CASE("the first scheduler records initial_lr from the lr of that moment, and the steps use the lr") {
  auto opt = sgd_with_lr(0.1);
  opt.set_lr(0.4);  // PyTorch: param_groups[0]["lr"] = 0.4 before the scheduler
  sched::LinearLR scheduler(opt, {.start_factor = 0.5, .total_iters = 2});
  CHECK(opt.initial_lr() == 0.4);
  check_schedule(scheduler, {0.2, 0.30000000000000004, 0.4, 0.4});
  // Set by hand after a scheduler is attached, the lr no longer moves initial_lr.
  opt.set_lr(0.7);
  CHECK(opt.initial_lr() == 0.4);

  // The optimizer's step uses the lr the scheduler wrote: p - lr * g with g = 1.
  ts::Tensor p = make({1.0}, ts::kFloat64);
  ts::optim::SGD sgd({p}, {.lr = 1.0});
  sched::LambdaLR halving(sgd, [](int64_t epoch) { return epoch == 0 ? 0.5 : 0.25; });
  p.set_grad(make({1.0}, ts::kFloat64));
  sgd.step();  // 1 - 0.5
  halving.step();
  sgd.step();  // 0.5 - 0.25
  CHECK(p.to_vector<double>() == Values{0.25});
}

TEST_CASE("scheduler option errors name the option, its value and what is expected") {
  auto opt = sgd_with_lr(0.1);
  using sched::LinearLR;
  CHECK_THROWS_WITH_AS(LinearLR(opt, {.start_factor = 0.0}),
                       "LinearLR: start_factor is 0; expected 0 < start_factor <= 1", ts::Error);
  CHECK_THROWS_WITH_AS(LinearLR(opt, {.start_factor = 1.5}),
                       "LinearLR: start_factor is 1.5; expected 0 < start_factor <= 1", ts::Error);
  CHECK_THROWS_WITH_AS(LinearLR(opt, {.start_factor = std::nan("")}),
                       doctest::Contains("start_factor is nan"), ts::Error);
  CHECK_THROWS_WITH_AS(LinearLR(opt, {.end_factor = -0.1}),
                       "LinearLR: end_factor is -0.1; expected 0 <= end_factor <= 1", ts::Error);
  CHECK_THROWS_WITH_AS(LinearLR(opt, {.total_iters = 0}),
                       doctest::Contains("LinearLR: total_iters is 0; expected total_iters >= 1"), ts::Error);
  CHECK_THROWS_WITH_AS(sched::CosineAnnealingLR(opt, -3),
                       "CosineAnnealingLR: T_max is -3; expected T_max >= 1 (the epochs of half a period)",
                       ts::Error);
  CHECK_THROWS_WITH_AS(sched::CosineAnnealingLR(opt, 0), doctest::Contains("T_max is 0"), ts::Error);
  CHECK_THROWS_WITH_AS(sched::CosineAnnealingLR(opt, 5, -1e-3),
                       doctest::Contains("CosineAnnealingLR: eta_min is -0.001; expected eta_min >= 0"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(sched::LambdaLR(opt, nullptr), doctest::Contains("LambdaLR: lr_lambda is empty"),
                       ts::Error);
  // A refused option leaves the optimizer's lr as it was (the check comes before the first write).
  CHECK(opt.lr() == 0.1);

  // A schedule that gives a negative lr is refused at the step that computes it.
  auto opt2 = sgd_with_lr(0.1);
  sched::LambdaLR goes_negative(opt2, [](int64_t epoch) { return 1.0 - static_cast<double>(epoch); });
  goes_negative.step();  // factor 0: lr 0 is fine
  CHECK(opt2.lr() == 0.0);
  CHECK_THROWS_WITH_AS(goes_negative.step(),
                       "LambdaLR: the schedule gives lr -0.1 at epoch 2 (optimizer SGD); expected lr >= 0",
                       ts::Error);
}

TEST_CASE("SequentialLR errors: schedulers, milestones and the optimizer") {
  auto opt = sgd_with_lr(0.1);
  auto other = sgd_with_lr(0.1);
  auto a = std::make_shared<sched::LinearLR>(opt);
  auto b = std::make_shared<sched::CosineAnnealingLR>(opt, 5);
  auto c = std::make_shared<sched::LambdaLR>(opt, [](int64_t) { return 1.0; });
  auto elsewhere = std::make_shared<sched::CosineAnnealingLR>(other, 5);
  using sched::SequentialLR;
  CHECK_THROWS_WITH_AS(SequentialLR(opt, {}, {}), "SequentialLR: got no schedulers; expected at least one",
                       ts::Error);
  CHECK_THROWS_WITH_AS(SequentialLR(opt, {a, nullptr}, {2}), "SequentialLR: scheduler 1 is null", ts::Error);
  CHECK_THROWS_WITH_AS(
      SequentialLR(opt, {a, elsewhere}, {2}),
      "SequentialLR: scheduler 1 (CosineAnnealingLR) is bound to another optimizer (a SGD) than the "
      "SGD given to SequentialLR; every scheduler must drive the same optimizer",
      ts::Error);
  CHECK_THROWS_WITH_AS(
      SequentialLR(opt, {a, b}, {}),
      doctest::Contains("SequentialLR: got 2 schedulers and 0 milestones; expected one milestone "
                        "fewer than schedulers"),
      ts::Error);
  CHECK_THROWS_WITH_AS(SequentialLR(opt, {a, b}, {2, 4}),
                       doctest::Contains("got 2 schedulers and 2 milestones"), ts::Error);
  CHECK_THROWS_WITH_AS(
      SequentialLR(opt, {a, b, c}, {5, 3}),
      "SequentialLR: milestones must be strictly increasing, but milestone 1 is 3 after milestone 0 "
      "= 5",
      ts::Error);
  CHECK_THROWS_WITH_AS(SequentialLR(opt, {a, b, c}, {3, 3}),
                       doctest::Contains("milestone 1 is 3 after milestone 0 = 3"), ts::Error);
  CHECK_THROWS_WITH_AS(SequentialLR(opt, {a, b}, {-1}),
                       "SequentialLR: milestone 0 is -1; expected epochs >= 0", ts::Error);
  CHECK_THROWS_WITH_AS(SequentialLR(opt, {a, a}, {2}),
                       doctest::Contains("scheduler 1 is the same object as scheduler 0"), ts::Error);
  auto inner = std::make_shared<SequentialLR>(opt, std::vector<std::shared_ptr<sched::LRScheduler>>{a, b},
                                              std::vector<int64_t>{2});
  CHECK_THROWS_WITH_AS(
      SequentialLR(opt, {c, inner}, {2}),
      doctest::Contains("SequentialLR: scheduler 1 is a SequentialLR; nesting them is not supported"),
      ts::Error);
}
