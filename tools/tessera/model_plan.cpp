// One training step of a model, run on a mesh with the DTensor ops so that sharding propagation,
// not this file, decides every collective. What this file decides is the layout (the strategy):
//
//   megatron  activations: batch sharded on the data-parallel dim, replicated on the tensor-parallel
//             dim; weights: column-parallel (Shard(1) on tp) into the wide layer, row-parallel
//             (Shard(0) on tp) out of it, so a layer's output is Partial on tp and is all-reduced.
//   dp        activations: batch sharded on every mesh dim; weights replicated everywhere.
//   fsdp      as dp, but weights are stored Shard(0) on every mesh dim and all-gathered before use
//             (forward and backward each gather once); gradients are reduce-scattered.
//
// The backward pass is written out with the same ops (the matmuls that compute input and weight
// gradients, and the attention core's batched matmuls), since what is planned is its communication; gelu's
// and softmax's derivatives are element-wise products, local in every layout. Gradients are then
// brought to their weights' layouts, which is the data-parallel gradient synchronisation.
#include "model_plan.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "transformer_plan.hpp"

namespace tessera::cli {

const char* model_name(ModelKind kind) {
  switch (kind) {
    case ModelKind::Mlp:
      return "mlp";
    case ModelKind::TransformerBlock:
      return "transformer-block";
    case ModelKind::Transformer:
      return "transformer";
  }
  return "?";
}

const char* strategy_name(Strategy strategy) {
  switch (strategy) {
    case Strategy::Megatron:
      return "megatron";
    case Strategy::Fsdp:
      return "fsdp";
    case Strategy::Dp:
      return "dp";
    case Strategy::FsdpTp:
      return "fsdp+tp";
  }
  return "?";
}

namespace {

// Which mesh dim does what: megatron on a 1-d mesh is tensor parallel only; dp and fsdp use every
// mesh dim for data.
struct MeshRoles {
  std::optional<size_t> tp;
};

MeshRoles roles_of(const ModelPlan& plan) {
  MeshRoles roles;
  if (plan.strategy == Strategy::Megatron) roles.tp = plan.mesh_shape.size() - 1;
  return roles;
}

// The placements of each kind of tensor.
struct Layouts {
  Placements activation;  // [tokens, hidden]
  Placements column;      // a weight into a wider (or head-split) space: [hidden, out]
  Placements row;         // a weight back to hidden: [in, hidden]
  Placements stored;      // fsdp: how weights rest between uses (others: as used)
};

Layouts layouts_of(const ModelPlan& plan) {
  const size_t dims = plan.mesh_shape.size();
  const MeshRoles roles = roles_of(plan);
  Layouts l;
  for (size_t d = 0; d < dims; ++d) {
    const bool tp = roles.tp == d;
    l.activation.push_back(tp ? Placement(Replicate()) : Placement(Shard(0)));
    l.column.push_back(tp ? Placement(Shard(1)) : Placement(Replicate()));
    l.row.push_back(tp ? Placement(Shard(0)) : Placement(Replicate()));
    l.stored.push_back(plan.strategy == Strategy::Fsdp ? Placement(Shard(0)) : Placement(Replicate()));
  }
  return l;
}

// Phases of a layer, each counted on its own.
enum class Phase { Forward, Backward, GradientSync };
const char* phase_name(Phase p) {
  return p == Phase::Forward ? "forward" : p == Phase::Backward ? "backward" : "grad sync";
}

// One weight: as stored, and as the matmuls use it (gathered, for fsdp, once per pass).
struct Weight {
  DTensor stored;
  Placements used;
  DTensor in_use() const { return stored.placements() == used ? stored : stored.redistribute(used); }
};

class StepBuilder {
 public:
  StepBuilder(const ModelPlan& plan, const DeviceMesh& mesh)
      : plan_(plan), mesh_(mesh), layouts_(layouts_of(plan)) {}

  DTensor input() const { return make({plan_.batch * plan_.seq, plan_.hidden}, layouts_.activation); }
  Weight column_weight(int64_t out) const { return weight({plan_.hidden, out}, layouts_.column); }
  Weight row_weight(int64_t in) const { return weight({in, plan_.hidden}, layouts_.row); }

