#pragma once
// memo::ort::runtime: a library that runs ONNX as a library under test. Each model is exported to
// ONNX here (memo::onnx), checked by ONNX's checker and strict shape inference, and sent with its
// inputs to a persistent worker over a pipe; the worker answers with the outputs or the library's
// error text. ONNX Runtime's npm release has a Node.js worker (tools/ort-worker/worker.js); its
// PyPI release, OpenVINO and Apache TVM share a Python one (tools/onnx-worker/worker.py, an engine
// each); both speak the same frames (detail::encode, detail::decode). The worker is a
// worker_process: its death, a time-out or a runaway memory use is a run result, and a fresh
// worker serves the next model.
//
//   memo::ort::runtime ort({.worker = "tools/ort-worker/worker.js"});           // "ort": optimisations off
//   memo::ort::runtime opt({.worker = ..., .optimize = "all", .name = "ort-opt"});  // all graph optimisations
//   memo::ort::runtime tvm({.optimize = "O0", .name = "tvm-O0",                 // TVM, optimisation level 0
//                           .program = {".venv/bin/python", "tools/onnx-worker/worker.py", "--engine", "tvm"}});
//
// Needs memo::onnx (libonnx) for the export, and the worker's library.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "../../onnx/export.hpp"
#include "../wire.hpp"
#include "../worker_executor.hpp"

namespace memo::ort {

struct options {
    std::string worker;         // path of worker.js (its folder holds node_modules)
    std::string node = "node";  // the Node.js executable, looked up on PATH
    /// The library's setting, passed as --optimize: ONNX Runtime's graph optimisation level
    /// (disabled, basic, extended, all), or another worker's (tools/onnx-worker's engines). Any
    /// but "disabled" rewrites the graph (executor::rewrites_graph).
    std::string optimize = "disabled";
    std::string name = "ort";  // the backend's name in verdicts
    isolation_limits limits{};
    /// Another worker that speaks the same frames: its program and arguments, before --optimize
    /// (empty: node and worker).
    std::vector<std::string> program{};
    /// How the library's arithmetic rounds at this setting, where coarser than the model's dtypes
    /// (OpenVINO computes float64 in float32): what the oracle allows its results.
    arithmetic rounding{};
};

/// Whether the worker script and its onnxruntime-node package are installed at `worker`.
inline bool installed(const std::string& worker) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path script(worker);
    return fs::is_regular_file(script, ec) && fs::is_regular_file(script.parent_path() / "node_modules" / "onnxruntime-node" / "package.json", ec);
}

