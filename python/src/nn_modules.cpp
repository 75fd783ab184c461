// The built-in modules (PyTorch: torch.nn.Linear, Embedding, LayerNorm, RMSNorm, Dropout, ReLU,
// Sequential, ModuleList) with PyTorch's constructor arguments. Each forward runs the C++ module
// (its hooks included) without the GIL: a parallelized module may run collectives.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "nn_values.hpp"

namespace tessera::python {

std::vector<int64_t> normalized_shape_from(nb::handle shape) {
  if (nb::isinstance<nb::int_>(shape)) return {nb::cast<int64_t>(shape)};
  std::vector<int64_t> out;
  if (!nb::try_cast(shape, out))
    throw nb::type_error(
        ("normalized_shape must be an int or a sequence of ints, got " + describe(shape)).c_str());
  return out;
}

namespace {

// device= names the backend ("cpu", "meta" for shapes only); None is the default backend.
std::string backend_from(const std::optional<std::string>& device) { return device.value_or(""); }

// The Python handle of a parameter that may be absent (bias=False): None then.
nb::object optional_parameter(const nn::Parameter& p) { return p.defined() ? nb::cast(p) : nb::none(); }

template <class Impl>
nn::Value forward_of(Impl& module, const nn::Value& x) {
  return without_gil([&] { return module.forward(x); });
}

// Sequential runs each step's typed forward; these are the module types a step may be.
template <class... Impls>
bool push_typed(nn::SequentialImpl& sequential, const std::shared_ptr<nn::Module>& module) {
  return ([&] {
    if (auto typed = std::dynamic_pointer_cast<Impls>(module)) {
      sequential.push_back(typed);
      return true;
    }
    return false;
  }() || ...);
}

void push_step(nn::SequentialImpl& sequential, const std::shared_ptr<nn::Module>& module, size_t index) {
  if (!push_typed<nn::LinearImpl, nn::EmbeddingImpl, nn::LayerNormImpl, nn::RMSNormImpl, nn::DropoutImpl,
                  nn::ReLUImpl, nn::SequentialImpl>(sequential, module))
    throw nb::type_error(
        ("nn.Sequential: module " + std::to_string(index) + " is a " + module->name() +
         "; a step must be a Linear, Embedding, LayerNorm, RMSNorm, Dropout, ReLU or Sequential")
            .c_str());
}

}  // namespace

void bind_nn_modules(nb::module_& nn) {
  nb::class_<nn::LinearImpl, nn::Module>(
      nn, "Linear", "y = x W^T + b with W [out_features, in_features] (PyTorch: torch.nn.Linear).")
      .def(
          "__init__",
          [](nn::LinearImpl* self, int64_t in_features, int64_t out_features, bool bias,
             const std::optional<std::string>& device, const std::optional<DType>& dtype) {
            new (self) nn::LinearImpl(nn::LinearOptions(in_features, out_features)
                                          .bias(bias)
                                          .dtype(dtype.value_or(kFloat32))
                                          .backend(backend_from(device)));
          },
          nb::arg("in_features"), nb::arg("out_features"), nb::arg("bias") = true,
          nb::arg("device") = nb::none(), nb::arg("dtype") = nb::none(),
          "Weights U(-k, k), k = 1/sqrt(in_features), from the default generator.")
      .def("forward", &forward_of<nn::LinearImpl>, nb::arg("input"), "x @ weight.T + bias.")
      .def_prop_ro("weight", [](const nn::LinearImpl& m) { return m.weight; })
      .def_prop_ro("bias", [](const nn::LinearImpl& m) { return optional_parameter(m.bias); })
      .def_prop_ro("in_features", [](const nn::LinearImpl& m) { return m.options.in_features(); })
      .def_prop_ro("out_features", [](const nn::LinearImpl& m) { return m.options.out_features(); });

  nb::class_<nn::EmbeddingImpl, nn::Module>(
      nn, "Embedding", "A lookup table [num_embeddings, embedding_dim] (PyTorch: torch.nn.Embedding).")
      .def(
          "__init__",
          [](nn::EmbeddingImpl* self, int64_t num_embeddings, int64_t embedding_dim,
             const std::optional<std::string>& device, const std::optional<DType>& dtype) {
            new (self) nn::EmbeddingImpl(nn::EmbeddingOptions(num_embeddings, embedding_dim)
                                             .dtype(dtype.value_or(kFloat32))
                                             .backend(backend_from(device)));
          },
          nb::arg("num_embeddings"), nb::arg("embedding_dim"), nb::kw_only(), nb::arg("device") = nb::none(),
          nb::arg("dtype") = nb::none(), "Weights N(0, 1) from the default generator.")
      .def("forward", &forward_of<nn::EmbeddingImpl>, nb::arg("input"), "The rows of weight at the indices.")
      .def_prop_ro("weight", [](const nn::EmbeddingImpl& m) { return m.weight; });

  nb::class_<nn::LayerNormImpl, nn::Module>(nn, "LayerNorm",
                                            "Layer normalization (PyTorch: torch.nn.LayerNorm).")
      .def(
          "__init__",
          [](nn::LayerNormImpl* self, nb::handle normalized_shape, double eps, bool elementwise_affine,
             bool bias, const std::optional<std::string>& device, const std::optional<DType>& dtype) {
            const auto shape = normalized_shape_from(normalized_shape);
            new (self) nn::LayerNormImpl(nn::LayerNormOptions(shape)
                                             .eps(eps)
                                             .elementwise_affine(elementwise_affine)
                                             .bias(bias)
                                             .dtype(dtype.value_or(kFloat32))
                                             .backend(backend_from(device)));
          },
          nb::arg("normalized_shape"), nb::arg("eps") = 1e-5, nb::arg("elementwise_affine") = true,
          nb::arg("bias") = true, nb::arg("device") = nb::none(), nb::arg("dtype") = nb::none(),
          "Normalizes over the last dims (normalized_shape); weight ones and bias zeros.")
      .def("forward", &forward_of<nn::LayerNormImpl>, nb::arg("input"), "The normalized input.")
      .def_prop_ro("weight", [](const nn::LayerNormImpl& m) { return optional_parameter(m.weight); })
      .def_prop_ro("bias", [](const nn::LayerNormImpl& m) { return optional_parameter(m.bias); });

  nb::class_<nn::RMSNormImpl, nn::Module>(nn, "RMSNorm",
                                          "Root-mean-square normalization (PyTorch: torch.nn.RMSNorm).")
      .def(
          "__init__",
          [](nn::RMSNormImpl* self, nb::handle normalized_shape, std::optional<double> eps,
             bool elementwise_affine, const std::optional<std::string>& device,
             const std::optional<DType>& dtype) {
            const auto shape = normalized_shape_from(normalized_shape);
            new (self) nn::RMSNormImpl(nn::RMSNormOptions(shape)
                                           .eps(eps)
                                           .elementwise_affine(elementwise_affine)
                                           .dtype(dtype.value_or(kFloat32))
                                           .backend(backend_from(device)));
          },
          nb::arg("normalized_shape"), nb::arg("eps") = nb::none(), nb::arg("elementwise_affine") = true,
          nb::arg("device") = nb::none(), nb::arg("dtype") = nb::none(),
          "x / sqrt(mean(x^2) + eps) * weight; eps None is the machine epsilon of the input's dtype.")
      .def("forward", &forward_of<nn::RMSNormImpl>, nb::arg("input"), "The normalized input.")
      .def_prop_ro("weight", [](const nn::RMSNormImpl& m) { return optional_parameter(m.weight); });

  nb::class_<nn::DropoutImpl, nn::Module>(
      nn, "Dropout", "Zeroes elements with probability p in training mode (PyTorch: torch.nn.Dropout).")
      .def(
          "__init__",
          [](nn::DropoutImpl* self, double p) { new (self) nn::DropoutImpl(nn::DropoutOptions(p)); },
          nb::arg("p") = 0.5,
          "p: the probability of an element being zeroed; the rest are scaled by 1/(1-p).")
      .def("forward", &forward_of<nn::DropoutImpl>, nb::arg("input"),
           "The input with dropout applied (training).")
      .def_prop_ro("p", [](const nn::DropoutImpl& m) { return m.options.p(); });

  nb::class_<nn::ReLUImpl, nn::Module>(nn, "ReLU", "max(x, 0) elementwise (PyTorch: torch.nn.ReLU).")
      .def(nb::init<>(), "A ReLU module (no parameters).")
      .def("forward", &forward_of<nn::ReLUImpl>, nb::arg("input"), "max(input, 0).");

  nb::class_<nn::SequentialImpl, nn::Module>(nn, "Sequential",
                                             "Modules called one after another; children named '0', '1', ... "
                                             "(PyTorch: torch.nn.Sequential).")
      .def(
          "__init__",
          [](nn::SequentialImpl* self, nb::args modules) {
            new (self) nn::SequentialImpl();
            size_t index = 0;
            for (nb::handle module : modules)
              push_step(*self, nb::cast<std::shared_ptr<nn::Module>>(module), index++);
          },
          "The modules in order (each a built-in module with one input).")
      .def(
          "append",
          [](nb::handle self, std::shared_ptr<nn::Module> module) {
            auto& sequential = nb::cast<nn::SequentialImpl&>(self);
            push_step(sequential, module, sequential.size());
            return nb::borrow(self);
          },
          nb::arg("module"), "Adds a step at the end; returns the Sequential.")
      .def("forward", &forward_of<nn::SequentialImpl>, nb::arg("input"),
           "Each step's output fed to the next.")
      .def("__len__", &nn::SequentialImpl::size)
      .def("__getitem__", [](nn::SequentialImpl& m, int64_t index) {
        const auto children = m.children();
        const int64_t n = static_cast<int64_t>(children.size());
        if (index < -n || index >= n)
          throw nb::index_error(("Sequential index " + std::to_string(index) + " out of range for " +
                                 std::to_string(n) + " modules")
                                    .c_str());
        return children[static_cast<size_t>(index < 0 ? index + n : index)];
      });

  nb::class_<nn::ModuleListImpl, nn::Module>(
      nn, "ModuleList", "A list of submodules named '0', '1', ... (PyTorch: torch.nn.ModuleList).")
      .def(
          "__init__",
          [](nn::ModuleListImpl* self, nb::handle modules) {
            new (self) nn::ModuleListImpl();
            if (!modules.is_none())
              for (nb::handle module : nb::iter(modules))
                self->push_back(nb::cast<std::shared_ptr<nn::Module>>(module));
          },
          nb::arg("modules") = nb::none(), "The modules of an iterable, in order (empty by default).")
      .def(
          "append",
          [](nb::handle self, std::shared_ptr<nn::Module> module) {
            nb::cast<nn::ModuleListImpl&>(self).push_back(std::move(module));
            return nb::borrow(self);
          },
          nb::arg("module"), "Adds a module at the end; returns the list.")
      .def("__len__", &nn::ModuleListImpl::size)
      .def("__iter__", [](const nn::ModuleListImpl& m) { return nb::iter(nb::cast(m.children())); })
      .def("__getitem__", [](const nn::ModuleListImpl& m, int64_t index) {
        const int64_t n = static_cast<int64_t>(m.size());
        if (index < -n || index >= n)
          throw nb::index_error(("ModuleList index " + std::to_string(index) + " out of range for " +
                                 std::to_string(n) + " modules")
                                    .c_str());
        return m[static_cast<size_t>(index < 0 ? index + n : index)];
      });
}

}  // namespace tessera::python
