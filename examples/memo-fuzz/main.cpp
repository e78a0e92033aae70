// memo-fuzz: the command-line tool over the memo library. Its commands are memo::fuzz's
// (memo/fuzz/main.hpp); memo-fuzz adds the libraries under test (each in a worker process: the
// campaign's own process links none of them), ONNX export when built with it, and demo.
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <memo/backends/keras/backend.hpp>
#include <memo/backends/tfjs/backend.hpp>
#include <memo/backends/torch/worker.hpp>
#include <memo/fuzz/main.hpp>

#include "memo_fuzz.hpp"

namespace memo_fuzz {

using namespace memo::fuzz::commands;
namespace cli = memo::fuzz::cli;

/// The main job of `make demo`: the registry, MEMO's ten seed files, the reduced zoo, and a
/// campaign from it on the backends.
inline int demo(const cli::args& a) {
    namespace fs = std::filesystem;
    const std::string dir = a.has("seeds") ? a.value("seeds") : MEMO_DATA_DIR "/memo/synthesized_models";
    const auto& reg = memo::default_registry();
    memo::memo_coverage total(reg);
    fmt::print("memo: {} layer classes in the registry, {} in MEMO's coverage universe\n", reg.size(), total.total(memo::criterion::layer_type));
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw memo::error(dir + ": no .json seed models");
    fmt::print("\n1. importing MEMO's {} reduced seed files from {}\n", files.size(), dir);
    for (const auto& f : files) {
        const auto m = memo::io::load_keras(f.string(), reg);
        const auto d = total.add(m);
        fmt::print("  {:<52} {:>3} layers  +{} types +{} pairs +{} params +{} inputs\n", f.filename().string(), m.size(), d[memo::criterion::layer_type],
                   d[memo::criterion::layer_pair], d[memo::criterion::layer_param], d[memo::criterion::layer_input]);
    }
    fmt::print("  coverage of the ten files together:\n");
    print_coverage(total);

    fmt::print("\n2. reducing the ten seed architectures (Algorithm 1): memo-fuzz reduce --zoo all\n");
    const char* reduce_argv[] = {"memo-fuzz", "reduce", "--zoo", "all"};
    if (int rc = cli::dispatch({reduce_command()}, 4, const_cast<char**>(reduce_argv), "memo-fuzz", ""); rc != 0) return rc;

    const std::string out = a.value("out");
    const std::string seconds = a.value("seconds");
    const std::string backends = backends_from(a);
    fmt::print(
        "\n3. a {} s campaign from the reduced seeds, every model run on {} and judged by the oracle:\n"
        "   memo-fuzz run --backends {} --seconds {} --out {}\n",
        seconds, backends, backends, seconds, out);
    fs::remove_all(out);  // the demo's own directory, made afresh each time
    const char* run_argv[] = {"memo-fuzz", "run", "--backends", backends.c_str(), "--seconds", seconds.c_str(), "--out", out.c_str(), "--seed", "1"};
    return cli::dispatch({run_command()}, 10, const_cast<char**>(run_argv), "memo-fuzz", "");
}

inline cli::command demo_command() {
    return {
        "demo",
        "demo [--seeds DIR] [--out DIR] [--seconds S] [--backends LIST]",
        "The main job of `make demo`: imports MEMO's ten seed files and prints the coverage they reach,\n"
        "reduces the ten seed architectures, then runs a campaign from them on the backends.",
        {cli::valued("seeds", "DIR", "Keras JSON files to import (default: MEMO's seeds in tests/data)"),
         cli::valued("out", "DIR", "the campaign directory, made afresh", "build/demo-campaign"), cli::valued("seconds", "S", "the campaign's length", "60"),
         cli::valued("backends", "LIST", "the backends (default: reference and every library installed: torch, ort)")},
        demo};
}

/// Where the TensorFlow.js worker is: $MEMO_TFJS_WORKER, or tools/tfjs-worker/worker.js in the source tree.
inline std::string tfjs_worker() {
    if (const char* env = std::getenv("MEMO_TFJS_WORKER"); env && *env) return env;
    return MEMO_SOURCE_DIR "/tools/tfjs-worker/worker.js";
}

/// TensorFlow.js on its CPU ("tfjs-cpu") or WebAssembly ("tfjs-wasm") kernels, in a Node.js worker.
inline memo::fuzz::backend_kind tfjs_backend(const std::string& kernels) {
    memo::fuzz::backend_kind k;
    k.name = "tfjs-" + kernels;
    k.make = [kernels, name = k.name](const memo::registry&, memo::isolation_limits lim, bool) -> std::unique_ptr<memo::executor> {
        auto x = std::make_unique<memo::tfjs::runtime>(memo::tfjs::options{.worker = tfjs_worker(), .kernels = kernels, .name = name, .limits = lim});
        x->set_traceable(false);  // its worker would ship every layer's tensor back (it computes no digests)
        return x;
    };
    // Named with --backends: the default campaign stays on reference, torch and ort, whose pace
    // the speed figures are measured at.
    k.by_default = false;
    k.library = kernels == "cpu" ? "TensorFlow.js (tfjs-layers, cpu kernels)" : "TensorFlow.js (tfjs-layers, wasm kernels)";
    k.version = [] { return memo::fuzz::npm_version(std::filesystem::path(tfjs_worker()).parent_path(), "@tensorflow/tfjs-layers"); };
    k.unavailable = [] {
        return memo::tfjs::installed(tfjs_worker())
                   ? std::string()
                   : "the TensorFlow.js worker is not installed at " + tfjs_worker() + " (run scripts/setup.sh, or set MEMO_TFJS_WORKER)";
    };
    return k;
}

/// Keras 3 on one of its backends (tensorflow, jax, torch), eager or compiled whole (`jit`), in a
/// Python worker: "keras-tensorflow", "keras-jax-xla", ...
inline memo::fuzz::backend_kind keras_backend(const std::string& backend, bool jit) {
    memo::keras3::options o;
    o.python = python();
    o.worker = MEMO_SOURCE_DIR "/tools/keras-worker/worker.py";
    o.backend = backend;
    o.jit = jit;
    o.name = "keras-" + backend + (jit ? "-xla" : "");
    memo::fuzz::backend_kind k;
    k.name = o.name;
    k.make = [o](const memo::registry&, memo::isolation_limits lim, bool) -> std::unique_ptr<memo::executor> {
        auto x = o;
        x.limits = lim;
        // Keras and its backend's library take seconds to import: the first run of a fresh worker
        // has a minute more. Compiling has its own limit (the worker tells when it compiles): a
        // compiled run compiles the whole model first, and JAX compiles even eagerly, each layer
        // at its first shapes (an unrolled GRU's took 23 s on a loaded machine).
        x.limits.startup_ms = std::max(x.limits.startup_ms, 60000.0);
        x.limits.compile_ms = compile_limit(lim);
        auto r = std::make_unique<memo::keras3::runtime>(x);
        r->set_traceable(false);  // its worker would ship every layer's tensor back (it computes no digests)
        return r;
    };
    // Eager, one worker serves every lane: its imports take seconds, and the layers it built serve
    // the next models. Compiled, each lane has its own: compiling is most of a run, and two lanes
    // compile on two cores at once.
    k.one_worker = !jit;
    k.by_default = false;
    const std::string name = backend == "tensorflow" ? "TensorFlow" : backend == "jax" ? "JAX" : "PyTorch";
    k.library = "Keras on " + name + (jit ? ", compiled by XLA" : "");
    k.version = [o] {
        const auto keras = memo::python::package_version(o.python, "keras");
        const auto lib = memo::python::package_version(o.python, memo::keras3::library_package(o.backend));
        return keras + " (" + o.backend + " " + lib + ")";
    };
    k.unavailable = [o] { return memo::keras3::unavailable(o); };
    return k;
}

/// PyTorch in a Python worker: eager ("torch") or compiled whole by torch.compile with Inductor
/// ("torch-compile"), one lowering of memo's layers for both (tools/torch-worker).
inline memo::fuzz::backend_kind torch_backend(bool compile) {
    memo::torch::worker_options o;
    o.python = python();
    o.worker = MEMO_SOURCE_DIR "/tools/torch-worker/worker.py";
    o.compile = compile;
    o.name = compile ? "torch-compile" : "torch";
    memo::fuzz::backend_kind k;
    k.name = o.name;
    k.make = [o](const memo::registry&, memo::isolation_limits lim, bool) -> std::unique_ptr<memo::executor> {
        auto x = o;
        x.limits = lim;
        // Importing torch takes seconds: the first run of a fresh worker has a minute more.
        // Inductor compiles each model to C++ with g++ first, about a second a kernel (an unrolled
        // recurrent layer has dozens), within compiling's own limit.
        x.limits.startup_ms = std::max(x.limits.startup_ms, 60000.0);
        x.limits.compile_ms = compile_limit(lim);
        auto r = std::make_unique<memo::torch::worker_runtime>(x);
        r->set_traceable(false);  // its worker would ship every layer's tensor back (it computes no digests)
        return r;
    };
    // A worker a lane: an eager run takes milliseconds, and one worker for all lanes would keep
    // them waiting (and compiling lanes compile at once).
    k.by_default = !compile;
    k.library = compile ? "PyTorch, compiled by torch.compile (Inductor)" : "PyTorch (eager)";
    k.version = [o] { return memo::python::package_version(o.python, "torch"); };
    k.unavailable = [o] { return memo::torch::unavailable(o); };
    return k;
}

}  // namespace memo_fuzz

