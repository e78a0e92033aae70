#pragma once
// memo::onnx::exporter: a model as an ONNX ModelProto (opset 17), its weights drawn from the
// model's seed as initializers, checked by ONNX's own checker and strict shape inference.
//
//   memo::onnx::exporter ex;
//   memo::onnx::exported x = ex.to_onnx(m, {.batch = 2});
//   if (auto c = memo::onnx::check(x, m); !c.ok()) ...   // invalid, or a shape disagreement
//   memo::onnx::save(x.proto, "model.onnx");
//
// Value names: graph input `in<i>` for Input node i; graph output `out<k>` for the model's k-th
// output, or `y<i>` for node i when every node's output is asked for. A node's inputs are cast to
// its dtype first. Graph inputs and outputs are float32 for 16-bit models (cast at the edges:
// exact, since the values are representable) and float64 for float64 ones. bfloat16 nodes compute
// in float32 between casts (opset 17 has no bfloat16 Conv, pools or RNNs), their weights rounded to
// bfloat16 first, which is what computing in bfloat16 with a float accumulator means.
//
// Teacher forcing (`forced`): node i reads each producer p from graph input `f<p>` instead of p's
// own output, so each node's output can be compared on identical inputs.
//
// The model itself travels in metadata_props["memo.model"] (its JSON), so memo's importer gives
// back exactly the model that was exported.
// <sys/mman.h> (included by memo's worker isolation) defines MAP_TYPE, a name ONNX's parser uses.
#pragma push_macro("MAP_TYPE")
#undef MAP_TYPE
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#pragma pop_macro("MAP_TYPE")

#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../io/json.hpp"
#include "lower.hpp"

namespace memo::onnx {

struct export_options {
    std::int64_t batch = 2;   // the batch dimension of every tensor
    bool every_node = false;  // an output per node, `y<i>`, in node order
    bool forced = false;      // teacher forcing: producers' values from graph inputs `f<p>`
    /// The exact memo model in metadata_props (memo.model), for import: a file needs it, a run
    /// does not (its JSON costs as much as a tenth of the export).
    bool metadata = true;
};

/// The dtype of a graph input or output for a node of dtype t.
constexpr dtype io_type(dtype t) noexcept { return t == dtype::float64 ? dtype::float64 : dtype::float32; }
/// The dtype a node of dtype t computes in.
constexpr dtype compute_type(dtype t) noexcept { return t == dtype::bfloat16 ? dtype::float32 : t; }

inline constexpr std::string_view metadata_key = "memo.model";

/// The prefix of the ONNX node names written for model node i: "n<i>/".
inline std::string node_scope(std::size_t i) { return "n" + std::to_string(i) + "/"; }

/// The model node an ONNX node name (or a message quoting one, "... node with name 'n12/Conv_5'")
/// comes from, or -1.
inline int node_of(std::string_view text) {
    for (std::size_t at = text.find("'n"); at != std::string_view::npos; at = text.find("'n", at + 1)) {
        std::size_t k = at + 2;
        int v = 0;
        bool digits = false;
        while (k < text.size() && text[k] >= '0' && text[k] <= '9' && v < 100000000) v = v * 10 + (text[k++] - '0'), digits = true;
        if (digits && k < text.size() && text[k] == '/') return v;
    }
    return -1;
}

/// An exported model: the proto, and the name of the value holding each node's output.
struct exported {
    pb::ModelProto proto;
    std::vector<std::string> values;
    std::int64_t batch = 2;

    std::string bytes() const {
        std::string s;
        if (!proto.SerializeToString(&s)) throw error("ONNX model could not be serialised");
        return s;
    }
};

class exporter {
public:
    /// Adds or replaces the lowering of a layer class (users' own layers).
    void set(std::string name, lowering f) { table_[std::move(name)] = std::move(f); }
    bool has(std::string_view name) const { return table_.find(name) != table_.end(); }

    expected<void> supports(const model& m) const {
        for (const auto& n : m.nodes)
            if (n.layer->arity.max != 0 && !has(n.layer->name)) return fail("no ONNX lowering for " + std::string(n.layer->name));
        return {};
    }

