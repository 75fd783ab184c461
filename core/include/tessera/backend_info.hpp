// What a backend can do: the kernels it serves, measured against the kernel catalogue
// (sdk/KERNELS.md), and which user calls it cannot serve for want of a kernel. `tessera plugins
// --verbose` prints this for every backend on the plugin search path.
#pragma once

#include <string>
#include <vector>

#include "tessera/dtype.hpp"

namespace tessera {

struct BackendCapabilities {
  struct Op {
    std::string name;           // a catalogue op, e.g. "add"
    std::vector<DType> dtypes;  // the key dtypes it has a kernel for, in DType order
  };
  struct Call {
    std::string call;                  // e.g. "ts::allclose"
    std::string variant;               // e.g. "SUM" for an all_reduce; "" when the call has one form
    std::vector<std::string> missing;  // the ops it needs that have no kernel here in any dtype
  };
  std::string backend;
  std::string plugin;  // the plugin that provides it, e.g. "backend-cpu"
  bool shapes_only = false;
  std::vector<Op> ops;                   // catalogue ops with at least one kernel, catalogue order
  std::vector<std::string> missing_ops;  // catalogue ops with no kernel at all
  size_t catalogue_size = 0;             // ops in this host's catalogue
  std::vector<Call> unserved_calls;      // sdk/KERNELS.md "What each call needs" calls it cannot run
};

// The capabilities of the named backend, loading its plugin when it is not loaded yet (an Error
// naming the backend and the ones available when there is none).
BackendCapabilities backend_capabilities(const std::string& backend);

}  // namespace tessera
