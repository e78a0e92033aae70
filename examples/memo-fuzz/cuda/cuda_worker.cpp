// memo-cuda-worker: the CUDA backends "cuda" and "cuda-tf32" in a program of their own, the only
// one of memo-fuzz's that links the CUDA runtime, cuBLAS and cuDNN. memo-fuzz starts it by exec
// (cuda_backend.cpp) and sends it runs over the pipes every worker serves (fd 3 in, fd 4 out:
// memo::serve_backend, the loop a forked worker runs too); its device side is cuda_device.cu.
//
//   memo-cuda-worker --name cuda        serve runs for memo-fuzz's "cuda" (cuda-tf32: TF32 maths)
//   memo-cuda-worker --probe            the GPU, CUDA's, cuBLAS' and cuDNN's versions; exit 1 when
//                                       no GPU can run the backend here, with the reason
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <memo/backends/cuda/backend.hpp>
#include <memo/backends/isolate.hpp>
#include <memo/layers/all.hpp>

namespace {

constexpr const char* usage_text =
    "usage: memo-cuda-worker --name cuda|cuda-tf32\n"
    "       memo-cuda-worker --probe\n"
    "\n"
    "Runs memo's CUDA backend (cuDNN, cuBLAS and memo's kernels) for memo-fuzz, which starts it by\n"
    "exec for its backends \"cuda\" and \"cuda-tf32\" and sends it runs over fds 3 and 4.\n"
    "\n"
    "  --name NAME  the backend served: cuda, or cuda-tf32 (TF32 maths allowed in cuDNN's\n"
    "               convolutions and recurrent cells and in cuBLAS' products); default cuda\n"
    "  --probe      prints the GPU (device 0) and the CUDA runtime's, cuBLAS' and cuDNN's versions,\n"
    "               and exits 0 when the backend can run on it; else prints why not (the line\n"
    "               \"unusable: ...\") and exits 1\n"
    "  --help       this text\n";

/// A library's version from its MAJOR, MINOR and PATCH properties, "13.1.0".
template <class Get>
std::string version_of(Get get) {
    int major = 0, minor = 0, patch = 0;
    if (get(MAJOR_VERSION, &major) != 0 || get(MINOR_VERSION, &minor) != 0 || get(PATCH_LEVEL, &patch) != 0) return "unknown";
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

/// CUDA's encoding of a version (1000 * major + 10 * minor) as "13.0".
std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

std::string cuda_text(cudaError_t e) { return std::string(cudaGetErrorString(e)) + " (" + cudaGetErrorName(e) + ")"; }

/// Why the backend cannot run on device 0 (empty: it can), and the device in words.
std::string check_device(std::string& device) {
    if (!memo::cuda::device_present()) return "no NVIDIA GPU on this machine (no /dev/nvidia<N>)";
    int count = 0;
    if (const auto e = cudaGetDeviceCount(&count); e != cudaSuccess) return "cudaGetDeviceCount: " + cuda_text(e);
    if (count == 0) return "CUDA sees no GPU (CUDA_VISIBLE_DEVICES?)";
    cudaDeviceProp p{};
    if (const auto e = cudaGetDeviceProperties(&p, 0); e != cudaSuccess) return "cudaGetDeviceProperties: " + cuda_text(e);
    device = std::string(p.name) + ", compute capability " + std::to_string(p.major) + "." + std::to_string(p.minor) + ", " +
             std::to_string((p.totalGlobalMem + (1u << 29)) >> 30) + " GiB (device 0 of " + std::to_string(count) + ")";
    // What a run starts with: a context on the device, a cuDNN handle and a cuBLAS handle.
    if (const auto e = cudaFree(nullptr); e != cudaSuccess) return "cannot start CUDA on " + std::string(p.name) + ": " + cuda_text(e);
    cudnnHandle_t dnn = nullptr;
    if (const auto s = cudnnCreate(&dnn); s != CUDNN_STATUS_SUCCESS) return std::string("cudnnCreate: ") + cudnnGetErrorString(s);
    cudnnDestroy(dnn);
    cublasHandle_t blas = nullptr;
    if (const auto s = cublasCreate(&blas); s != CUBLAS_STATUS_SUCCESS) return std::string("cublasCreate: ") + cublasGetStatusString(s);
    cublasDestroy(blas);
    return {};
}

/// --probe: one line for the device (or why it is unusable), one a library.
int probe() {
    std::string device;
    const std::string why = check_device(device);
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);  // 0 where no driver is installed
    if (why.empty()) std::printf("device: %s\n", device.c_str());
    else std::printf("unusable: %s\n", why.c_str());
    std::printf("CUDA: %s (runtime; driver %s)\n", cuda_version(runtime).c_str(), driver ? cuda_version(driver).c_str() : "none");
    std::printf("cuBLAS: %s\n", version_of([](libraryPropertyType t, int* v) { return static_cast<int>(cublasGetProperty(t, v)); }).c_str());
    std::printf("cuDNN: %s (built with %d.%d.%d)\n", version_of([](libraryPropertyType t, int* v) { return static_cast<int>(cudnnGetProperty(t, v)); }).c_str(),
                CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
    return why.empty() ? 0 : 1;
}

[[noreturn]] void leave(int code) {
    // No static destructors: CUDA's and cuDNN's state may not outlive the end of main cleanly, and
    // nothing is left to flush but stdio.
    std::fflush(nullptr);
    ::_exit(code);
}

}  // namespace

int main(int argc, char** argv) {
    std::string name = "cuda";
    bool probing = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(usage_text, stdout);
            return 0;
        }
        if (a == "--probe") probing = true;
        else if (a == "--name" && i + 1 < argc) name = argv[++i];
        else if (a.starts_with("--name=")) name = a.substr(7);
        else {
            std::fprintf(stderr, "memo-cuda-worker: unknown argument '%s'\n\n%s", argv[i], usage_text);
            return 2;
        }
    }
    if (name != "cuda" && name != "cuda-tf32") {
        std::fprintf(stderr, "memo-cuda-worker: --name is cuda or cuda-tf32, not '%s'\n", name.c_str());
        return 2;
    }
    if (probing) leave(probe());
    if (::fcntl(3, F_GETFD) < 0 || ::fcntl(4, F_GETFD) < 0) {
        std::fprintf(stderr,
                     "memo-cuda-worker serves memo-fuzz, which starts it with its pipes on fds 3 and 4 "
                     "(memo-fuzz run --backends %s); --probe checks the GPU\n",
                     name.c_str());
        return 2;
    }
    memo::cuda::options o;
    o.name = name;
    o.tf32 = name == "cuda-tf32";
    o.exit_on_fatal = true;  // a sticky CUDA error ends the worker: a crash with CUDA's text
    try {
        memo::cuda::backend b(o);
        memo::serve_backend(b, memo::default_registry());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "memo-cuda-worker: %s\n", e.what());
        leave(3);
    }
    leave(0);
}
