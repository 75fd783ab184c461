#include "tessera/backend_info.hpp"

#include <algorithm>

#include "dispatch/backends.hpp"
#include "dispatch/call_needs.hpp"
#include "plugin/validation.hpp"

namespace tessera {

BackendCapabilities backend_capabilities(const std::string& name) {
  const std::shared_ptr<const dispatch::Backend> backend = dispatch::backend(name);
  BackendCapabilities capabilities;
  capabilities.backend = backend->name();
  capabilities.plugin = backend->plugin().info().name;
  capabilities.shapes_only = backend->shapes_only();
  const auto catalogue = plugin::kernel_catalogue();
  capabilities.catalogue_size = catalogue.size();
  for (std::string_view op : catalogue) {
    BackendCapabilities::Op served{std::string(op), {}};
    for (int i = 0; i < kNumDTypes; ++i)
      if (backend->find_kernel(op, static_cast<DType>(i)) != nullptr)
        served.dtypes.push_back(static_cast<DType>(i));
    if (served.dtypes.empty())
      capabilities.missing_ops.push_back(served.name);
    else
      capabilities.ops.push_back(std::move(served));
  }
  // A call counts as unserved when an op it needs has no kernel in any dtype; one served in some
  // dtypes only is the dtype's concern, which the missing-kernel error reports when it happens.
  for (const dispatch::CallNeeds& needs : dispatch::call_needs()) {
    BackendCapabilities::Call call{std::string(needs.call), std::string(needs.variant), {}};
    for (std::string_view op : needs.ops)
      if (std::find(capabilities.missing_ops.begin(), capabilities.missing_ops.end(), op) !=
          capabilities.missing_ops.end())
        call.missing.emplace_back(op);
    if (!call.missing.empty()) capabilities.unserved_calls.push_back(std::move(call));
  }
  return capabilities;
}

}  // namespace tessera