  // A layer's output back in the activation layout (megatron: the row-parallel Partial is summed).
  DTensor as_activation(const DTensor& t) const { return t.redistribute(layouts_.activation); }
  // A weight's gradient brought to the weight's stored layout: the gradient synchronisation.
  static DTensor synced(const DTensor& gradient, const Weight& w) {
    return gradient.redistribute(w.stored.placements());
  }

  const Layouts& layouts() const { return layouts_; }

 private:
  DTensor make(const Shape& shape, const Placements& placements) const {
    Tensor global;
    {
      const auto plain =
          maybe_disable_local_mode();  // the global tensor is plain: distribute_tensor lays it out
      global = zeros(shape, TensorOptions(plan_.dtype).backend(plan_.backend));
    }
    return distribute_tensor(global, mesh_, placements);
  }
  Weight weight(const Shape& shape, const Placements& used) const {
    const Placements stored = plan_.strategy == Strategy::Fsdp ? layouts_.stored : used;
    return {make(shape, stored), used};
  }

  const ModelPlan& plan_;
  const DeviceMesh& mesh_;
  Layouts layouts_;
};

// What a phase issued, as rows of the table.
struct PhaseRecord {
  int64_t layer;
  Phase phase;
  std::vector<CommCounter::Entry> entries;
  std::vector<CommCounter::Implicit> implicit;
};

class Recorder {
 public:
  // Runs `body` with a CommCounter of its own and keeps what it counted.
  template <typename Body>
  void phase(int64_t layer, Phase phase, Body&& body) {
    const CommCounter counter;
    body();
    records_.push_back({layer, phase, counter.entries(), counter.implicit_redistributions()});
  }
  const std::vector<PhaseRecord>& records() const { return records_; }

 private:
  std::vector<PhaseRecord> records_;
};

// Each weight's gradient, in the layout the backward matmuls gave it.
using Gradients = std::vector<std::pair<DTensor, const Weight*>>;

// The MLP block: h = x @ w1, a = gelu(h), y = a @ w2.
struct MlpBlock {
  Weight w1, w2;

  MlpBlock(const StepBuilder& b, const ModelPlan& plan)
      : w1(b.column_weight(plan.ffn)), w2(b.row_weight(plan.ffn)) {}

  struct Saved {
    DTensor x, h, a;
  };
  DTensor forward(const StepBuilder& b, const DTensor& x, std::optional<Saved>& saved) const {
    const DTensor h = matmul(x, w1.in_use());
    const DTensor a = gelu(h);
    saved = Saved{x, h, a};
    return b.as_activation(matmul(a, w2.in_use()));
  }
  // Returns dx; each weight's gradient goes into `gradients`.
  DTensor backward(const StepBuilder& b, const Saved& s, const DTensor& dy, Gradients& gradients) const {
    const DTensor da = matmul(dy, transpose(w2.in_use(), 0, 1));
    gradients.emplace_back(matmul(transpose(s.a, 0, 1), dy), &w2);
    const DTensor dh = mul(da, s.h);  // stands in for gelu'(h) * da: element-wise, same layout
    gradients.emplace_back(matmul(transpose(s.x, 0, 1), dh), &w1);
    return b.as_activation(matmul(dh, transpose(w1.in_use(), 0, 1)));
  }
};

// Multi-head self-attention: q, k, v = x @ wq, wk, wv (heads split), softmax(q k^T) v, then @ wo.
struct AttentionBlock {
  Weight wq, wk, wv, wo;
  int64_t batch, seq, heads, head_dim;

  AttentionBlock(const StepBuilder& b, const ModelPlan& plan)
      : wq(b.column_weight(plan.hidden)),
        wk(b.column_weight(plan.hidden)),
        wv(b.column_weight(plan.hidden)),
        wo(b.row_weight(plan.hidden)),
        batch(plan.batch),
        seq(plan.seq),
        heads(plan.heads),
        head_dim(plan.hidden / plan.heads) {}

