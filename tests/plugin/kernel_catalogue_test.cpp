// The host's kernel catalogue (the op names a backend may register) is sdk/KERNELS.md's: read here
// from the document itself, so that the two cannot drift apart unnoticed.
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "plugin/validation.hpp"
#include "plugin_test_support.hpp"

namespace {

// The op names of KERNELS.md: the words of the first cell of every table row, less the header
// rows ("op") and the separator rows ("---").
std::set<std::string> document_ops() {
  std::ifstream file(TESSERA_KERNEL_CATALOGUE);
  REQUIRE(file.good());
  std::set<std::string> ops;
  for (std::string line; std::getline(file, line);) {
    if (!line.starts_with("| ")) continue;
    std::istringstream first_cell(line.substr(2, line.find('|', 2) - 2));
    for (std::string word; first_cell >> word;)
      if (word != "op") ops.insert(word);
  }
  return ops;
}

}  // namespace

TEST_CASE("the host's kernel catalogue is exactly the ops of sdk/KERNELS.md") {
  const std::set<std::string> expected = document_ops();
  CHECK(expected.size() >= 40);  // the parser found the tables
  CHECK(expected.count("mm") == 1);
  CHECK(expected.count("log_softmax") == 1);
  std::set<std::string> host;
  for (std::string_view op : tessera::plugin::kernel_catalogue()) CHECK(host.insert(std::string(op)).second);
  CHECK(host == expected);
}

TEST_CASE("the closest catalogue name to a misspelt op") {
  using tessera::plugin::closest_catalogue_op;
  CHECK(closest_catalogue_op("Relu") == "relu");
  CHECK(closest_catalogue_op("matmul") == "mm");
  CHECK(closest_catalogue_op("batch_matmul") == "bmm");
  CHECK(closest_catalogue_op("logsoftmax") == "log_softmax");
  CHECK(closest_catalogue_op("argmxa") == "argmax");
  CHECK(closest_catalogue_op("multiply") == "mul");
  CHECK(closest_catalogue_op("conv2d_transpose_backward").empty());  // nothing close: no guess
}
