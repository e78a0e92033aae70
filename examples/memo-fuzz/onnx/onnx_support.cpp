// The translation unit of memo-fuzz that includes ONNX: the ONNX Runtime backends, .onnx model
// files for --seeds and the commands that load models, model.onnx in every bug directory, and the
// export-onnx and import-onnx commands.
#include <memo/backends/onnxruntime/backend.hpp>
#include <memo/fuzz/run.hpp>
#include <memo/onnx/import.hpp>

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
    k.unavailable = [] {
        return memo::ort::installed(ort_worker())
                   ? std::string()
                   : "the ONNX Runtime worker is not installed at " + ort_worker() + " (run scripts/setup.sh, or set MEMO_ORT_WORKER)";
    };
    k.by_default = name == "ort";
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
    a.only({"batch", "no-check"});
    if (a.positional().size() != 2) throw memo::error("export-onnx needs MODEL and OUT.onnx (see --help)");
    const auto& reg = memo::default_registry();
    const auto& in = a.positional()[0];
    const auto& out = a.positional()[1];
    const auto m = memo::campaign::load_any(in, reg, model_readers());
    memo::onnx::export_options o;
    o.batch = static_cast<std::int64_t>(to_u64(a.get_or("batch", "2"), "batch"));
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

int import_onnx(const cli::args& a) {
    a.only({"json", "out"});
    if (a.positional().size() != 1) throw memo::error("import-onnx needs one FILE.onnx (see --help)");
    const auto& path = a.positional()[0];
    const auto m = memo::onnx::load_onnx(path, memo::default_registry());
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
    if (const auto out = a.get("out"); out && !a.has("json")) fmt::print("written to {}\n", *out);
    return 0;
}

std::vector<cli::command> onnx_commands() {
    return {
        {"export-onnx",
         "export-onnx MODEL OUT.onnx [--batch N] [--no-check]",
         "Writes a model (memo JSON, Keras JSON or ONNX) as an ONNX model (opset 17): every layer lowered to\n"
         "standard ONNX operators, its weights (drawn from the model's seed) as initializers. The file is\n"
         "first checked by ONNX's checker and strict shape inference, whose shapes must equal memo's; a\n"
         "disagreement is an error naming the node.\n\n"
         "  --batch N     the batch dimension of the graph's inputs and outputs (default 2)\n"
         "  --no-check    write the file without ONNX's checks",
         {"batch"},
         export_onnx},
        {"import-onnx",
         "import-onnx FILE.onnx [--json | --out MODEL.json]",
         "Reads an ONNX model as a memo model: NCHW graphs become channels_last layers (Conv, ConvTranspose,\n"
         "Gemm/MatMul, BatchNormalization, activations, pooling, Concat, element-wise merges, Reshape/Flatten,\n"
         "Transpose, Pad, Resize, Dropout, Softmax, LSTM, GRU, RNN). Weights are not imported: a memo model's\n"
         "weights come from its seed. An operator or attribute that cannot be mapped is an error naming the\n"
         "node. Prints the nodes and the coverage the model reaches (as import-keras does).\n\n"
         "  --json        print the summary as JSON: layers, inputs, outputs, hash, coverage\n"
         "  --out FILE    write the model itself as memo JSON to FILE",
         {"out"},
         import_onnx},
    };
}

}  // namespace

void add_onnx(memo::fuzz::toolkit& t) {
    t.backends.push_back(ort_backend("ort"));
    t.backends.push_back(ort_backend("ort-opt"));
    t.readers = onnx_readers();
    t.attach = onnx_files();
    for (auto& c : onnx_commands()) t.commands.push_back(std::move(c));
}

}  // namespace memo_fuzz
