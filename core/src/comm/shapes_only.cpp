#include "comm/shapes_only.hpp"

#include <algorithm>

#include "tensor/tensor_impl.hpp"

namespace tessera::comm {

bool shapes_only(const std::vector<Tensor>& inputs) {
  // One collective's buffers share one backend (the kernels that would move the data check it).
  const auto hosted = std::find_if(inputs.begin(), inputs.end(), [](const Tensor& t) { return t.defined(); });
  return hosted != inputs.end() && hosted->impl()->backend().shapes_only();
}

std::vector<Tensor> outputs_without_data(const tessera_collective_request& request,
                                         const std::vector<Tensor>& inputs) {
  std::vector<Tensor> outputs(inputs.size());
  for (size_t r = 0; r < inputs.size(); ++r) {
    if (!inputs[r].defined()) continue;  // hosted by another process
    const TensorImpl& input = *inputs[r].impl();
    const int64_t count = io_sizes(request, static_cast<int>(r)).second;
    outputs[r] = Tensor(TensorImpl::allocate({count}, input.dtype(), input.backend_ptr()));
  }
  return outputs;
}

}  // namespace tessera::comm