    /// The ONNX model; throws memo::error naming the node a lowering failed on.
    exported to_onnx(const model& m, const export_options& o = {}) const {
        exported result;
        result.batch = o.batch;
        auto& gp = start(result.proto, m, o);
        graph g(gp);

        const std::size_t n = m.size();
        std::vector<std::string> value(n);  // node i's output, in node i's dtype
        std::vector<dims_t> dims(n);
        for (std::size_t i = 0; i < n; ++i) dims[i] = concrete(m.nodes[i].out, o.batch);
        // A producer's value cast to `t` (a forced run reads the graph input f<p> instead).
        std::vector<bool> forced_declared(n, false);
        auto input_of = [&](int p, dtype t) {
            const auto s = static_cast<std::size_t>(p);
            const dtype from = o.forced ? io_type(m.nodes[s].type) : m.nodes[s].type;
            std::string v = value[s];
            if (o.forced) {
                v = "f" + std::to_string(p);
                if (!forced_declared[s]) {
                    graph::declare(*gp.add_input(), v, from, dims[s]);
                    forced_declared[s] = true;
                }
            }
            return from == t ? v : g.op("Cast", {v}, {{"to", elem_type(t)}});
        };
        for (std::size_t i = 0; i < n; ++i) {
            const node& nd = m.nodes[i];
            if (nd.layer->arity.max == 0) {
                const std::string name = "in" + std::to_string(i);
                graph::declare(*gp.add_input(), name, io_type(nd.type), dims[i]);
                value[i] = io_type(nd.type) == nd.type ? name : g.op("Cast", {name}, {{"to", elem_type(nd.type)}});
                continue;
            }
            const auto found = table_.find(nd.layer->name);
            if (found == table_.end()) throw error(detail::where(m, i) + ": no ONNX lowering for " + std::string(nd.layer->name));
            const dtype t = compute_type(nd.type);
            std::vector<std::string> in;
            std::vector<dims_t> in_dims;
            for (int p : nd.inputs) {
                in.push_back(input_of(p, t));
                in_dims.push_back(dims[static_cast<std::size_t>(p)]);
            }
            auto ws = weights_of(m, static_cast<int>(i), &drawn_weights());
            if (t != nd.type)
                for (auto& w : ws)
                    for (auto& x : w.value.data) x = round_to(nd.type, x);
            g.set_scope(node_scope(i));
            call c{{nd}, g, std::move(in), std::move(in_dims), ws, dims[i], t};
            std::string y;
            try {
                y = found->second(c);
            } catch (const std::exception& e) {
                throw error(detail::where(m, i) + ": ONNX lowering failed: " + e.what());
            }
            value[i] = t == nd.type ? y : g.op("Cast", {y}, {{"to", elem_type(nd.type)}});
        }
        g.set_scope({});
        if (o.every_node || o.forced)
            for (std::size_t i = 0; i < n; ++i) add_output(gp, m.nodes[i].type, value[i], dims[i], "y" + std::to_string(i));
        else
            for (std::size_t k = 0; k < m.outputs.size(); ++k) {
                const auto i = static_cast<std::size_t>(m.outputs[k]);
                add_output(gp, m.nodes[i].type, value[i], dims[i], "out" + std::to_string(k));
            }
        result.values = std::move(value);
        return result;
    }

private:
    /// The model proto's header (IR version, producer, opset, memo's model as metadata when asked
    /// for); returns its graph.
    static pb::GraphProto& start(pb::ModelProto& proto, const model& m, const export_options& o) {
        proto.set_ir_version(ir_version);
        proto.set_producer_name("memo");
        proto.set_producer_version("0.1.0");
        auto* set = proto.add_opset_import();
        set->set_domain("");
        set->set_version(opset);
        if (o.metadata) {
            auto* meta = proto.add_metadata_props();
            meta->set_key(std::string(metadata_key));
            meta->set_value(io::model_to_json(m).dump());
        }
        auto& gp = *proto.mutable_graph();
        gp.set_name("memo");
        return gp;
    }