  // [tokens, hidden] -> [batch, heads, seq, head_dim] and back. Batch stays dim 0 and heads dim 1, so
  // a batch sharded on dp and heads sharded on tp keep their layouts through the attention core
  // (merging them into one bmm batch dim could not: that dim's shards would not be contiguous).
  DTensor split_heads(const DTensor& t) const {
    return permute(reshape(t, {batch, seq, heads, head_dim}), {0, 2, 1, 3});
  }
  DTensor merge_heads(const DTensor& t) const {
    return reshape(permute(t, {0, 2, 1, 3}), {batch * seq, heads * head_dim});
  }

  struct Saved {
    DTensor x, q, k, v, p, context;
  };
  DTensor forward(const StepBuilder& b, const DTensor& x, std::optional<Saved>& saved) const {
    const DTensor q = split_heads(matmul(x, wq.in_use()));
    const DTensor k = split_heads(matmul(x, wk.in_use()));
    const DTensor v = split_heads(matmul(x, wv.in_use()));
    const DTensor p = softmax(matmul(q, transpose(k, 2, 3)), -1);
    const DTensor context = merge_heads(matmul(p, v));
    saved = Saved{x, q, k, v, p, context};
    return b.as_activation(matmul(context, wo.in_use()));
  }
  DTensor backward(const StepBuilder& b, const Saved& s, const DTensor& dy, Gradients& gradients) const {
    gradients.emplace_back(matmul(transpose(s.context, 0, 1), dy), &wo);
    const DTensor dcontext = split_heads(matmul(dy, transpose(wo.in_use(), 0, 1)));
    const DTensor dv = matmul(transpose(s.p, 2, 3), dcontext);
    const DTensor ds =
        mul(matmul(dcontext, transpose(s.v, 2, 3)), s.p);  // stands in for softmax's derivative
    const DTensor dq = matmul(ds, s.k);
    const DTensor dk = matmul(transpose(ds, 2, 3), s.q);
    std::optional<DTensor> dx;
    const std::pair<const DTensor*, const Weight*> parts[] = {{&dq, &wq}, {&dk, &wk}, {&dv, &wv}};
    for (const auto& [d, w] : parts) {
      const DTensor merged = merge_heads(*d);
      gradients.emplace_back(matmul(transpose(s.x, 0, 1), merged), w);
      const DTensor dx_part = matmul(merged, transpose(w->in_use(), 0, 1));
      dx = dx ? add(*dx, dx_part) : dx_part;
    }
    return b.as_activation(*dx);
  }
};

// One layer: an MLP block, or attention followed by an MLP block (residuals add local terms only).
struct Layer {
  std::optional<AttentionBlock> attention;
  MlpBlock mlp;