namespace detail {

/// The request frame of worker.js: ONNX bytes, named float32/float64 inputs, output names.
struct feed {
    std::string name;
    const tensor* value;
    dtype type;  // the dtype of the node it stands for
};

/// A reproducer's part of a request: where to write it, and for each output run the values
/// expected and the bound (none: the output is run, not checked).
struct reproducer_part {
    const reproducer_request* request;
    std::vector<const reproducer_request::check*> checks;  // one per output
};

inline std::string encode(const std::string& onnx_bytes, const std::vector<feed>& inputs, const std::vector<std::string>& outputs,
                          const reproducer_part* repro = nullptr) {
    wire::writer w;
    w.pod<std::uint64_t>(onnx_bytes.size());
    w.bytes().append(onnx_bytes);
    auto str = [&](const std::string& s) {
        w.pod<std::uint32_t>(static_cast<std::uint32_t>(s.size()));
        w.bytes().append(s);
    };
    w.pod<std::uint32_t>(static_cast<std::uint32_t>(inputs.size()));
    for (const auto& [name, t, type] : inputs) {
        str(name);
        const bool f64 = onnx::io_type(type) == dtype::float64;
        w.pod<std::uint8_t>(f64 ? 1 : 0);
        w.dims(t->dims);
        for (double x : t->data) {
            if (f64) w.pod<double>(x);
            else w.pod<float>(static_cast<float>(x));
        }
    }
    w.pod<std::uint32_t>(static_cast<std::uint32_t>(outputs.size()));
    for (const auto& o : outputs) str(o);
    if (repro) {
        str(repro->request->directory), str(repro->request->stem), str(repro->request->title);
        for (const auto* c : repro->checks) {
            w.pod<std::uint8_t>(c ? 1 : 0);
            if (!c) continue;
            w.dims(c->expected.dims);
            for (double x : c->expected.data) w.pod<double>(x);
            w.pod<double>(c->bound);
        }
    }
    return std::move(w.bytes());
}

/// The result frame: status (0 ok, 1 error, 2 declined: an operator or dtype the library lacks),
/// the worker's own time, message, outputs as float32 or float64 (given the dtypes they stand
/// for), and the part of the time spent compiling, where the worker says it.
inline run_result decode(std::string_view frame, const std::vector<dtype>& types) {
    wire::reader r(frame);
    run_result x;
    const auto status = r.pod<std::uint8_t>();
    const double ms = r.pod<double>();
    const auto len = r.pod<std::uint32_t>();
    std::string message;
    for (std::uint32_t i = 0; i < len; ++i) message.push_back(static_cast<char>(r.pod<std::uint8_t>()));
    x.message = message;  // a reproducer's answer: what running it printed
    const auto n = r.pod<std::uint32_t>();
    for (std::uint32_t k = 0; k < n; ++k) {
        tensor t;
        const bool f64 = r.pod<std::uint8_t>() != 0;
        t.dims = r.dims();
        const auto values = r.raw(static_cast<std::size_t>(tensor::count(t.dims)) * (f64 ? sizeof(double) : sizeof(float)));
        t.data.resize(static_cast<std::size_t>(tensor::count(t.dims)));
        if (f64) std::memcpy(t.data.data(), values.data(), values.size());
        else
            for (std::size_t i = 0; i < t.data.size(); ++i) {
                float v;
                std::memcpy(&v, values.data() + i * sizeof v, sizeof v);
                t.data[i] = v;
            }
        t.type = k < types.size() ? types[k] : dtype::float32;
        x.outputs.push_back(std::move(t));
    }
    const double compile_ms = r.done() ? 0.0 : r.pod<double>();
    if (status != 0) {
        // A kernel the library lacks for an operator and dtype is a model it declines.
        x = run_result::failed(status == 2 ? run_status::unsupported : run_status::error, message.substr(0, message.find('\n')));
        x.node = onnx::node_of(message);  // ONNX node names carry their model node ("n12/Conv_5")
    }
    x.ms = ms;
    x.compile_ms = compile_ms;
    return x;
}

}  // namespace detail

/// A library that runs ONNX behind a worker process, as a campaign executor.
class runtime final : public worker_executor {
public:
    explicit runtime(options o) : worker_executor(command_of(o), o.limits), o_(std::move(o)) {
        // Optimised, the graph is rewritten (fusions) where no node's output is wanted: plain runs.
        set_rewrites_graph(o_.optimize != "disabled");
        set_rounding(o_.rounding);
    }

    std::string_view name() const override { return o_.name; }
    expected<void> supports(const model& m) const override { return exporter_.supports(m); }
    bool writes_reproducers() const override { return true; }
    onnx::exporter& exporter() noexcept { return exporter_; }

