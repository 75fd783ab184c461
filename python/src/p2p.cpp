// Point-to-point messages of ts.dist in rank programs (ts.spawn) and pipelines (PyTorch:
// torch.distributed.isend, irecv, batch_isend_irecv, P2POp): isend and irecv return a work handle
// whose wait() lets the other ranks run until the message is in. send/recv (blocking, with tags)
// are bound beside the collectives (dist.cpp).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "bindings.hpp"

namespace tessera::python {
namespace {

// What P2POp takes as its op: ts.dist.isend or ts.dist.irecv themselves, as PyTorch.
bool is_send_op(nb::handle op, nb::handle isend, nb::handle irecv) {
  if (op.is(isend)) return true;
  if (op.is(irecv)) return false;
  throw nb::type_error(("P2POp: op must be ts.dist.isend or ts.dist.irecv, got " + describe(op)).c_str());
}

}  // namespace

void bind_p2p(nb::module_& py_dist) {
  nb::class_<dist::Work>(py_dist, "P2PWork",
                         "The handle of an isend or irecv that may still be in flight (PyTorch: Work).")
      .def(
          "wait",
          [](dist::Work& work) {
            without_gil([&] { work.wait(); });
            return true;
          },
          "Returns True once the operation has completed, letting the other ranks run meanwhile; raises what "
          "made it fail (a message of the wrong shape or dtype).")
      .def("is_completed", &dist::Work::is_completed, "Whether the operation has completed.");

  py_dist.def(
      "isend",
      [](const Tensor& tensor, nb::handle dst, int tag) {
        const SymInt peer = sym_int_from(dst);
        return without_gil([&] { return dist::isend(tensor, peer, tag); });
      },
      nb::arg("tensor"), nb::arg("dst"), nb::arg("tag") = 0,
      "Sends tensor to global rank dst and returns at once (the message is buffered).");
  py_dist.def(
      "irecv",
      [](Tensor& tensor, nb::handle src, int tag) {
        const SymInt peer = sym_int_from(src);
        return without_gil([&] { return dist::irecv(tensor, peer, tag); });
      },
      nb::arg("tensor"), nb::arg("src"), nb::arg("tag") = 0,
      "Posts a receive into tensor of the oldest message from global rank src with this tag; returns at "
      "once, wait() for the values.");

  struct P2POp {
    bool send;
    Tensor tensor;
    SymInt peer;
    int tag;
  };
  nb::handle isend = py_dist.attr("isend");
  nb::handle irecv = py_dist.attr("irecv");
  nb::class_<P2POp>(py_dist, "P2POp",
                    "One operation of batch_isend_irecv: P2POp(ts.dist.isend, t, peer, tag).")
      .def(
          "__init__",
          [isend, irecv](P2POp* self, nb::handle op, const Tensor& tensor, nb::handle peer, int tag) {
            new (self) P2POp{is_send_op(op, isend, irecv), tensor, sym_int_from(peer), tag};
          },
          nb::arg("op"), nb::arg("tensor"), nb::arg("peer"), nb::arg("tag") = 0,
          "op is ts.dist.isend or ts.dist.irecv; peer a global rank.")
      .def_prop_ro("op", [isend, irecv](const P2POp& o) { return nb::borrow(o.send ? isend : irecv); })
      .def_prop_ro("tensor", [](const P2POp& o) { return o.tensor; })
      .def_prop_ro("peer", [](const P2POp& o) { return to_python(o.peer); })
      .def_prop_ro("tag", [](const P2POp& o) { return o.tag; });
  py_dist.def(
      "batch_isend_irecv",
      [](const std::vector<P2POp>& ops) {
        std::vector<dist::P2POp> native;
        for (const P2POp& o : ops)
          native.push_back(o.send ? dist::P2POp(&dist::isend, o.tensor, o.peer, o.tag)
                                  : dist::P2POp(&dist::irecv, o.tensor, o.peer, o.tag));
        return without_gil([&] { return dist::batch_isend_irecv(native); });
      },
      nb::arg("p2p_op_list"), "Issues every operation in order; returns their work handles in that order.");
}

}  // namespace tessera::python
