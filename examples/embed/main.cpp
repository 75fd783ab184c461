// A host application embedding Tessera: it configures Tessera from a tessera.toml, runs the same small
// computation on two backends (the default one, which the example's tessera.toml sets to the
// out-of-tree "naive" plugin, and the bundled "cpu" one) and checks that the results agree.
//
//   tessera-embed path/to/tessera.toml
//
// Exit status: 0 when the backends agree, 1 when they do not or anything fails, 2 on bad usage.
#include <exception>
#include <iostream>
#include <string>
#include <tessera/tessera.hpp>

namespace {

struct Results {
  tessera::Tensor product;  // a @ b
  tessera::Tensor shifted;  // a @ b + 1
  tessera::Tensor total;    // the sum of all elements of `shifted`
};

// The computation, on the backend `on` names (no name: the default backend).
Results compute(const tessera::TensorOptions& on) {
  const tessera::Tensor a = tessera::tensor({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}, on);
  const tessera::Tensor b = tessera::tensor({{0.5f, -1.f}, {2.f, 0.25f}, {-1.5f, 3.f}}, on);
  Results r;
  r.product = tessera::matmul(a, b);
  r.shifted = tessera::add(r.product, tessera::ones({2, 2}, on));
  r.total = r.shifted.sum();
  return r;
}

// An operation never mixes backends, so the values are brought to one ("cpu") before comparing.
bool agree(const tessera::Tensor& x, const tessera::Tensor& y) {
  const tessera::TensorOptions cpu = tessera::TensorOptions().backend("cpu");
  return x.shape() == y.shape() &&
         tessera::allclose(tessera::from_values(x.to_vector<float>(), x.sizes(), cpu),
                           tessera::from_values(y.to_vector<float>(), y.sizes(), cpu));
}

void print(const std::string& backend, const Results& r) {
  std::cout << "on backend '" << backend << "':\n"
            << "  a @ b      = " << r.product << "\n"
            << "  a @ b + 1  = " << r.shifted << "\n"
            << "  sum        = " << r.total << "\n";
}

void print_loaded_plugins() {
  std::cout << "loaded plugins:\n";
  for (const tessera::PluginInfo& plugin : tessera::loaded_plugins()) {
    std::cout << "  " << plugin.name << " " << plugin.version << " from " << plugin.file.string() << ":";
    for (const tessera::ComponentInfo& component : plugin.components)
      std::cout << " " << component.kind << " '" << component.name << "'";
    std::cout << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " <tessera.toml>\n"
              << "  Loads the configuration (plugins to load, default backend), computes a small\n"
              << "  matmul and add on the default backend and on \"cpu\", and checks they agree.\n";
    return 2;
  }
  try {
    tessera::configure(tessera::Config::from_file(argv[1]));
    const std::string default_backend = tessera::default_backend();
    std::cout << "configured from " << argv[1] << "; default backend: " << default_backend << "\n";

    const Results on_default = compute(tessera::TensorOptions());
    // The cpu backend is not named in the configuration: libtessera finds backend-cpu in the plugin
    // directory beside itself and loads it on first use.
    const Results on_cpu = compute(tessera::TensorOptions().backend("cpu"));
    print(on_default.product.backend(), on_default);
    print(on_cpu.product.backend(), on_cpu);
    print_loaded_plugins();

    if (on_default.product.backend() == on_cpu.product.backend()) {
      std::cerr << "error: both computations ran on backend '" << on_cpu.product.backend()
                << "'; set [backend] default to another backend in " << argv[1] << "\n";
      return 1;
    }
    const bool ok = agree(on_default.product, on_cpu.product) && agree(on_default.shifted, on_cpu.shifted) &&
                    agree(on_default.total, on_cpu.total);
    std::cout << "backends '" << default_backend << "' and 'cpu' " << (ok ? "agree" : "DISAGREE") << "\n";
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
