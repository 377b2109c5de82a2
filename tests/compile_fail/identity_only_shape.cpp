// MUST NOT COMPILE: with only identity factors and a shape, compile() cannot know the value type.
#include <array>

#include <kronex/kronex.hpp>

int main() {
  const auto K = kronex::kron(kronex::identity(3), kronex::identity(4));
#ifndef KRONEX_COMPILE_FAIL_CONTROL
  auto op = kronex::compile(K, std::array<std::size_t, 2>{3, 4});
#else
  auto op = kronex::compile(K, xt::xtensor<double, 2>::from_shape({3, 4}));  // a tensor decides
#endif
  return op.shape().size() == 2 ? 0 : 1;
}
