#include "autograd/engine.hpp"

#include <fmt/format.h>

#include <queue>
#include <unordered_map>

#include "autograd/accumulate_grad.hpp"
#include "tessera/autograd.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/errors.hpp"
#include "tessera/ops.hpp"

namespace tessera::autograd {
namespace {

thread_local bool capturing = false;

// Sets `capturing` for one backward, restoring it after (a backward may run inside another's node).
class CapturingScope {
 public:
  explicit CapturingScope(bool value) : previous_(capturing) { capturing = value; }
  ~CapturingScope() { capturing = previous_; }
  CapturingScope(const CapturingScope&) = delete;
  CapturingScope& operator=(const CapturingScope&) = delete;

 private:
  bool previous_;
};

struct LaterFirst {
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

// How many edges lead into each node reachable from the roots.
std::unordered_map<Node*, int> count_dependencies(const std::vector<Edge>& roots) {
  std::unordered_map<Node*, int> dependencies;
  std::vector<Node*> stack;
  for (const Edge& root : roots)
    if (root.node && dependencies.emplace(root.node.get(), 0).second) stack.push_back(root.node.get());
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (const auto& [edge, meta] : node->next_edges) {
      if (!edge.node) continue;
      auto [it, first_visit] = dependencies.emplace(edge.node.get(), 0);
      ++it->second;
      if (first_visit) stack.push_back(edge.node.get());
    }
  }
  return dependencies;
}

void accumulate(Tensor& slot, Tensor grad) { slot = slot.defined() ? add(slot, grad) : std::move(grad); }

// A gradient as the user sees it (retained, captured): its terms combined.
Tensor combined(const Tensor& grad, const PartialGrad& partial) {
  PartialGrad terms = partial;
  return combine_except(grad, terms, nullptr);
}

void keep_retained_grads(Node& node, const std::vector<Tensor>& grads,
                         const std::vector<PartialGrad>& partials) {
  for (size_t i = 0; i < node.retained.size() && i < grads.size(); ++i) {
    std::shared_ptr<AutogradMeta> meta = node.retained[i].lock();
    if (!meta || !grads[i].defined()) continue;
    accumulate_into(meta->grad, combined(grads[i], partials[i]));
  }
}

// The gradients of a node's outputs with one terms state for all of them, which the node's policy
// then narrows (combining what it does not pass on).
PartialGrad common_partial(Node& node, std::vector<Tensor>& grads, std::vector<PartialGrad>& partials) {
  const PartialGrad* first = nullptr;
  bool alike = true;
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) continue;
    if (first == nullptr)
      first = &partials[i];
    else
      alike = alike && first->same_as(partials[i]);
  }
  if (first == nullptr) return {};
  PartialGrad common = alike ? *first : PartialGrad{};
  if (!alike)
    for (size_t i = 0; i < grads.size(); ++i)
      if (grads[i].defined()) grads[i] = combine_except(std::move(grads[i]), partials[i], nullptr);
  if (node.partial_policy.kind == PartialPolicy::Kind::Consume) return common;
  const PartialGrad before = common;
  for (Tensor& g : grads) {
    if (!g.defined()) continue;
    common = before;
    g = combine_except(std::move(g), common, &node.partial_policy);
  }
  return common;
}

}  // namespace

bool capturing_gradients() { return capturing; }

Tensor fit_to_input(Tensor grad, const InputMeta& meta) {
  if (grad.dtype() != meta.dtype) grad = grad.to(meta.dtype);
  if (meta.local && !grad.is_local()) {
    RankMap<Tensor> shards;
    for (int rank : meta.ranks) shards.set(rank, grad);
    grad = local_tensor(std::move(shards));
  }
  return grad;
}

void run_backward(const std::vector<Edge>& roots, const std::vector<Tensor>& seeds, bool retain_graph,
                  std::map<CaptureSlot, Tensor>* captures) {
  NoGradGuard no_recording;  // backward computes gradients; it does not record how
  const CapturingScope scope(captures != nullptr);
  std::unordered_map<Node*, int> dependencies = count_dependencies(roots);
  // Per node waiting to run: its outputs' gradients so far, and their terms states.
  struct Buffer {
    std::vector<Tensor> grads;
    std::vector<PartialGrad> partials;
  };
  std::unordered_map<Node*, Buffer> buffers;
  auto buffer_of = [&](Node* node) -> Buffer& {
    Buffer& buffer = buffers[node];
    if (buffer.grads.size() < node->num_outputs()) {
      buffer.grads.resize(node->num_outputs());
      buffer.partials.resize(node->num_outputs());
    }
    return buffer;
  };

  std::priority_queue<Node*, std::vector<Node*>, LaterFirst> ready;
  for (size_t i = 0; i < roots.size(); ++i) {
    if (!roots[i].node) continue;
    accumulate(buffer_of(roots[i].node.get()).grads[roots[i].input_nr], seeds[i]);
  }
  for (const Edge& root : roots) {
    if (!root.node) continue;
    int& pending = dependencies[root.node.get()];
    if (pending == 0) {
      ready.push(root.node.get());
      pending = -1;  // queued once even when several roots share the node
    }
  }

  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    Buffer buffer = std::move(buffer_of(node));
    buffers.erase(node);
    std::vector<Tensor>& grads = buffer.grads;
    if (captures)
      for (size_t i = 0; i < grads.size(); ++i)
        if (auto it = captures->find({node, static_cast<uint32_t>(i)});
            it != captures->end() && grads[i].defined())
          accumulate(it->second, combined(grads[i], buffer.partials[i]));
    keep_retained_grads(*node, grads, buffer.partials);

    bool any = false;
    for (const Tensor& g : grads) any = any || g.defined();
    std::vector<Tensor> outputs;
    PartialGrad partial;  // of every gradient this node hands on
    const bool skip = !any || (captures != nullptr && is_accumulator(*node));
    if (!skip) {
      if (node->released)
        throw Error(
            fmt::format("backward: trying to go through {} a second time, but its saved values were freed "
                        "by the first backward; pass retain_graph=true to the first backward to go "
                        "through a graph more than once",
                        node->name()));
      partial = common_partial(*node, grads, buffer.partials);
      outputs = node->partial_policy.kind == PartialPolicy::Kind::Consume
                    ? node->apply_partial(grads, partial)
                    : node->apply(grads);
      if (!retain_graph) node->release_saved();
    }

    for (size_t i = 0; i < node->next_edges.size(); ++i) {
      const auto& [edge, meta] = node->next_edges[i];
      if (!edge.node) continue;
      if (i < outputs.size() && outputs[i].defined()) {
        Buffer& next = buffer_of(edge.node.get());
        add_gradient(next.grads[edge.input_nr], next.partials[edge.input_nr],
                     fit_to_input(std::move(outputs[i]), meta), partial);
      }
      if (--dependencies[edge.node.get()] == 0) ready.push(edge.node.get());
    }
  }
}

}  // namespace tessera::autograd
