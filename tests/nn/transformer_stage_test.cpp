// models::TransformerStage: the stages of a split model hold its parameters under the model's own
// names, share them with it, and run one after another to the model's logits, bit for bit.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "../same_bits.hpp"
#include "tessera/tessera.hpp"

namespace ts = tessera;

namespace {

ts::models::TransformerArgs small_args() {
  ts::models::TransformerArgs args;
  args.dim = 16;
  args.n_layers = 4;
  args.n_heads = 4;
  args.n_kv_heads = 2;
  args.vocab_size = 32;
  args.ffn_hidden = 24;
  args.max_seq_len = 8;
  return args;
}

std::set<std::string> names_of(const ts::nn::Module& module) {
  std::set<std::string> names;
  for (const auto& [name, p] : module.named_parameters()) names.insert(name);
  return names;
}

}  // namespace

TEST_CASE("Transformer stages keep the model's parameter names and share its parameters") {
  ts::manual_seed(7);
  const ts::models::Transformer model(small_args());
  const ts::models::TransformerStage first(model, 0, 2), middle(model, 1, 3), last(model, 2, 4);
  CHECK(first->is_first());
  CHECK_FALSE(first->is_last());
  CHECK_FALSE(middle->is_first());
  CHECK_FALSE(middle->is_last());
  CHECK(last->is_last());

  const std::set<std::string> first_names = names_of(*first), last_names = names_of(*last);
  CHECK(first_names.count("tok_embeddings.weight") == 1);
  CHECK(first_names.count("layers.1.attention.wq.weight") == 1);
  CHECK(first_names.count("layers.2.attention.wq.weight") == 0);
  CHECK(first_names.count("norm.weight") == 0);
  CHECK(first_names.count("output.weight") == 0);
  CHECK(last_names.count("layers.2.feed_forward.w1.weight") == 1);
  CHECK(last_names.count("layers.3.ffn_norm.weight") == 1);
  CHECK(last_names.count("norm.weight") == 1);
  CHECK(last_names.count("output.weight") == 1);
  CHECK(last_names.count("tok_embeddings.weight") == 0);
  CHECK(names_of(*middle) ==
        std::set<std::string>{
            "layers.1.attention.wq.weight", "layers.1.attention.wk.weight", "layers.1.attention.wv.weight",
            "layers.1.attention.wo.weight", "layers.1.feed_forward.w1.weight",
            "layers.1.feed_forward.w2.weight", "layers.1.feed_forward.w3.weight",
            "layers.1.attention_norm.weight", "layers.1.ffn_norm.weight", "layers.2.attention.wq.weight",
            "layers.2.attention.wk.weight", "layers.2.attention.wv.weight", "layers.2.attention.wo.weight",
            "layers.2.feed_forward.w1.weight", "layers.2.feed_forward.w2.weight",
            "layers.2.feed_forward.w3.weight", "layers.2.attention_norm.weight", "layers.2.ffn_norm.weight"});

  // The two halves together are the whole model, name for name, and the very same tensors.
  std::set<std::string> both = first_names;
  both.insert(last_names.begin(), last_names.end());
  CHECK(both == names_of(*model));
  CHECK(first_names.size() + last_names.size() == both.size());
  CHECK(first->get_parameter("layers.1.attention.wq.weight").tensor().impl() ==
        model->get_parameter("layers.1.attention.wq.weight").tensor().impl());
  // Persistent state only: the rotary tables stay out of the state dict, as in the model.
  CHECK(first->state_dict().size() == first_names.size());
}

TEST_CASE("Transformer stages run one after another give the model's logits and gradients, bit for bit") {
  ts::manual_seed(11);
  const ts::models::Transformer model(small_args());
  const ts::models::TransformerStage first(model, 0, 1), middle(model, 1, 3), last(model, 3, 4);
  const ts::Tensor tokens = ts::from_values(std::vector<int64_t>{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8}, {2, 6});

  const ts::Tensor whole = model(tokens).tensor();
  const ts::Tensor hidden = first(tokens).tensor();
  CHECK(hidden.sizes() == ts::Shape{2, 6, 16});
  const ts::Tensor staged = last(middle(hidden)).tensor();
  REQUIRE(staged.sizes() == whole.sizes());
  CHECK(test::same_bits(staged.to_vector<float>(), whole.to_vector<float>()));

  whole.sum().backward();
  std::vector<std::vector<float>> want;
  for (const auto& [name, p] : model->named_parameters())
    want.push_back(p.tensor().grad().to_vector<float>());
  model->zero_grad();
  staged.sum().backward();
  size_t i = 0;
  for (const auto& [key, p] : model->named_parameters()) {
    const std::string& name = key;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(name);
    REQUIRE(p.tensor().grad().defined());
    CHECK(test::same_bits(p.tensor().grad().to_vector<float>(), want[i++]));
  }
}

TEST_CASE("a Transformer stage refuses a layer range that is empty or outside the model, naming it") {
  const ts::models::Transformer model(small_args());
  CHECK_THROWS_WITH_AS(ts::models::TransformerStage(model, 2, 2), doctest::Contains("layers [2, 2)"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::models::TransformerStage(model, -1, 2), doctest::Contains("layers [-1, 2)"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::models::TransformerStage(model, 0, 5),
                       doctest::Contains("the model's 4 layers (expected 0 <= first_layer < end_layer <= 4)"),
                       ts::Error);
}