    void submit(const model& m, std::span<const tensor> inputs, const run_options& o) override {
        begin();
        types_.clear();
        if (o.precision) return settle(run_result::failed(run_status::unsupported, "ONNX Runtime runs a model in its own dtypes"));
        onnx::export_options eo;
        eo.batch = inputs.empty() || inputs[0].dims.empty() ? 1 : inputs[0].dims[0];
        // A reproducer checks the nodes where the fault shows: each node's value is an output then,
        // unless all of them are the model's outputs (a fault of the optimised graph, which outputs
        // inside it would keep from being rewritten).
        const auto output_index = [&](int k) { return static_cast<std::size_t>(std::find(m.outputs.begin(), m.outputs.end(), k) - m.outputs.begin()); };
        const bool outputs_checked = o.reproducer && std::all_of(o.reproducer->checks.begin(), o.reproducer->checks.end(),
                                                                 [&](const auto& c) { return output_index(c.node) < m.outputs.size(); });
        eo.every_node = o.every_node || (o.reproducer && !o.reproducer->checks.empty() && !outputs_checked);
        eo.forced = !o.forced.empty();
        eo.metadata = false;  // the worker only runs it
        if (eo.forced && o.forced.size() != m.size()) return settle(run_result::failed(run_status::error, "forced run needs one tensor per node"));
        onnx::exported x;
        try {
            x = exporter_.to_onnx(m, eo);
        } catch (const std::exception& e) {
            return settle(run_result::failed(run_status::unsupported, e.what()));
        }
        // ONNX's own checks first: a model they reject never reaches the runtime.
        if (const auto c = onnx::check(x, m); !c.ok()) {
            auto r = run_result::failed(run_status::invalid, c.message);
            r.node = c.node;
            return settle(std::move(r));
        }
        std::vector<detail::feed> feeds;
        std::size_t next = 0;
        for (std::size_t i = 0; i < m.size(); ++i)
            if (m.nodes[i].layer->arity.max == 0) {
                if (next >= inputs.size()) return settle(run_result::failed(run_status::error, "missing input for node " + std::to_string(i)));
                feeds.push_back({"in" + std::to_string(i), &inputs[next++], m.nodes[i].type});
            }
        if (eo.forced) {
            for (const auto& v : x.proto.graph().input())
                if (v.name().rfind('f', 0) == 0) {
                    const auto p = std::stoul(v.name().substr(1));
                    feeds.push_back({v.name(), &o.forced[p], m.nodes[p].type});
                }
        }
        std::vector<std::string> names;
        for (const auto& v : x.proto.graph().output()) names.push_back(v.name());
        if (o.reproducer) {
            detail::reproducer_part part{o.reproducer, {}};
            if (o.reproducer->checks.empty()) part.checks.assign(names.size(), nullptr);
            else {
                std::vector<std::string> checked;
                for (const auto& c : o.reproducer->checks) {
                    // The graph's outputs: one a node, or the model's outputs in their order.
                    const auto at = eo.every_node ? static_cast<std::size_t>(c.node) : output_index(c.node);
                    if (c.node < 0 || at >= names.size() || (eo.every_node && names.size() != m.size()))
                        return settle(run_result::failed(run_status::error, "no output for node " + std::to_string(c.node)));
                    checked.push_back(names[at]);
                    part.checks.push_back(&c);
                }
                names = std::move(checked);
            }
            worker().send(detail::encode(x.bytes(), feeds, names, &part));
            return;
        }
        if (eo.every_node || eo.forced)
            for (const auto& n : m.nodes) types_.push_back(n.type);
        else
            for (int k : m.outputs) types_.push_back(m[k].type);
        worker().send(detail::encode(x.bytes(), feeds, names));
    }

    /// Runs ONNX bytes as they are (a user's own file, not memo's export of a model) on the named
    /// feeds and answers with the named outputs, float32 each; waits for the answer.
    run_result run_file(const std::string& onnx_bytes, const std::vector<detail::feed>& feeds, const std::vector<std::string>& outputs) {
        begin();
        types_.assign(outputs.size(), dtype::float32);
        worker().send(detail::encode(onnx_bytes, feeds, outputs));
        return collect();
    }

private:
    static std::vector<std::string> command_of(const options& o) {
        auto c = o.program.empty() ? std::vector<std::string>{o.node, o.worker} : o.program;
        c.insert(c.end(), {"--optimize", o.optimize});
        return c;
    }
    run_result decode(std::string_view frame) override { return detail::decode(frame, types_); }

    options o_;
    onnx::exporter exporter_;
    std::vector<dtype> types_;
};

}  // namespace memo::ort
