#include "comm/labels.hpp"

#include <utility>

namespace tessera::comm {
namespace {

// Per thread (a rank's program carries its own across switches: thread_labels_at).
thread_local std::string label_mesh_dim;
thread_local std::string label_op;

}  // namespace

const std::string& current_mesh_dim() { return label_mesh_dim; }
const std::string& current_op() { return label_op; }

void set_labels(std::string mesh_dim, std::string op) {
  label_mesh_dim = std::move(mesh_dim);
  if (!op.empty()) label_op = std::move(op);
}

void restore_labels(std::string mesh_dim, std::string op) {
  label_mesh_dim = std::move(mesh_dim);
  label_op = std::move(op);
}

LabelScope::LabelScope(std::string mesh_dim, std::string op)
    : saved_mesh_dim_(label_mesh_dim), saved_op_(label_op) {
  set_labels(std::move(mesh_dim), std::move(op));
}

LabelScope::~LabelScope() { restore_labels(std::move(saved_mesh_dim_), std::move(saved_op_)); }

ThreadLabelsAt thread_labels_at() { return {&label_mesh_dim, &label_op}; }

}  // namespace tessera::comm
