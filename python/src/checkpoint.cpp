// ts.distributed.checkpoint (PyTorch: torch.distributed.checkpoint): save, async_save, load,
// consolidate and inspect of state dicts, dicts of str -> ts.Tensor | ts.DTensor | int | float | str.
//
// A load fills the dict's tensors in place (the Python objects keep their identity and see the
// values) and puts the saved scalars back into the dict. Every call runs without the GIL: the
// ranks of a world may run on other threads, and nothing here calls back into Python.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <future>
#include <string>

#include "bindings.hpp"

namespace tessera::python {
namespace {

std::string key_of(nb::handle key, const char* what) {
  if (!PyUnicode_Check(key.ptr()))
    throw nb::type_error((std::string(what) + ": state_dict keys must be str, got " + describe(key)).c_str());
  return nb::cast<std::string>(key);
}

dcp::StateValue value_of(const std::string& key, nb::handle value, const char* what) {
  if (nb::isinstance<Tensor>(value)) return nb::cast<Tensor>(value);
  if (nb::isinstance<DTensor>(value)) return nb::cast<DTensor>(value);
  // bool is an int in Python; a checkpoint has no bool kind, so it would come back as an int.
  if (PyBool_Check(value.ptr()))
    throw nb::type_error((std::string(what) + ": state_dict['" + key +
                          "'] is a bool, which a checkpoint does not hold; store it as an int")
                             .c_str());
  if (PyLong_Check(value.ptr())) return nb::cast<int64_t>(value);
  if (PyFloat_Check(value.ptr())) return nb::cast<double>(value);
  if (PyUnicode_Check(value.ptr())) return nb::cast<std::string>(value);
  throw nb::type_error((std::string(what) + ": state_dict['" + key + "'] is " + describe(value) +
                        "; expected a ts.Tensor, a ts.DTensor, an int, a float or a str")
                           .c_str());
}

dcp::StateDict state_dict_from(nb::handle state_dict, const char* what) {
  if (!PyDict_Check(state_dict.ptr()))
    throw nb::type_error(
        (std::string(what) + ": state_dict must be a dict, got " + describe(state_dict)).c_str());
  dcp::StateDict state;
  for (const auto& [key, value] : nb::borrow<nb::dict>(state_dict)) {
    const std::string name = key_of(key, what);
    state.emplace(name, value_of(name, value, what));
  }
  return state;
}

nb::dict stats_dict(const dcp::SaveStats& s) {
  nb::dict d;
  d["files"] = nb::cast(s.files);
  d["chunks_written"] = s.chunks_written;
  d["bytes_written"] = s.bytes_written;
  return d;
}

nb::dict stats_dict(const dcp::LoadStats& s) {
  nb::dict d;
  d["bytes_needed"] = s.bytes_needed;
  d["bytes_read"] = s.bytes_read;
  d["checksum_bytes_read"] = s.checksum_bytes_read;
  d["chunks_read"] = s.chunks_read;
  d["reads"] = s.reads;
  d["files_opened"] = s.files_opened;
  return d;
}

dcp::SaveOptions options_of(int64_t checksum_block_bytes) {
  dcp::SaveOptions options;
  options.checksum_block_bytes = checksum_block_bytes;
  return options;
}

// What async_save returns: result() waits (and, in a world spread over processes, commits).
struct AsyncSave {
  std::future<dcp::SaveStats> future;
  nb::dict result() {
    if (!future.valid()) throw nb::value_error("async_save: result() was already called");
    const dcp::SaveStats stats = without_gil([&] { return future.get(); });
    return stats_dict(stats);
  }
};

}  // namespace

void bind_checkpoint(nb::module_& m) {
  nb::module_ c = m.def_submodule(
      "checkpoint",
      "Distributed checkpoints (PyTorch: torch.distributed.checkpoint): save, load, consolidate.");
  using namespace nb::literals;

  nb::class_<AsyncSave>(c, "AsyncSave", "The future of ts.distributed.checkpoint.async_save.")
      .def("result", &AsyncSave::result,
           "Waits for the save (in a world spread over processes: commits it, a collective) and returns its "
           "stats; raises the save's error.");

  c.def(
      "save",
      [](nb::handle state_dict, const std::string& checkpoint_id, int64_t checksum_block_bytes) {
        dcp::StateDict state = state_dict_from(state_dict, "checkpoint.save");
        const dcp::SaveStats stats =
            without_gil([&] { return dcp::save(state, checkpoint_id, options_of(checksum_block_bytes)); });
        return stats_dict(stats);
      },
      "state_dict"_a, "checkpoint_id"_a, nb::kw_only(), "checksum_block_bytes"_a = 4096,
      "Saves the state dict (str -> Tensor | DTensor | int | float | str) as a checkpoint in directory "
      "checkpoint_id, replacing the one there. Returns the stats of this process's data file.");
  c.def(
      "async_save",
      [](nb::handle state_dict, const std::string& checkpoint_id, int64_t checksum_block_bytes) {
        dcp::StateDict state = state_dict_from(state_dict, "checkpoint.async_save");
        return AsyncSave{without_gil(
            [&] { return dcp::async_save(state, checkpoint_id, options_of(checksum_block_bytes)); })};
      },
      "state_dict"_a, "checkpoint_id"_a, nb::kw_only(), "checksum_block_bytes"_a = 4096,
      "Copies every tensor, then saves on another thread; returns an AsyncSave whose result() gives the "
      "stats.");
  c.def(
      "load",
      [](nb::handle state_dict, const std::string& checkpoint_id) {
        dcp::StateDict state = state_dict_from(state_dict, "checkpoint.load");
        const dcp::LoadStats stats = without_gil([&] { return dcp::load(state, checkpoint_id); });
        // Tensors were filled in place; the scalars are new values.
        auto dict = nb::borrow<nb::dict>(state_dict);
        for (const auto& [key, value] : state) {
          if (const auto* i = std::get_if<int64_t>(&value))
            dict[key.c_str()] = *i;
          else if (const auto* f = std::get_if<double>(&value))
            dict[key.c_str()] = *f;
          else if (const auto* s = std::get_if<std::string>(&value))
            dict[key.c_str()] = *s;
        }
        return stats_dict(stats);
      },
      "state_dict"_a, "checkpoint_id"_a,
      "Fills the state dict from the checkpoint in directory checkpoint_id: tensors in place (in their own "
      "layout), scalars replaced in the dict. Returns what was read.");
  c.def(
      "consolidate",
      [](const std::string& checkpoint_id, const std::string& file) {
        without_gil([&] { dcp::consolidate(checkpoint_id, file); });
      },
      "checkpoint_id"_a, "file"_a,
      "Writes one .safetensors file holding every tensor of the checkpoint in full (a local tensor's shards "
      "as "
      "'<key>@rank<r>'); the scalars go to the header's __metadata__ as text.");
  c.def(
      "inspect",
      [](const std::string& checkpoint_id) {
        return without_gil([&] { return dcp::inspect(checkpoint_id); });
      },
      "checkpoint_id"_a, "A table of the checkpoint's entries and data files.");
}

}  // namespace tessera::python
