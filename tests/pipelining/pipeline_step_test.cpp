// A pipelined training step (ScheduleGPipe, Schedule1F1B inside ts::spawn) gives the losses and
// every parameter gradient of the same MLP run on one rank with the same micro-batch accumulation.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

namespace ts = tessera;
namespace nn = tessera::nn;
namespace pp = tessera::pipelining;

namespace {

constexpr int kLayers = 4;  // Linear layers; the widths are kWidths[i] -> kWidths[i + 1]
constexpr int64_t kWidths[kLayers + 1] = {3, 5, 4, 6, 2};

// Layer i's weight and bias values, the same wherever a layer is built.
std::vector<float> step_test_values(int layer, int64_t count, int salt) {
  std::vector<float> v(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k)
    v[static_cast<size_t>(k)] =
        static_cast<float>(0.4 * std::sin(1.3 * static_cast<double>(k + 1) + layer * 0.7 + salt));
  return v;
}

nn::Linear step_test_linear(int layer) {
  nn::Linear linear(kWidths[layer], kWidths[layer + 1]);
  const ts::NoGradGuard off;
  ts::Tensor w = linear->weight.tensor();
  ts::Tensor b = linear->bias.tensor();
  w.copy_(ts::from_values(step_test_values(layer, w.numel(), 0), w.sizes()));
  b.copy_(ts::from_values(step_test_values(layer, b.numel(), 1), b.sizes()));
  return linear;
}

// Layers [first, last) as a Sequential, a ReLU after each but the model's final layer.
nn::Sequential step_test_chunk(int first, int last) {
  nn::Sequential chunk;
  for (int i = first; i < last; ++i) {
    chunk->push_back(step_test_linear(i));
    if (i != kLayers - 1) chunk->push_back(nn::ReLU());
  }
  return chunk;
}

ts::Tensor step_test_loss(const ts::Tensor& out, const ts::Tensor& target) {
  return ts::mse_loss(out, target);
}

ts::Tensor step_test_batch(int64_t rows, int64_t cols, int salt) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (size_t k = 0; k < v.size(); ++k)
    v[k] = static_cast<float>(std::cos(0.37 * static_cast<double>(k) + salt));
  return ts::from_values(v, {rows, cols});
}

struct StepResult {
  std::vector<float> losses;
  std::vector<std::vector<float>> grads;  // by layer: weight, then bias
  std::vector<float> output;
};

// The oracle: the whole model on one rank; each micro-batch's loss backward in order (grads add
// up), then the grads scaled by 1/n.
StepResult step_test_unpipelined(const ts::Tensor& x, const ts::Tensor& target, int n) {
  nn::Sequential model = step_test_chunk(0, kLayers);
  StepResult result;
  const int64_t rows = x.sizes()[0];
  std::vector<ts::Tensor> outs;
  int64_t start = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t length = rows / n + (i < rows % n ? 1 : 0);
    const ts::Tensor out = model(nn::Value(x.narrow(0, start, length))).tensor();
    const ts::Tensor loss = step_test_loss(out, target.narrow(0, start, length));
    loss.backward();
    result.losses.push_back(loss.item<float>());
    outs.push_back(out.detach());
    start += length;
  }
  for (const nn::Parameter& p : model->parameters())
    result.grads.push_back((p.tensor().grad() * (1.0 / n)).to_vector<float>());
  result.output = ts::cat(outs, 0).to_vector<float>();
  return result;
}

template <class Schedule>
StepResult step_test_pipelined(int stages, const ts::Tensor& x, const ts::Tensor& target, int n) {
  StepResult result;
  result.grads.resize(2 * kLayers);
  const int per_stage = kLayers / stages;
  ts::spawn(stages, [&](int rank) {
    nn::Sequential chunk = step_test_chunk(rank * per_stage, (rank + 1) * per_stage);
    pp::PipelineStage stage(chunk, rank, stages);
    Schedule schedule(stage, n, step_test_loss);
    std::vector<ts::Tensor> losses;
    if (rank == 0) {
      CHECK_FALSE(schedule.step(x).defined());
    } else if (rank == stages - 1) {
      const ts::Tensor merged = schedule.step({}, target, &losses);
      result.output = merged.to_vector<float>();
      for (const ts::Tensor& l : losses) result.losses.push_back(l.item<float>());
    } else {
      CHECK_FALSE(schedule.step().defined());
    }
    const std::vector<nn::Parameter> params = chunk->parameters();
    for (size_t i = 0; i < params.size(); ++i)
      result.grads[static_cast<size_t>(rank * per_stage * 2) + i] =
          params[i].tensor().grad().to_vector<float>();
  });
  return result;
}

void step_test_check_close(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-6));
}

