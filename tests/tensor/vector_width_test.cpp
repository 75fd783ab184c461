// The CPU backend runs its contiguous element-wise and fold loops in the clone for the widest
// vectors the CPU has (plugins/backend-cpu/vector_clones.hpp: AVX-512, AVX2 or SSE2). Whichever
// clone this machine picks must give the bits of the op's definition (sdk/cpp/binary_ops.hpp)
// applied one element at a time, compiled here for the baseline: for lengths around every vector
// width (bodies and tails of 2, 4, 8 and 16 lanes), unaligned starts, in place and into another
// buffer, with one operand broadcast along the row (stride 0) or not, on values with NaN payloads,
// signed zeros, infinities and subnormals.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

#include "tensor/kernel_operand.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/sdk/cpp/binary_ops.hpp"

namespace ts = tessera;
namespace dispatch = tessera::dispatch;
namespace ops = tessera::sdk::binary_ops;

namespace {

// Lengths on both sides of 2, 4, 8, 16 and 32 lanes, and long ones with a tail.
const std::vector<int64_t> kLengths = {1,  3,  4,  5,  7,  8,  9,   15,  16,  17,
                                       31, 32, 33, 47, 64, 65, 100, 257, 1031};

template <class T>
T special_or_random(std::mt19937_64& rng) {
  if constexpr (std::is_same_v<T, bool>) {
    return (rng() & 1) != 0;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(rng());
  } else {
    using Limits = std::numeric_limits<T>;
    switch (rng() % 12) {
      case 0:
        return T(0);
      case 1:
        return -T(0);
      case 2:
        return Limits::infinity();
      case 3:
        return -Limits::infinity();
      case 4:
        return Limits::denorm_min() * static_cast<T>(rng() % 1000 + 1);
      case 5: {
        // A NaN with a payload of its own and either sign: which one comes out is the NaN rule.
        using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
        Bits bits;
        const T nan = Limits::quiet_NaN();
        std::memcpy(&bits, &nan, sizeof bits);
        bits |= static_cast<Bits>(rng() % 4096 + 1) | (rng() % 2 ? Bits(1) << (sizeof(T) * 8 - 1) : Bits(0));
        T value;
        std::memcpy(&value, &bits, sizeof value);
        return value;
      }
      case 6:
        return static_cast<T>(rng() % 5);  // ties for maximum, minimum and the comparisons
      default:
        return std::ldexp(static_cast<T>(static_cast<int64_t>(rng() % 20001) - 10000), int(rng() % 61) - 30);
    }
  }
}

template <class T>
ts::Tensor values_tensor(const std::vector<T>& values) {
  return ts::from_values(values, {static_cast<int64_t>(values.size())}, ts::dtype_of<T>());
}

template <class R>
std::vector<char> bytes_of(const ts::Tensor& t, int64_t offset, int64_t count) {
  const ts::TensorImpl& impl = *t.impl();
  const char* data =
      static_cast<const char*>(impl.storage()->data.load()) + (impl.offset() + offset) * sizeof(R);
  return std::vector<char>(data, data + count * static_cast<int64_t>(sizeof(R)));
}

template <class R>
std::vector<char> bytes_of(const std::vector<R>& values) {
  std::vector<char> bytes(values.size() * sizeof(R));
  for (size_t i = 0; i < values.size(); ++i) {
    const R v = values[i];  // a vector<bool> element is a proxy
    std::memcpy(bytes.data() + i * sizeof(R), &v, sizeof(R));
  }
  return bytes;
}

// How check_binary lays out its operands: both as rows (the contiguous loop), or one of them a
// single element broadcast along the row (stride 0: the scalar loops of a broadcast op).
enum class Broadcast { none, right, left };

// Op on dtype T against its scalar definition; returns the number of comparisons made.
template <class Op, class T>
int check_binary(std::mt19937_64& rng) {
  using R = typename Op::template Out<T>;
  const int64_t one = 1, zero = 0;
  int compared = 0;
  for (const int64_t n : kLengths) {
    for (const int64_t start : {0, 1}) {  // element 1: no vector-aligned start
      for (const Broadcast broadcast : {Broadcast::none, Broadcast::right, Broadcast::left}) {
        for (const bool in_place : {false, true}) {
          // In place writes over the left operand, which must then be a whole row.
          if (in_place && (!std::is_same_v<R, T> || broadcast == Broadcast::left)) continue;
          CAPTURE(Op::name);
          CAPTURE(ts::dtype_name(ts::dtype_of<T>()));
          CAPTURE(n);
          CAPTURE(start);
          CAPTURE(static_cast<int>(broadcast));
          CAPTURE(in_place);
          std::vector<T> a, b;
          for (int64_t i = 0; i < n + start; ++i)
            a.push_back(special_or_random<T>(rng)), b.push_back(special_or_random<T>(rng));
          const auto at = [&](const std::vector<T>& v, bool broadcast_here, int64_t i) {
            return static_cast<T>(v[static_cast<size_t>(broadcast_here ? start : i)]);
          };
          std::vector<R> expected;
          for (int64_t i = start; i < n + start; ++i)
            expected.push_back(
                Op::apply(at(a, broadcast == Broadcast::left, i), at(b, broadcast == Broadcast::right, i)));
          const ts::Tensor x = values_tensor(a), y = values_tensor(b);
          const ts::Tensor z = in_place ? x : ts::zeros({n + start}, ts::TensorOptions(ts::dtype_of<R>()));
          const dispatch::Operand left =
              dispatch::operand_range(*x.impl(), start, n, broadcast == Broadcast::left ? zero : one);
          const dispatch::Operand right =
              dispatch::operand_range(*y.impl(), start, n, broadcast == Broadcast::right ? zero : one);
          const dispatch::Operand out = dispatch::operand_range(*z.impl(), start, n, one);
          dispatch::call_kernel(Op::name, ts::dtype_of<T>(), {left, right}, {out});
          CHECK(bytes_of<R>(z, start, n) == bytes_of(expected));
          ++compared;
        }
      }
    }
  }
  return compared;
}

template <class Op, class... T>
int check_binary_on(std::mt19937_64& rng) {
  return (check_binary<Op, T>(rng) + ...);
}

// fold_<op> of `rows` contiguous rows of width n into an accumulator, both sides.
template <class Op, class T>
int check_fold(std::mt19937_64& rng, const std::string& fold) {
  const int64_t one = 1;
  int compared = 0;
  for (const int64_t n : kLengths) {
    for (const int side : {0, 1}) {
      CAPTURE(fold);
      CAPTURE(ts::dtype_name(ts::dtype_of<T>()));
      CAPTURE(n);
      CAPTURE(side);
      const int64_t rows = 5;
      std::vector<T> acc, matrix;
      for (int64_t j = 0; j < n; ++j) acc.push_back(special_or_random<T>(rng));
      for (int64_t k = 0; k < rows * n; ++k) matrix.push_back(special_or_random<T>(rng));
      std::vector<T> expected(acc.begin(), acc.end());
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const T row = matrix[static_cast<size_t>(i * n + j)];
          T& into = expected[static_cast<size_t>(j)];
          into = side == 0 ? Op::apply(static_cast<T>(into), row) : Op::apply(row, static_cast<T>(into));
        }
      const ts::Tensor folded = values_tensor(acc), all = values_tensor(matrix);
      const int64_t sizes[2] = {rows, n}, strides[2] = {n, 1};
      const dispatch::Operand matrix_operand = dispatch::operand(*all.impl(), sizes, strides);
      const dispatch::Operand into = dispatch::operand_range(*folded.impl(), 0, n, one);
      dispatch::call_kernel(fold, ts::dtype_of<T>(), {into, matrix_operand}, {into},
                            {dispatch::Attr::integer("acc_side", side)});
      CHECK(bytes_of<T>(folded, 0, n) == bytes_of(expected));
      ++compared;
    }
  }
  return compared;
}

