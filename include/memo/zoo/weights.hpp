#pragma once
// The number of weights of a model as Keras' count_params() reports it: trainable and
// non-trainable alike (BatchNormalization's moving mean and variance count), from the same
// layouts the backends draw weights in (exec/weights.hpp).
#include <cstdint>

#include "../core/model.hpp"
#include "../exec/weights.hpp"

namespace memo::zoo {

/// The weights (trainable and not) of node `i` of `m`.
inline std::int64_t count_weights(const model& m, std::size_t i) {
    std::int64_t total = 0;
    for (const auto& w : weight_specs(m, static_cast<int>(i))) total += tensor::count(w.dims);
    return total;
}

/// The weights of `m`, as Keras' model.count_params() reports them.
inline std::int64_t count_weights(const model& m) {
    std::int64_t total = 0;
    for (std::size_t i = 0; i < m.nodes.size(); ++i) total += count_weights(m, i);
    return total;
}

}  // namespace memo::zoo