    /// A graph output `name` of a node's value (computed in dtype t), in the dtype the graph's
    /// inputs and outputs carry (io_type).
    static void add_output(pb::GraphProto& gp, dtype t, const std::string& value, const dims_t& dims, const std::string& name) {
        const dtype out = io_type(t);
        auto* nd = gp.add_node();
        nd->set_name(name);
        nd->add_input(value);
        nd->add_output(name);
        if (out == t) {
            nd->set_op_type("Identity");
        } else {
            nd->set_op_type("Cast");
            auto* a = nd->add_attribute();
            a->set_name("to");
            a->set_type(pb::AttributeProto::INT);
            a->set_i(elem_type(out));
        }
        graph::declare(*gp.add_output(), name, out, dims);
    }

    std::map<std::string, lowering, std::less<>> table_ = builtin_lowerings();
};

/// What ONNX's checker and shape inference say about an exported model.
struct check_result {
    enum class kind : unsigned char { ok, invalid, shape };
    kind what = kind::ok;
    std::string message;
    int node = -1;  // the model node whose shape ONNX infers otherwise
    bool ok() const noexcept { return what == kind::ok; }
};

/// Runs onnx::checker::check_model, then ONNX's shape inference in strict mode (type checks on,
/// errors thrown), and compares the shape ONNX infers for every node's value with the model's. A
/// checker or strict inference failure is `invalid`; a shape that differs is `shape`, at the first
/// node where it does, and comes first: when strict inference fails, lenient inference (errors
/// ignored) goes on past the node it stopped at, so that a wrong shape before it is found (strict
/// inference would stop at a later node the wrong shape breaks). Valid models, nearly all, are
/// inferred once.
inline check_result check(exported& x, const model& m) {
    check_result r;
    auto invalid = [&](const std::exception& e) {
        std::string what = e.what();
        while (!what.empty() && (what.back() == '\n' || what.back() == ' ')) what.pop_back();
        r.what = check_result::kind::invalid;
        r.message = "ONNX checker: " + what;
        return r;
    };
    try {
        ::onnx::checker::check_model(x.proto);
    } catch (const std::exception& e) {
        return invalid(e);
    }
    std::optional<check_result> strict_failure;
    try {
        ::onnx::ShapeInferenceOptions strict{true, 1, false};
        ::onnx::shape_inference::InferShapes(x.proto, ::onnx::OpSchemaRegistry::Instance(), strict);
    } catch (const std::exception& e) {
        strict_failure = invalid(e);
        r = {};
        try {
            ::onnx::ShapeInferenceOptions lenient{true, 0, false};
            ::onnx::shape_inference::InferShapes(x.proto, ::onnx::OpSchemaRegistry::Instance(), lenient);
        } catch (const std::exception& e2) {
            return invalid(e2);
        }
    }
    std::map<std::string, const pb::TypeProto*, std::less<>> inferred;
    const auto& gp = x.proto.graph();
    for (const auto* list : {&gp.input(), &gp.value_info(), &gp.output()})
        for (const auto& v : *list) inferred[v.name()] = &v.type();
    for (std::size_t i = 0; i < m.size() && i < x.values.size(); ++i) {
        const dims_t want = concrete(m.nodes[i].out, x.batch);
        dims_t got;
        bool known = false;
        if (const auto it = inferred.find(x.values[i]); it != inferred.end() && it->second->tensor_type().has_shape()) {
            known = true;
            for (const auto& d : it->second->tensor_type().shape().dim()) {
                known = known && d.has_dim_value();
                got.push_back(d.dim_value());
            }
        }
        if (!known || got != want) {
            r.what = check_result::kind::shape;
            r.node = static_cast<int>(i);
            r.message = "ONNX shape inference gives " + (known ? tensor(got).dims_str() : std::string("no shape")) + " for " + detail::where(m, i) +
                        ", memo gives " + tensor(want).dims_str();
            return r;
        }
    }
    return strict_failure ? *strict_failure : r;
}

/// Writes an ONNX model to `path`; a clear error names the file.
inline void save(const pb::ModelProto& proto, const std::string& path) {
    std::ofstream f(path, std::ios::binary);
    if (!f || !proto.SerializeToOstream(&f)) throw error(path + ": cannot write the ONNX model");
}

}  // namespace memo::onnx