void step_test_compare(const StepResult& got, const StepResult& want) {
  step_test_check_close(got.losses, want.losses);
  step_test_check_close(got.output, want.output);
  REQUIRE(got.grads.size() == want.grads.size());
  for (size_t i = 0; i < want.grads.size(); ++i) {
    CAPTURE(i);
    step_test_check_close(got.grads[i], want.grads[i]);
  }
}

}  // namespace

TEST_CASE("pipelining: GPipe and 1F1B steps over 2 and 4 stages equal the unpipelined model") {
  for (int stages : {2, 4})
    for (int n : {4, 5}) {
      CAPTURE(stages);
      CAPTURE(n);
      // 11 rows: the micro-batches are uneven (3, 2, 2, 2, 2 for n = 5), as torch.tensor_split.
      const ts::Tensor x = step_test_batch(11, kWidths[0], 0);
      const ts::Tensor target = step_test_batch(11, kWidths[kLayers], 1);
      const StepResult want = step_test_unpipelined(x, target, n);
      REQUIRE(want.losses.size() == static_cast<size_t>(n));
      step_test_compare(step_test_pipelined<pp::ScheduleGPipe>(stages, x, target, n), want);
      step_test_compare(step_test_pipelined<pp::Schedule1F1B>(stages, x, target, n), want);
    }
}

TEST_CASE("pipelining: step errors") {
  SUBCASE("the first stage without a batch, a middle stage with one") {
    CHECK_THROWS_WITH_AS(
        ts::spawn(2,
                  [&](int rank) {
                    nn::Sequential chunk = step_test_chunk(rank * 2, rank * 2 + 2);
                    pp::PipelineStage stage(chunk, rank, 2);
                    pp::ScheduleGPipe schedule(stage, 2, step_test_loss);
                    if (rank == 0) schedule.step();
                  }),
        doctest::Contains("the rank holds the first stage, which takes the batch: call step(x)"),
        ts::RankError);
  }
  SUBCASE("a rank passing stages the schedule does not put on it") {
    CHECK_THROWS_WITH_AS(
        ts::spawn(2,
                  [&](int rank) {
                    std::vector<pp::PipelineStage> stages = {
                        pp::PipelineStage(step_test_chunk(rank, rank + 1), rank, 4),
                        pp::PipelineStage(step_test_chunk(rank, rank + 1), 3 - rank, 4)};
                    pp::ScheduleInterleaved1F1B schedule(stages, 2, step_test_loss);
                    if (rank == 0) schedule.step(step_test_batch(2, kWidths[0], 0));
                  }),
        doctest::Contains("the rank holds stages [0, 3], but the schedule puts stages [0, 2] on it"),
        ts::RankError);
  }
  SUBCASE("fewer rows than micro-batches") {
    CHECK_THROWS_WITH_AS(
        ts::spawn(1,
                  [&](int) {
                    nn::Sequential chunk = step_test_chunk(0, kLayers);
                    pp::PipelineStage stage(chunk, 0, 1);
                    pp::ScheduleGPipe schedule(stage, 4, step_test_loss);
                    schedule.step(step_test_batch(3, kWidths[0], 0), step_test_batch(3, kWidths[kLayers], 1));
                  }),
        doctest::Contains("the batch has shape [3, 3]; it is split into 4 micro-batches"), ts::RankError);
  }
  SUBCASE("a stage outside the pipeline, no loss") {
    nn::Sequential chunk = step_test_chunk(0, 1);
    CHECK_THROWS_WITH_AS(pp::PipelineStage(chunk, 2, 2),
                         doctest::Contains("stage_index 2 is outside the 2 stage(s)"), ts::Error);
    pp::PipelineStage stage(chunk, 0, 2);
    CHECK_THROWS_WITH_AS(pp::Schedule1F1B(stage, 2, {}), doctest::Contains("loss_fn is empty"), ts::Error);
  }
}

