// The one translation unit of memo-fuzz that includes libtorch (it costs ~25 s to compile).
#include <torch/version.h>

#include <memo/backends/torch/backend.hpp>
#include <memo/fuzz/backends.hpp>

#include "../memo_fuzz.hpp"

namespace memo_fuzz {

memo::fuzz::backend_kind torch_backend() {
    memo::fuzz::backend_kind k;
    k.name = "torch";
    k.make = [](const memo::registry& reg, memo::isolation_limits lim, bool isolate) -> std::unique_ptr<memo::executor> {
        auto make = [] { return memo::torch::backend(); };
        if (isolate) return memo::make_isolated<memo::torch::backend>(make, reg, lim);
        return memo::make_in_process(make());
    };
    k.library = "PyTorch's libtorch";
    k.version = [] { return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." + std::to_string(TORCH_VERSION_PATCH); };
    return k;
}

}  // namespace memo_fuzz
