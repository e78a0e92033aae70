// The translation unit of memo-fuzz that includes ONNX: the backends that run memo's ONNX export
// (ONNX Runtime's npm release in a Node.js worker; its PyPI release, OpenVINO and TVM in a Python
// one), .onnx model files for --seeds and the commands that load models, model.onnx in every bug
// directory, and the export-onnx and import-onnx commands.
#include <memo/backends/onnxruntime/backend.hpp>
#include <memo/backends/onnxruntime/python_engines.hpp>
#include <memo/backends/python.hpp>
#include <memo/fuzz/run.hpp>
#include <memo/onnx/import.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/core.h>

#include "../memo_fuzz.hpp"

namespace memo_fuzz {

using namespace memo::fuzz::commands;
namespace cli = memo::fuzz::cli;

namespace {

/// Where the worker script is: $MEMO_ORT_WORKER, or tools/ort-worker/worker.js in the source tree.
std::string ort_worker() {
    if (const char* env = std::getenv("MEMO_ORT_WORKER"); env && *env) return env;
    return MEMO_SOURCE_DIR "/tools/ort-worker/worker.js";
}

memo::fuzz::backend_kind ort_backend(const std::string& name) {
    memo::fuzz::backend_kind k;
    k.name = name;
    k.make = [name](const memo::registry&, memo::isolation_limits lim, bool) -> std::unique_ptr<memo::executor> {
        memo::ort::options o;
        o.worker = ort_worker();
        o.name = name;
        o.optimize = name == "ort-opt" ? "all" : "disabled";
        o.limits = lim;
        auto x = std::make_unique<memo::ort::runtime>(std::move(o));  // always its own process: a Node.js worker
        // Not traced: an output per node would keep ort-opt's graph optimisations (fusions) from
        // happening, and the Node.js worker would ship every node's tensor back (it computes no
        // digests): ORT's runs are stored with their output digests only.
        x->set_traceable(false);
        return x;
    };
    k.library = name == "ort-opt" ? "ONNX Runtime (onnxruntime-node, all graph optimisations)" : "ONNX Runtime (onnxruntime-node, graph optimisations off)";
    k.version = [] { return memo::fuzz::npm_version(std::filesystem::path(ort_worker()).parent_path(), "onnxruntime-node"); };
    k.unavailable = [] {
        return memo::ort::installed(ort_worker())
                   ? std::string()
                   : "the ONNX Runtime worker is not installed at " + ort_worker() + " (run scripts/setup.sh, or set MEMO_ORT_WORKER)";
    };
    k.by_default = name == "ort";
    return k;
}

memo::fuzz::backend_kind python_onnx_backend(const memo::ort::python_engine& e) {
    memo::fuzz::backend_kind k;
    k.name = e.name;
    k.make = [e](const memo::registry&, memo::isolation_limits lim, bool) -> std::unique_ptr<memo::executor> {
        memo::ort::options o;
        o.name = e.name;
        o.optimize = e.setting;
        o.program = {python(), MEMO_SOURCE_DIR "/tools/onnx-worker/worker.py", "--engine", e.engine};
        o.limits = lim;
        // Importing the library takes seconds: the first run of a fresh worker has a minute more.
        // Compiling (TVM's build, OpenVINO's CPU plugin, a session) is held to its own limit.
        o.limits.startup_ms = std::max(o.limits.startup_ms, 60000.0);
        o.limits.compile_ms = compile_limit(lim);
        o.rounding = e.rounding;
        auto x = std::make_unique<memo::ort::runtime>(std::move(o));
        x->set_traceable(false);  // as ort's: outputs per node would keep the compiler from fusing
        return x;
    };
    k.by_default = false;
    k.library = e.library;
    k.version = [e] { return memo::python::package_version(python(), e.package); };
    k.unavailable = [e] { return memo::python::missing(python(), e.package, e.package); };
    return k;
}

memo::campaign::model_readers onnx_readers() {
    return {{".onnx", [](const std::string& path, const memo::registry& reg) { return memo::onnx::load_onnx(path, reg); }}};
}

memo::store::bug_files onnx_files() {
    return [](const memo::model& original, const memo::model& minimal, const std::filesystem::path& dir) {
        const memo::onnx::exporter ex;
        memo::onnx::save(ex.to_onnx(original).proto, (dir / "model.onnx").string());
        memo::onnx::save(ex.to_onnx(minimal).proto, (dir / "minimal.onnx").string());
    };
}

int export_onnx(const cli::args& a) {
    if (a.positional().size() != 2) throw memo::error("export-onnx needs MODEL and OUT.onnx (see --help)");
    const auto& reg = memo::default_registry();
    const auto& in = a.positional()[0];
    const auto& out = a.positional()[1];
    const auto m = memo::campaign::load_any(in, reg, model_readers());
    memo::onnx::export_options o;
    o.batch = static_cast<std::int64_t>(a.count("batch"));
    if (o.batch < 1) throw memo::error("--batch must be at least 1");
    memo::onnx::exporter ex;
    auto x = ex.to_onnx(m, o);
    if (!a.has("no-check")) {
        if (const auto c = memo::onnx::check(x, m); !c.ok()) throw memo::error(in + ": " + c.message);
    }
    memo::onnx::save(x.proto, out);
    fmt::print("{}: {} nodes as {} ONNX nodes (opset {}), {} initializers, batch {}{}\n", out, m.size(), x.proto.graph().node_size(), memo::onnx::opset,
               x.proto.graph().initializer_size(), o.batch, a.has("no-check") ? "" : "; ONNX's checker and shape inference agree with memo's shapes");
    return 0;
}

/// How far apart two runs' outputs are: the largest difference, relative to the largest output.
struct distance {
    double diff = 0, scale = 0;
    double relative() const { return diff / std::max(scale, 1e-30); }
};

/// Runs the imported model on the reference interpreter and the file itself on ONNX Runtime, on
/// the same inputs (held in each one's layout), and prints how far apart each output is. True
/// when every output is within `tolerance` of ONNX Runtime's, relative to its largest value.
bool check_against_file(const std::string& path, const memo::onnx::imported& x, double tolerance) {
    namespace od = memo::onnx::detail;
    memo::input_options io;
    io.samples = 1;
    const auto inputs = memo::make_inputs(x.m, io);
    const auto order = x.m.input_nodes();
    std::vector<memo::tensor> onnx_inputs;
    onnx_inputs.reserve(x.inputs.size());
    std::vector<memo::ort::detail::feed> feeds;
    for (const auto& v : x.inputs) {
        const auto at = static_cast<std::size_t>(std::find(order.begin(), order.end(), v.node) - order.begin());
        const memo::tensor& t = inputs.at(at);
        std::vector<int> back(v.perm.size());  // ONNX axis j is memo's back[j]
        for (std::size_t i = 0; i < v.perm.size(); ++i) back[static_cast<std::size_t>(v.perm[i])] = static_cast<int>(i);
        memo::tensor o;
        o.type = t.type;
        for (int i : back) o.dims.push_back(t.dims[static_cast<std::size_t>(i)]);
        o.data = od::reorder(t.data, t.dims, back);
        onnx_inputs.push_back(std::move(o));
        feeds.push_back({v.name, &onnx_inputs.back(), x.m[v.node].type});
    }
    std::vector<std::string> names;
    for (const auto& v : x.outputs) names.push_back(v.name);

    memo::reference::interpreter ref;
    const auto mine = ref.run(x.m, inputs);
    if (!mine.ok()) throw memo::error(path + ": the imported model fails on the reference: " + mine.message);
    memo::ort::options oo;
    oo.worker = ort_worker();
    oo.limits.timeout_ms = 300000;  // a whole vision model, session creation included
    oo.limits.memory_mb = 16384;
    if (!memo::ort::installed(oo.worker)) throw memo::error("--check needs the ONNX Runtime worker at " + oo.worker + " (run scripts/setup.sh)");
    memo::ort::runtime ort(oo);
    const auto theirs = ort.run_file(memo::io::read_file(path), feeds, names);
    if (!theirs.ok()) throw memo::error(path + ": ONNX Runtime fails on the file: " + theirs.message);

    bool within = true;
    for (std::size_t k = 0; k < x.outputs.size(); ++k) {
        const auto& v = x.outputs[k];
        const memo::tensor& a = mine.outputs.at(k);
        const memo::tensor& b = theirs.outputs.at(k);
        if (v.merged) {
            fmt::print("  output {} '{}': not compared (a recurrent output with its direction axis)\n", k, v.name);
            continue;
        }
        std::vector<double> held = od::reorder(b.data, b.dims, v.perm);  // in memo's layout
        if (!v.features.empty()) {
            const std::size_t f = v.features.size();
            std::vector<double> by(held.size());
            for (std::size_t i = 0; i < held.size(); ++i) by[i] = held[i / f * f + static_cast<std::size_t>(v.features[i % f])];
            held = std::move(by);
        }
        if (held.size() != a.data.size())
            throw memo::error(path + ": output '" + v.name + "' has " + std::to_string(b.data.size()) + " values on ONNX Runtime, " +
                              std::to_string(a.data.size()) + " on the reference");
        distance d;
        for (std::size_t i = 0; i < held.size(); ++i) {
            d.scale = std::max(d.scale, std::abs(held[i]));
            const double e = std::abs(a.data[i] - held[i]);
            d.diff = std::isnan(e) && std::isnan(a.data[i]) != std::isnan(held[i]) ? INFINITY : std::max(d.diff, std::isnan(e) ? 0.0 : e);
        }
        const bool ok = d.relative() <= tolerance;
        within = within && ok;
        fmt::print("  output {} '{}': {} values, largest difference {:.3g} against ONNX Runtime's largest value {:.3g} ({:.2g} relative): {}\n", k, v.name,
                   held.size(), d.diff, d.scale, d.relative(), ok ? "within tolerance" : "OUTSIDE tolerance");
    }
    return within;
}

int import_onnx(const cli::args& a) {
    if (a.positional().size() != 1) throw memo::error("import-onnx needs one FILE.onnx (see --help)");
    const auto& path = a.positional()[0];
    const auto x = memo::onnx::import_onnx_file(path, memo::default_registry());
    const auto& m = x.m;
    if (const auto out = a.get("out")) memo::io::write_file(*out, memo::io::model_to_json(m).dump(1) + "\n");
    if (!a.has("json")) {
        for (std::size_t i = 0; i < m.size(); ++i) {
            const auto& n = m.nodes[i];
            std::string ins;
            for (int k : n.inputs) ins += (ins.empty() ? "" : ",") + std::to_string(k);
            fmt::print("  {:>3} {:<26} {:<12} {:<8} <- {}\n", i, n.layer->name, n.out.str(), memo::name_of(n.type), ins);
        }
    }
    print_import_summary(path, m, a.has("json"));
    std::size_t given = 0;
    for (const auto& n : m.nodes) given += n.weights != nullptr;
    if (!a.has("json")) {
        fmt::print("weights: the file's on {} of {} weighted nodes\n", given, std::count_if(m.nodes.begin(), m.nodes.end(), [&](const memo::node& n) {
                       return !memo::weight_specs(m, static_cast<int>(&n - m.nodes.data())).empty();
                   }));
        if (x.inexact.empty()) fmt::print("exact: every operation as the file computes it\n");
    }
    for (const auto& why : x.inexact) fmt::print(a.has("json") ? stderr : stdout, "inexact: {}\n", why);
    if (const auto out = a.get("out"); out && !a.has("json")) fmt::print("written to {}\n", *out);
    if (a.has("check")) {
        const double tol = a.number("tolerance");
        if (!check_against_file(path, x, tol)) {
            fmt::print(stderr, "{}: the imported model's outputs differ from ONNX Runtime's on the file (tolerance {})\n", path, tol);
            return 1;
        }
    }
    return 0;
}

std::vector<cli::command> onnx_commands() {
    return {
        {"export-onnx",
         "export-onnx MODEL OUT.onnx [--batch N] [--no-check]",
         "Writes a model (memo JSON, Keras JSON or ONNX) as an ONNX model (opset 17): every layer lowered to\n"
         "standard ONNX operators, its weights (drawn from the model's seed) as initializers. The file is\n"
         "first checked by ONNX's checker and strict shape inference, whose shapes must equal memo's; a\n"
         "disagreement is an error naming the node.",
         {cli::valued("batch", "N", "the batch dimension of the graph's inputs and outputs", std::to_string(memo::onnx::export_options{}.batch)),
          cli::flag("no-check", "write the file without ONNX's checks")},
         export_onnx},
        {"import-onnx",
         "import-onnx FILE.onnx [--json | --out MODEL.json] [--check [--tolerance T]]",
         "Reads an ONNX model as a memo model: NCHW graphs become channels_last layers (Conv, ConvTranspose,\n"
         "Gemm/MatMul, BatchNormalization, activations, pooling, Concat, element-wise merges, Reshape/Flatten,\n"
         "Transpose, Pad, Resize, Dropout, Softmax, LSTM, GRU, RNN), with the file's weights in Keras' layouts\n"
         "(mutants keep them where they still fit). An operator or attribute that cannot be mapped is an error\n"
         "naming the node; one memo maps but not exactly (a per-channel constant operand, say) is imported and\n"
         "listed as 'inexact'. Prints the nodes and the coverage the model reaches (as import-keras does).",
         {cli::flag("json", "print the summary as JSON: layers, inputs, outputs, hash, coverage"),
          cli::valued("out", "FILE", "write the model itself as memo JSON to FILE (with its weights)"),
          cli::flag("check",
                    "run the imported model on the reference and the file on ONNX Runtime, on the same inputs; exit 1 when an output differs "
                    "by more than the tolerance"),
          cli::valued("tolerance", "T", "the largest difference allowed, relative to ONNX Runtime's largest output", "1e-3")},
         import_onnx},
    };
}

}  // namespace

void add_onnx(memo::fuzz::toolkit& t) {
    t.backends.push_back(ort_backend("ort"));
    t.backends.push_back(ort_backend("ort-opt"));
    for (const auto& e : memo::ort::python_engines()) t.backends.push_back(python_onnx_backend(e));
    t.readers = onnx_readers();
    t.attach = onnx_files();
    for (auto& c : onnx_commands()) t.commands.push_back(std::move(c));
}

}  // namespace memo_fuzz