TEST_CASE(
    "pipelining: an Interleaved 1F1B step over 2 ranks with 2 stages each equals the unpipelined model") {
  for (int n : {2, 4}) {
    CAPTURE(n);
    const ts::Tensor x = step_test_batch(8, kWidths[0], 2);
    const ts::Tensor target = step_test_batch(8, kWidths[kLayers], 3);
    const StepResult want = step_test_unpipelined(x, target, n);
    StepResult got;
    got.grads.resize(2 * kLayers);
    ts::spawn(2, [&](int rank) {
      // Rank r holds stages r and r + 2: layers r and r + 2.
      std::vector<nn::Sequential> chunks = {step_test_chunk(rank, rank + 1),
                                            step_test_chunk(rank + 2, rank + 3)};
      std::vector<pp::PipelineStage> stages = {pp::PipelineStage(chunks[0], rank, 4),
                                               pp::PipelineStage(chunks[1], rank + 2, 4)};
      pp::ScheduleInterleaved1F1B schedule(stages, n, step_test_loss);
      if (rank == 0) {
        CHECK_FALSE(schedule.step(x).defined());
      } else {
        std::vector<ts::Tensor> losses;
        const ts::Tensor merged = schedule.step({}, target, &losses);
        got.output = merged.to_vector<float>();
        for (const ts::Tensor& l : losses) got.losses.push_back(l.item<float>());
      }
      for (int c = 0; c < 2; ++c) {
        const std::vector<nn::Parameter> params = chunks[static_cast<size_t>(c)]->parameters();
        const int layer = rank + 2 * c;
        for (size_t i = 0; i < params.size(); ++i)
          got.grads[static_cast<size_t>(layer * 2) + i] = params[i].tensor().grad().to_vector<float>();
      }
    });
    step_test_compare(got, want);
  }
}

TEST_CASE("pipelining: a pipeline on a group of some ranks, in the group's order") {
  // World ranks 2 and 0 hold stages 0 and 1; rank 1 takes no part.
  const int n = 4;
  const ts::Tensor x = step_test_batch(8, kWidths[0], 4);
  const ts::Tensor target = step_test_batch(8, kWidths[kLayers], 5);
  const StepResult want = step_test_unpipelined(x, target, n);
  StepResult got;
  got.grads.resize(2 * kLayers);
  ts::spawn(3, [&](int rank) {
    if (rank == 1) return;
    const int index = rank == 2 ? 0 : 1;
    nn::Sequential chunk = step_test_chunk(index * 2, index * 2 + 2);
    pp::PipelineStage stage(chunk, index, 2, ts::ProcessGroup({2, 0}));
    pp::Schedule1F1B schedule(stage, n, step_test_loss);
    if (index == 0) {
      schedule.step(x);
    } else {
      std::vector<ts::Tensor> losses;
      const ts::Tensor merged = schedule.step({}, target, &losses);
      got.output = merged.to_vector<float>();
      for (const ts::Tensor& l : losses) got.losses.push_back(l.item<float>());
    }
    const std::vector<nn::Parameter> params = chunk->parameters();
    for (size_t i = 0; i < params.size(); ++i)
      got.grads[static_cast<size_t>(index * 4) + i] = params[i].tensor().grad().to_vector<float>();
  });
  step_test_compare(got, want);
}

TEST_CASE("pipelining: zero-bubble steps (split backwards) equal the unpipelined model") {
  for (int n : {2, 4}) {
    CAPTURE(n);
    const ts::Tensor x = step_test_batch(8, kWidths[0], 6);
    const ts::Tensor target = step_test_batch(8, kWidths[kLayers], 7);
    const StepResult want = step_test_unpipelined(x, target, n);
    for (bool zbv : {false, true}) {
      CAPTURE(zbv);
      StepResult got;
      got.grads.resize(2 * kLayers);
      ts::spawn(2, [&](int rank) {
        // Interleaved: rank r holds stages r and r + 2. ZBV: rank r holds stages r and 3 - r.
        const int second = zbv ? 3 - rank : rank + 2;
        std::vector<int> layers = {rank, second};
        std::vector<nn::Sequential> chunks = {step_test_chunk(rank, rank + 1),
                                              step_test_chunk(second, second + 1)};
        std::vector<pp::PipelineStage> stages = {pp::PipelineStage(chunks[0], rank, 4),
                                                 pp::PipelineStage(chunks[1], second, 4)};
        std::vector<ts::Tensor> losses;
        ts::Tensor merged;
        auto run = [&](auto& schedule) {
          if (zbv)
            merged = rank == 0 ? schedule.step(x, target, &losses) : schedule.step();
          else
            merged = rank == 0 ? schedule.step(x) : schedule.step({}, target, &losses);
        };
        if (zbv) {
          pp::ScheduleZBVZeroBubble schedule(stages, n, step_test_loss);
          run(schedule);
        } else {
          pp::ScheduleInterleavedZeroBubble schedule(stages, n, step_test_loss);
          run(schedule);
        }
        if (merged.defined()) {
          got.output = merged.to_vector<float>();
          for (const ts::Tensor& l : losses) got.losses.push_back(l.item<float>());
        }
        for (int c = 0; c < 2; ++c) {
          const std::vector<nn::Parameter> params = chunks[static_cast<size_t>(c)]->parameters();
          for (size_t i = 0; i < params.size(); ++i)
            got.grads[static_cast<size_t>(layers[static_cast<size_t>(c)] * 2) + i] =
                params[i].tensor().grad().to_vector<float>();
        }
      });
      step_test_compare(got, want);
    }
  }
}
