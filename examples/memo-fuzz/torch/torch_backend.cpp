// The one translation unit of memo-fuzz that includes libtorch (it costs ~25 s to compile).
#include <memo/backends/torch/backend.hpp>

#include "../backends.hpp"

namespace commands {

std::unique_ptr<memo::executor> make_torch(const memo::registry& reg, memo::isolation_limits lim, bool isolate) {
    auto make = [] { return memo::torch::backend(); };
    if (isolate) return memo::make_isolated<memo::torch::backend>(make, reg, lim);
    return memo::make_in_process(make());
}

}  // namespace commands
