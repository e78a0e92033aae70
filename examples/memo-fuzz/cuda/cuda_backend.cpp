// memo-fuzz's CUDA backend "cuda": the host side (the plan, the worker). Its device side is
// cuda_device.cu, the one translation unit nvcc compiles.
#include <memo/backends/cuda/backend.hpp>
#include <memo/fuzz/backends.hpp>

#include "../memo_fuzz.hpp"

namespace memo_fuzz {

memo::fuzz::backend_kind cuda_backend() {
    memo::fuzz::backend_kind k;
    k.name = "cuda";
    k.make = [](const memo::registry& reg, memo::isolation_limits lim, bool isolate) -> std::unique_ptr<memo::executor> {
        // In a worker, a sticky CUDA error ends the worker (a crash verdict with CUDA's text).
        auto make = [isolate] {
            memo::cuda::options o;
            o.exit_on_fatal = isolate;
            return memo::cuda::backend(o);
        };
        if (isolate) return memo::make_isolated<memo::cuda::backend>(make, reg, lim);
        return memo::make_in_process(make());
    };
    k.unavailable = [] { return memo::cuda::device_present() ? std::string() : std::string("no NVIDIA GPU on this machine (no /dev/nvidia<N>)"); };
    return k;  // joins the default backends where a GPU is
}

}  // namespace memo_fuzz
