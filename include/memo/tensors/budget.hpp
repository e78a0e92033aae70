#pragma once
// The memory a model's run takes, known before anything is allocated. memo holds a model's values
// as float64: its inputs, every node's output when a run is traced (the ground truth and the
// localisation both trace), and its weights where it runs in process. A valid model can still be
// far too large for the machine (a 4000x4000x64 input to a Conv2D of 512 filters needs 131 GB),
// so such a model is refused by its size, naming the node that passes the budget, before any
// tensor of it exists.
#include <cstdint>
#include <string>

#include "../core/model.hpp"
#include "../core/text.hpp"
#include "../engine/error.hpp"
#include "weights.hpp"

namespace memo {

/// Fails when m's run with `samples` samples would hold more than `max_bytes` (0: no limit),
/// naming the node at which the running total passes it, that node's output and element count.
inline expected<void> within_budget(const model& m, std::int64_t samples, std::int64_t max_bytes) {
    if (max_bytes <= 0) return {};
    double bytes = 0;
    for (std::size_t i = 0; i < m.size(); ++i) {
        const node& n = m.nodes[i];
        const double out = static_cast<double>(samples) * static_cast<double>(n.out.elements());
        double weights = 0;
        for (const auto& w : weight_specs(m, static_cast<int>(i))) weights += static_cast<double>(tensor::count(w.dims));
        bytes += 8.0 * (out + weights);
        if (bytes > static_cast<double>(max_bytes))
            return fail(
                printf_string("node %zu (%s '%s', output %s with %lld samples: %.0f elements%s) brings the model's tensors to %.1f MiB as float64, "
                              "over the budget of %lld MiB",
                              i, std::string(n.layer->name).c_str(), n.name.c_str(), n.out.str().c_str(), static_cast<long long>(samples), out,
                              weights > 0 ? printf_string(", %.0f weights", weights).c_str() : "", bytes / (1 << 20), static_cast<long long>(max_bytes >> 20)));
    }
    return {};
}

}  // namespace memo