int main(int argc, char** argv) {
    auto& t = memo::fuzz::setup();
    t.program = "memo-fuzz";
    for (bool compile : {false, true}) t.backends.push_back(memo_fuzz::torch_backend(compile));
#ifdef MEMO_HAVE_ONNX
    memo_fuzz::add_onnx(t);
#else
    for (const char* n : {"ort", "ort-opt", "ort-py", "ort-py-opt", "openvino", "openvino-bf16", "tvm", "tvm-O0"})
        t.backends.push_back(memo::fuzz::absent(n, "memo-fuzz was built without ONNX; install libonnx-dev"));
#endif
#ifdef MEMO_HAVE_CUDA
    for (const char* n : {"cuda", "cuda-tf32"}) t.backends.push_back(memo_fuzz::cuda_backend(n));
#else
    for (const char* n : {"cuda", "cuda-tf32"}) t.backends.push_back(memo::fuzz::absent(n, "memo-fuzz was built without the CUDA toolkit (nvcc, cuDNN)"));
#endif
    for (const char* kernels : {"cpu", "wasm"}) t.backends.push_back(memo_fuzz::tfjs_backend(kernels));
    for (const char* backend : {"tensorflow", "jax", "torch"}) t.backends.push_back(memo_fuzz::keras_backend(backend, false));
    for (const char* backend : {"tensorflow", "jax"}) t.backends.push_back(memo_fuzz::keras_backend(backend, true));
    t.commands.push_back(memo_fuzz::demo_command());
    return memo::fuzz::main(argc, argv);
}
