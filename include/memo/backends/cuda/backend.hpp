#pragma once
// memo::cuda: a backend that runs models on an NVIDIA GPU: convolutions (plain, depthwise,
// separable, transposed; 1 to 3 spatial axes; ConvLSTM's step by step), softmax, pooling, recurrent
// cells, activations and batch normalisation through cuDNN, Dense and Dot through cuBLAS, and
// kernels of its own for the rest (layouts, padding and cropping, upsampling, merges,
// normalisation, LocallyConnected). float16, bfloat16, float32 and float64 models, one dtype each;
// what it lacks is `unsupported`, with the reason, never a verdict.
//
// The model is lowered on the host (plan.hpp) and run by device.cuh, which exactly one CUDA
// translation unit of the program includes (it defines run_on_device; link CUDA::cudart,
// CUDA::cublas and cuDNN, or memo::cuda). This header itself needs no CUDA headers: the campaign
// builds the backend, asks supports() and forks its worker before anything touches the GPU.
//
// In a worker (options::exit_on_fatal), a sticky CUDA error (an illegal address, a kernel fault)
// leaves the process unusable: the backend writes the error to stderr and ends the worker, and
// the campaign sees a crash with that text and starts a fresh one.
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../backend.hpp"
#include "host.hpp"
#include "plan.hpp"

namespace memo::cuda {

struct options {
    std::string name = "cuda";
    bool tf32 = false;                  // TF32 tensor-core maths allowed in cuDNN's convolutions and cuBLAS
    bool on_host = false;               // run plans on the host (host.hpp): the tests' way, no GPU needed
    bool exit_on_fatal = false;         // in a worker: a sticky CUDA error ends the process (see above)
    std::string plant_illegal_address;  // tests: a layer class after whose node a kernel writes out of bounds
};

#ifndef MEMO_CUDA_DEVICE_CODE
/// What a program without device.cuh links (a weak definition: device.cuh's replaces it): such a
/// program runs plans on the host only.
[[gnu::weak]] outcome run_on_device(const plan&, std::span<const std::vector<double>* const>, std::span<const int>, const device_options&) {
    outcome r;
    r.status = outcome::kind::error;
    r.message = "this program was built without the CUDA device code (memo/backends/cuda/device.cuh)";
    return r;
}
#endif

/// Whether this machine has an NVIDIA GPU, asked without starting CUDA (a process that forks
/// workers must not have a CUDA context of its own).
inline bool device_present() {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/dev", ec)) {
        const auto n = e.path().filename().string();
        if (n.size() > 6 && n.starts_with("nvidia") && n.find_first_not_of("0123456789", 6) == std::string::npos) return true;
    }
    return false;
}

class backend {
public:
    explicit backend(options o = {}) : o_(std::move(o)) {}

    std::string_view name() const noexcept { return o_.name; }
    expected<void> supports(const model& m) const { return plannable(m); }

    run_result run(const model& m, std::span<const tensor> inputs, const run_options& o = {}) {
        const auto start = std::chrono::steady_clock::now();
        run_result r = evaluate(m, inputs, o);
        r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        return r;
    }

private:
    run_result evaluate(const model& m, std::span<const tensor> inputs, const run_options& o) {
        if (lost_) return run_result::failed(run_status::error, "the CUDA context was lost earlier: " + *lost_);
        const bool forced = !o.forced.empty();
        const auto handed = forced ? o.forced : inputs;
        if (forced && o.forced.size() != m.size()) return run_result::failed(run_status::error, "forced run needs one tensor per node");
        if (handed.empty() || handed[0].dims.empty()) return run_result::failed(run_status::error, "no input");
        if (auto ok = plannable(m); !ok) return run_result::failed(run_status::unsupported, ok.reason());
        planned pl = make_plan(m, handed[0].dims[0], forced, o.precision, &drawn_weights());
        if (pl.failed_node >= 0) {
            auto r = run_result::failed(run_status::unsupported, pl.p.node_names[static_cast<std::size_t>(pl.failed_node)] + ": " + pl.why);
            r.node = pl.failed_node;
            return r;
        }
        pl.p.tf32 = o_.tf32;
        std::vector<const std::vector<double>*> in;
        for (const auto& t : handed) in.push_back(&t.data);
        std::vector<int> nodes = m.outputs;  // the nodes whose values come back, and their slots
        if (forced || o.every_node) {
            nodes.resize(m.size());
            std::iota(nodes.begin(), nodes.end(), 0);
        }
        std::vector<int> wanted;
        for (int k : nodes) wanted.push_back(pl.p.node_slots[static_cast<std::size_t>(k)]);
        device_options d;
        if (!o_.plant_illegal_address.empty())
            for (std::size_t i = 0; i < m.size(); ++i)
                if (m.nodes[i].layer->name == o_.plant_illegal_address) d.plant_illegal_address_at = static_cast<int>(i);
        outcome oc = o_.on_host ? run_on_host(pl.p, in, wanted) : run_on_device(pl.p, in, wanted, d);
        if (oc.status != outcome::kind::ok) return failed(oc, pl.p);
        run_result r;
        const dtype t = o.precision.value_or(m.nodes.front().type);
        for (std::size_t k = 0; k < nodes.size(); ++k) {
            tensor y(concrete(m.nodes[static_cast<std::size_t>(nodes[k])].out, handed[0].dims[0]), t);
            y.data = std::move(oc.values[k]);
            r.outputs.push_back(std::move(y));
        }
        return r;
    }

    run_result failed(const outcome& oc, const plan& p) {
        const std::string where =
            oc.node >= 0 && static_cast<std::size_t>(oc.node) < p.node_names.size() ? p.node_names[static_cast<std::size_t>(oc.node)] + ": " : "";
        if (oc.status == outcome::kind::fatal) {
            if (o_.exit_on_fatal) {
                std::fprintf(stderr, "%s%s\n", where.c_str(), oc.message.c_str());
                std::fflush(stderr);
                ::_exit(70);
            }
            lost_ = where + oc.message;
        }
        const auto status = oc.status == outcome::kind::memory        ? run_status::memory
                            : oc.status == outcome::kind::unsupported ? run_status::unsupported
                                                                      : run_status::error;
        auto r = run_result::failed(status, where + oc.message);
        r.node = oc.node;
        return r;
    }

    options o_;
    std::optional<std::string> lost_;  // why the CUDA context is gone (a sticky error), once it is
};

static_assert(memo::backend<backend>);

}  // namespace memo::cuda
