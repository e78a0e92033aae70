#pragma once
// The backends memo-fuzz can run, by name, each in its own worker process unless --in-process:
//   reference          our interpreter in the model's dtypes
//   reference-float64  our interpreter in float64 (the ground truth, as a participant)
//   torch              libtorch (when memo-fuzz was built with it)
//   ort                ONNX Runtime with graph optimisations off (when built with ONNX and the
//                      worker's onnxruntime-node is installed: scripts/setup.sh)
//   ort-opt            ONNX Runtime with every graph optimisation on
#include <memory>
#include <string>
#include <vector>

#include <memo/backends/isolate.hpp>
#include <memo/campaign/bugs.hpp>
#include <memo/campaign/seeds.hpp>
#include <memo/backends/reference/interpreter.hpp>

namespace commands {

#ifdef MEMO_HAVE_TORCH
/// Defined in torch/torch_backend.cpp, the one translation unit that includes libtorch.
std::unique_ptr<memo::executor> make_torch(const memo::registry& reg, memo::isolation_limits lim, bool isolate);
inline constexpr bool have_torch = true;
#else
inline std::unique_ptr<memo::executor> make_torch(const memo::registry&, memo::isolation_limits, bool) { return nullptr; }
inline constexpr bool have_torch = false;
#endif

#ifdef MEMO_HAVE_ONNX
/// Defined in onnx/onnx_support.cpp, the translation unit that includes ONNX.
std::unique_ptr<memo::executor> make_ort(const std::string& name, memo::isolation_limits lim);
/// Whether the ONNX Runtime worker (tools/ort-worker with its node_modules) is installed.
bool have_ort();
/// Where the worker script is: $MEMO_ORT_WORKER, or tools/ort-worker/worker.js in the source tree.
std::string ort_worker();
/// Readers of the model formats ONNX adds (.onnx), for --seeds and the commands that load models.
memo::campaign::model_readers model_readers();
/// Writes model.onnx and minimal.onnx into each new bug's directory.
memo::campaign::bug_files bug_files();
inline constexpr bool have_onnx = true;
#else
inline std::unique_ptr<memo::executor> make_ort(const std::string&, memo::isolation_limits) { return nullptr; }
inline bool have_ort() { return false; }
inline std::string ort_worker() { return {}; }
inline memo::campaign::model_readers model_readers() { return {}; }
inline memo::campaign::bug_files bug_files() { return {}; }
inline constexpr bool have_onnx = false;
#endif

inline std::vector<std::string> available_backends() {
    std::vector<std::string> r{"reference", "reference-float64"};
    if (have_torch) r.push_back("torch");
    if (have_ort()) {
        r.push_back("ort");
        r.push_back("ort-opt");
    }
    return r;
}
/// Every library that is installed, with the reference.
inline std::string default_backends() {
    std::string s = "reference";
    if (have_torch) s += ",torch";
    if (have_ort()) s += ",ort";
    return s;
}

inline std::vector<std::string> split_list(const std::string& s) {
    std::vector<std::string> r;
    std::size_t at = 0;
    while (at <= s.size()) {
        const auto comma = s.find(',', at);
        auto item = s.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        if (!item.empty()) r.push_back(item);
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    return r;
}

/// The executors for a comma-separated list of backend names; a clear error for an unknown or
/// unavailable one.
inline std::vector<std::unique_ptr<memo::executor>> make_backends(const std::string& list, const memo::registry& reg,
                                                                  memo::isolation_limits lim, bool isolate) {
    std::vector<std::unique_ptr<memo::executor>> r;
    auto names = split_list(list);
    if (names.empty()) throw memo::error("--backends: no backend named");
    for (const auto& n : names) {
        std::optional<memo::dtype> precision;
        if (n == "reference") precision = std::nullopt;
        else if (n == "reference-float64" || n == "reference-f64") precision = memo::dtype::float64;
        else if (n == "torch") {
            if (!have_torch) throw memo::error("--backends: torch is not available (memo-fuzz was built without libtorch; install libtorch-dev)");
            r.push_back(make_torch(reg, lim, isolate));
            continue;
        } else if (n == "ort" || n == "ort-opt") {
            if (!have_onnx) throw memo::error("--backends: " + n + " is not available (memo-fuzz was built without ONNX; install libonnx-dev)");
            if (!have_ort())
                throw memo::error("--backends: " + n + " is not available: the ONNX Runtime worker is not installed at " + ort_worker() +
                                  " (run scripts/setup.sh, or set MEMO_ORT_WORKER)");
            r.push_back(make_ort(n, lim));  // always its own process: a Node.js worker
            // Not traced: an output per node would keep ort-opt's graph optimisations (fusions) from
            // happening, and the Node.js worker would ship every node's tensor back (it computes no
            // digests): ORT's runs are stored with their output digests only.
            r.back()->set_traceable(false);
            continue;
        } else {
            std::string known;
            for (const auto& a : available_backends()) known += (known.empty() ? "" : ", ") + a;
            throw memo::error("--backends: unknown backend '" + n + "' (available: " + known + ")");
        }
        auto make = [precision] { return memo::reference::interpreter(precision); };
        if (isolate) r.push_back(memo::make_isolated<memo::reference::interpreter>(make, reg, lim));
        else r.push_back(memo::make_in_process(make()));
    }
    for (std::size_t i = 0; i < r.size(); ++i)
        for (std::size_t j = i + 1; j < r.size(); ++j)
            if (r[i]->name() == r[j]->name()) throw memo::error("--backends: " + std::string(r[i]->name()) + " named twice");
    return r;
}

}  // namespace commands