  Layer(const StepBuilder& b, const ModelPlan& plan)
      : attention(plan.model == ModelKind::TransformerBlock
                      ? std::optional<AttentionBlock>(AttentionBlock(b, plan))
                      : std::nullopt),
        mlp(b, plan) {}
};

void print_header(const ModelPlan& plan, const Layouts& layouts) {
  std::cout << fmt::format(
                   "model       {}: {} layer(s), hidden {}, ffn {}{}, batch {} x seq {} = {} tokens, {}\n",
                   model_name(plan.model), plan.layers, plan.hidden, plan.ffn,
                   plan.model == ModelKind::TransformerBlock ? fmt::format(", {} heads", plan.heads) : "",
                   plan.batch, plan.seq, plan.batch * plan.seq, dtype_name(plan.dtype))
            << fmt::format("mesh        [{}] ({} ranks; dims {})\n", fmt::join(plan.mesh_shape, ", "),
                           plan.world, fmt::join(plan.names, ", "))
            << fmt::format("placements  {}: activations {}, column weights {}, row weights {}{}\n",
                           strategy_name(plan.strategy), placements_text(layouts.activation),
                           placements_text(layouts.column), placements_text(layouts.row),
                           plan.strategy == Strategy::Fsdp ? fmt::format(" (stored {}, gathered for use)",
                                                                         placements_text(layouts.stored))
                                                           : "")
            << fmt::format("backend     {}\n", plan.backend)
            << fmt::format("topology    {}\n", default_topology(static_cast<int>(plan.world)).name());
}

void print_records(const std::vector<PhaseRecord>& records) {
  std::cout << fmt::format("\n{:>5}  {:<9}  {:<14}  {:<8}  {:<9}  {:>5}  {:>12}  {:>12}\n", "layer", "phase",
                           "collective", "mesh dim", "algorithm", "calls", "bytes/rank", "est. time");
  double total_seconds = 0;
  int64_t total_bytes = 0;
  for (const PhaseRecord& r : records) {
    if (r.entries.empty()) std::cout << fmt::format("{:>5}  {:<9}  (none)\n", r.layer, phase_name(r.phase));
    for (const CommCounter::Entry& e : r.entries) {
      std::cout << fmt::format("{:>5}  {:<9}  {:<14}  {:<8}  {:<9}  {:>5}  {:>12}  {:>9.3f} ms\n", r.layer,
                               phase_name(r.phase), e.collective, e.mesh_dim, e.algorithm, e.calls,
                               bytes_text(e.bytes_per_rank), e.seconds * 1e3);
      total_seconds += e.seconds;
      total_bytes += e.bytes_per_rank;
    }
    for (const CommCounter::Implicit& i : r.implicit)
      std::cout << fmt::format("{:>5}  {:<9}  implicit: {} input {} {} -> {}\n", r.layer, phase_name(r.phase),
                               i.op, i.input, i.from, i.to);
  }
  std::cout << fmt::format("\nstep: {} per rank communicated, estimated communication time {:.3f} ms\n",
                           bytes_text(total_bytes), total_seconds * 1e3);
}

}  // namespace

ScopedTopology::ScopedTopology(const std::string& preset) {
  if (preset.empty()) return;
  saved_ = default_topology_preset();
  set_default_topology(preset);
}

ScopedTopology::~ScopedTopology() {
  try {
    if (saved_) set_default_topology(*saved_);
  } catch (const std::exception&) {  // it was valid when saved; nothing useful to report
  }
}

int plan_model(const ModelPlan& plan) {
  if (plan.model == ModelKind::Transformer) return plan.pp > 1 ? plan_pipeline(plan) : plan_transformer(plan);
  const ScopedTopology topology(plan.topology);

  LocalMode mode(static_cast<int>(plan.world));
  const DeviceMesh mesh = init_device_mesh(plan.backend, plan.mesh_shape, plan.names);
  const StepBuilder builder(plan, mesh);
  std::vector<Layer> layers;
  for (int64_t i = 0; i < plan.layers; ++i) layers.emplace_back(builder, plan);
  const DTensor input = builder.input();

  std::unique_ptr<TraceScope> trace;
  if (!plan.trace.empty()) trace = std::make_unique<TraceScope>(plan.trace);
  Recorder recorder;
  struct Activations {
    std::optional<AttentionBlock::Saved> attention;
    std::optional<MlpBlock::Saved> mlp;
  };
  std::vector<Activations> saved(layers.size());
  DTensor x = input;
  for (size_t i = 0; i < layers.size(); ++i) {
    recorder.phase(static_cast<int64_t>(i + 1), Phase::Forward, [&] {
      if (layers[i].attention) x = add(x, layers[i].attention->forward(builder, x, saved[i].attention));
      x = add(x, layers[i].mlp.forward(builder, x, saved[i].mlp));
    });
  }
  DTensor dy = x;  // the loss gradient has the output's layout
  for (size_t i = layers.size(); i-- > 0;) {
    Gradients gradients;
    recorder.phase(static_cast<int64_t>(i + 1), Phase::Backward, [&] {
      dy = add(dy, layers[i].mlp.backward(builder, *saved[i].mlp, dy, gradients));
      if (layers[i].attention)
        dy = add(dy, layers[i].attention->backward(builder, *saved[i].attention, dy, gradients));
    });
    recorder.phase(static_cast<int64_t>(i + 1), Phase::GradientSync, [&] {
      for (const auto& [gradient, weight] : gradients) StepBuilder::synced(gradient, *weight);
    });
  }
  if (trace) trace->close();

  print_header(plan, builder.layouts());
  print_records(recorder.records());
  if (!plan.trace.empty()) std::cout << fmt::format("trace written to {}\n", plan.trace);
  return 0;
}

}  // namespace tessera::cli
