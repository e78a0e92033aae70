// memo-fuzz's CUDA backends "cuda" and "cuda-tf32": the host side (the plan, the worker). Their
// device side is cuda_device.cu, the one translation unit nvcc compiles.
#include <memo/backends/cuda/backend.hpp>
#include <memo/fuzz/backends.hpp>

#include "../memo_fuzz.hpp"

namespace memo_fuzz {

memo::fuzz::backend_kind cuda_backend(const std::string& name) {
    memo::fuzz::backend_kind k;
    k.name = name;
    const bool tf32 = name == "cuda-tf32";
    k.make = [name, tf32](const memo::registry& reg, memo::isolation_limits lim, bool isolate) -> std::unique_ptr<memo::executor> {
        // In a worker, a sticky CUDA error ends the worker (a crash verdict with CUDA's text).
        auto make = [name, tf32, isolate] {
            memo::cuda::options o;
            o.name = name;
            o.tf32 = tf32;
            o.exit_on_fatal = isolate;
            return memo::cuda::backend(o);
        };
        auto x = isolate ? memo::make_isolated<memo::cuda::backend>(make, reg, lim) : memo::make_in_process(make());
        // TF32 rounds float32's convolution and product operands to float16's 10-bit mantissa: its
        // float32 results are judged as float16's (memo::arithmetic).
        if (tf32) x->set_rounding({{memo::dtype::float16, memo::dtype::bfloat16, memo::dtype::float16, memo::dtype::float64}});
        return x;
    };
    k.unavailable = [] { return memo::cuda::device_present() ? std::string() : std::string("no NVIDIA GPU on this machine (no /dev/nvidia<N>)"); };
    k.library = tf32 ? "NVIDIA cuDNN and cuBLAS (TF32 maths)" : "NVIDIA cuDNN and cuBLAS";
    k.by_default = !tf32;  // "cuda" joins the default backends where a GPU is; "cuda-tf32" is asked for
    return k;
}

}  // namespace memo_fuzz
