// Functional collectives (PyTorch: torch.distributed._functional_collectives): like the in-place
// ones of dist.hpp, but each returns a new local tensor and leaves its input as it was, so they
// can be recorded by autograd. The input must be a local tensor; with a group, every fibre runs
// on its own, and every rank of the input must be a member of one of the group's fibres. Roots are
// group ranks.
//
// Differentiable when the input requires grad:
//   all_reduce           SUM, AVG, PREMUL_SUM: backward is the same all_reduce of the gradient
//                        (other ops are an error while the input requires grad);
//   all_gather_tensor    backward is reduce_scatter_tensor (SUM) of the gradient along gather_dim;
//   reduce_scatter_tensor SUM, AVG, PREMUL_SUM: backward is all_gather_tensor of the gradient
//                        along scatter_dim, scaled as the op scales;
//   all_to_all_single    backward is all_to_all_single of the gradient with the splits swapped;
//   broadcast            backward sums the members' gradients into src's input; every other
//                        member's input gets zeros.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/dist.hpp"
#include "tessera/process_group.hpp"
#include "tessera/sym_int.hpp"
#include "tessera/tensor.hpp"

namespace tessera::dist::functional {

// Every member gets op over the members' inputs.
Tensor all_reduce(const Tensor& input, ReduceOp op = ReduceOp::SUM, const ProcessGroup& group = {});
// Every member gets the members' inputs concatenated along gather_dim, in group-rank order.
Tensor all_gather_tensor(const Tensor& input, int64_t gather_dim = 0, const ProcessGroup& group = {});
// The input's scatter_dim is split into group-size equal blocks; group rank i gets op over every
// member's block i.
Tensor reduce_scatter_tensor(const Tensor& input, ReduceOp op = ReduceOp::SUM, int64_t scatter_dim = 0,
                             const ProcessGroup& group = {});
// Member j's output is the concatenation along dim 0 of what each member i sends it: rows of i's
// input split by input_splits (empty = equal splits). output_splits (empty = equal splits of as
// many rows as the input has) says how many rows each member receives from each.
Tensor all_to_all_single(const Tensor& input, const std::vector<SymInt>& output_splits = {},
                         const std::vector<SymInt>& input_splits = {}, const ProcessGroup& group = {});
// Every member gets group rank src's input.
Tensor broadcast(const Tensor& input, int src, const ProcessGroup& group = {});

// Differentiable point-to-point, inside a rank's program (ts::spawn), on its plain tensors:
//
//   rank 0:  ts::Tensor h = f0(x);                       rank 1:  ts::Tensor h = recv(like, 0, 7);
//            ts::Tensor token = send(h, 1, 7);                    ts::Tensor loss = f1(h);
//            token.backward();  // after rank 1's                 loss.backward();  // sends dh to 0
//
// send(t, dst, tag) sends t as dist::send does (eager) and returns a 0-d token. When t requires
// grad, token.backward() waits for the gradient of t that dst's recv passes back and continues
// backward into t's graph (the token's own gradient is ignored); otherwise the token does not
// require grad. recv(like, src, tag) receives a fresh tensor shaped and typed like `like` (whose
// values are not read); with grad mode on it requires grad, and its backward sends its gradient to
// src. Gradients travel apart from user messages: any tag may be used by both at once. A recv whose
// result gets no gradient sends none, and then the sender's token.backward() waits forever: a
// deadlock that spawn reports.
Tensor send(const Tensor& t, int dst, int tag = 0);
Tensor recv(const Tensor& like, int src, int tag = 0);

}  // namespace tessera::dist::functional