template <class Op, class... T>
int check_fold_on(std::mt19937_64& rng, const std::string& fold) {
  return (check_fold<Op, T>(rng, fold) + ...);
}

std::string widest_vectors() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)  // as vector_clones.hpp
  if (__builtin_cpu_supports("avx512f")) return "AVX-512";
  if (__builtin_cpu_supports("avx2")) return "AVX2";
#endif
  return "the baseline";
}

}  // namespace

TEST_CASE("the element-wise loops give the scalar definition's bits at this CPU's vector width") {
  MESSAGE("this CPU runs the " << widest_vectors() << " clones");
  std::mt19937_64 rng(20261204);
  int compared = 0;
  compared += check_binary_on<ops::Add, float, double, int32_t, int64_t, bool>(rng);
  compared += check_binary_on<ops::Sub, float, double, int32_t, int64_t>(rng);
  compared += check_binary_on<ops::Mul, float, double, int32_t, int64_t, bool>(rng);
  compared += check_binary_on<ops::Div, float, double>(rng);
  compared += check_binary_on<ops::Maximum, float, double, int32_t, int64_t, bool>(rng);
  compared += check_binary_on<ops::Minimum, float, double, int32_t, int64_t, bool>(rng);
  compared += check_binary_on<ops::BitwiseXor, int32_t, int64_t, bool>(rng);
  compared += check_binary_on<ops::Lt, float, double, int32_t, int64_t>(rng);
  compared += check_binary_on<ops::Eq, float, double, int32_t, int64_t>(rng);
  // Every case ran: 19 lengths x 2 starts x 3 layouts (rows, a broadcast right or left operand),
  // and in place as well, for ops whose result is T, when the left operand is a whole row.
  CHECK(compared == 19 * 2 * 5 * (5 + 4 + 5 + 2 + 5 + 5 + 3) + 19 * 2 * 3 * (4 + 4));
}

TEST_CASE("the fold loops give the scalar definition's bits at this CPU's vector width") {
  std::mt19937_64 rng(4122026);
  int compared = 0;
  compared += check_fold_on<ops::Add, float, double, int32_t, int64_t>(rng, "fold_add");
  compared += check_fold_on<ops::Mul, float, double>(rng, "fold_mul");
  compared += check_fold_on<ops::Maximum, float, double, int64_t>(rng, "fold_maximum");
  compared += check_fold_on<ops::Minimum, float, double, int32_t>(rng, "fold_minimum");
  CHECK(compared == 19 * 2 * (4 + 2 + 3 + 3));
}
