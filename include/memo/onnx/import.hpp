#pragma once
// ONNX models as memo models, so that a user's own ONNX files can seed a campaign.
//
//   memo::model m = memo::onnx::load_onnx("resnet18.onnx", memo::default_registry());
//
// A file memo wrote itself carries the exact model in metadata_props["memo.model"] (our JSON
// format) and comes back unchanged. Any other graph is mapped operator by operator onto memo's
// layers, which are Keras' and hold tensors channels_last: ONNX's NCHW tensors become NHWC, and
// each ONNX value remembers which ONNX axis each axis of memo's tensor holds, so Transposes cost
// nothing and Conv->Relu->Conv chains need no Permute. Weights are imported: each weighted node
// carries the file's, in Keras' layouts (given_weights), and mutants keep them where they fit.
// What memo does not model exactly (a per-channel constant operand, say) is imported anyway and
// listed by import_onnx as inexact.
//
// Needs ONNX's protobuf classes (Debian's libonnx-dev): compile with -DONNX_NAMESPACE=onnx
// -DONNX_ML=1 and link onnx_proto and protobuf (the memo::onnx CMake target does).
#ifndef ONNX_NAMESPACE
#error "memo/onnx/import.hpp needs -DONNX_NAMESPACE=onnx -DONNX_ML=1 (ONNX's CMake targets set them)"
#endif
#include <string>
#include <string_view>

#include "import/metadata.hpp"
#include "import/recurrent.hpp"

namespace memo::onnx {

/// An imported model with what a user needs to hold it against the file: where it computes
/// otherwise (an operation memo does not model exactly; empty when it computes as the file does,
/// weights included), and for each graph input and output its memo node and layout.
struct imported {
    struct value {
        std::string name;                    // the graph's
        int node = -1;                       // memo's node holding it
        std::vector<int> perm;               // memo axis i holds ONNX axis perm[i]
        std::vector<std::int64_t> features;  // a flattened value: memo's feature i is ONNX's features[i]
        bool merged = false;                 // a recurrent output with its direction axis folded into the last
    };
    memo::model m;
    std::vector<std::string> inexact;
    std::vector<value> inputs, outputs;
};

namespace detail {

/// The importer: reads the graph, then maps node by node, each to its operator group.
class importer : public recurrent_ops {
public:
    using recurrent_ops::recurrent_ops;

    model run() {
        where_ = src_;
        if (!mp_.has_graph()) fail("the model has no graph");
        if (g_.node_size() > max_nodes || g_.input_size() > max_nodes || g_.output_size() > max_nodes || g_.initializer_size() > max_nodes)
            fail("the graph has more than " + std::to_string(max_nodes) + " nodes, inputs, outputs or initializers");
        if (g_.node_size() == 0) fail("the graph has no nodes");
        if (g_.output_size() == 0) fail("the graph has no outputs");
        for (const auto& o : mp_.opset_import())
            if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
        if (opset_ < 1) fail("the model imports no opset of the ONNX domain");

        for (const auto& t : g_.initializer()) {
            if (t.name().empty()) fail("an initializer has no name");
            if (!consts_.emplace(t.name(), cval{&t, -1}).second) fail("initializer '" + t.name() + "' is defined twice");
        }
        std::unordered_map<std::string, int> seen_inputs;
        for (const auto& vi : g_.input()) {
            if (vi.name().empty()) fail("a graph input has no name");
            if (!seen_inputs.emplace(vi.name(), 0).second) fail("graph input '" + vi.name() + "' is declared twice");
        }
        for (int i = 0; i < g_.node_size(); ++i) {
            const auto& n = g_.node(i);
            for (const auto& o : n.output()) {
                if (o.empty()) continue;
                if (consts_.count(o) || seen_inputs.count(o) || !producer_.emplace(o, i).second)
                    fail("value '" + o + "' (an output of node " + std::to_string(i) + ") is defined twice");
            }
            for (const auto& in : n.input())
                if (!in.empty()) {
                    ++uses_[in];
                    consumers_[in].push_back(i);
                }
        }
        for (const auto& o : g_.output()) ++uses_[o.name()];

        for (const auto& vi : g_.input())
            if (!consts_.count(vi.name())) add_input(vi);
        if (m_.nodes.empty()) fail("the graph has no inputs (other than initializers)");

        for (int i = 0; i < g_.node_size(); ++i) map_node(i);

        where_ = src_;
        for (const auto& o : g_.output()) {
            if (auto it = vals_.find(o.name()); it != vals_.end()) m_.outputs.push_back(it->second.node);
            else if (consts_.count(o.name())) fail("graph output '" + o.name() + "' is a constant");
            else fail("graph output '" + o.name() + "' is not defined by the graph");
        }
        if (auto r = infer_shapes(m_); !r) fail(r.reason());
        if (auto r = validate(m_); !r) fail(r.reason());
        return std::move(m_);
    }

    /// run(), with where the model computes otherwise than the file and how it holds the file's
    /// inputs and outputs.
    imported run_all() {
        imported r;
        r.m = run();
        r.inexact = std::move(inexact_);
        auto io = [&](const std::string& name) {
            const tval& v = vals_.at(name);
            return imported::value{name, v.node, v.perm, v.features, v.merged()};
        };
        for (const auto& vi : g_.input())
            if (!consts_.count(vi.name())) r.inputs.push_back(io(vi.name()));
        for (const auto& o : g_.output()) r.outputs.push_back(io(o.name()));
        return r;
    }

private:
    void map_node(int i) {
        n_ = &g_.node(i);
        const auto& n = *n_;
        const std::string& op = n.op_type();
        where_ = src_ + ": node " + std::to_string(i) + " '" + n.name() + "' (" + op + ")";
        name_ = !n.name().empty() ? n.name() : n.output_size() > 0 && !n.output(0).empty() ? n.output(0) : op + "_" + std::to_string(i);
        if (!n.domain().empty() && n.domain() != "ai.onnx") fail("operator domain '" + n.domain() + "' is not supported");
        for (int k = 0; k < n.input_size(); ++k) {
            const auto& in = n.input(k);
            if (in.empty() || vals_.count(in) || consts_.count(in)) continue;
            auto p = producer_.find(in);
            if (p == producer_.end()) fail(input_label(k) + " is not defined (not a graph input, an initializer or a node's output)");
            if (p->second >= i)
                fail(input_label(k) + " is an output of node " + std::to_string(p->second) +
                     ", which does not come before it (nodes are not in topological order, or form a cycle)");
            fail(input_label(k) + " is an output of node " + std::to_string(p->second) + " that memo does not model");
        }
        // A flattened value whose features memo orders otherwise than ONNX: only these read it
        // feature by feature as ONNX does (Gemm and MatMul reorder their weights for it).
        static constexpr std::string_view any_order[] = {"Gemm",     "MatMul",  "Relu",           "LeakyRelu", "Elu",      "Selu", "Sigmoid",     "Tanh",
                                                         "Softmax",  "Dropout", "Cast",           "Identity",  "Softplus", "Clip", "HardSigmoid", "HardSwish",
                                                         "Softsign", "Exp",     "ThresholdedRelu"};
        if (std::find(std::begin(any_order), std::end(any_order), op) == std::end(any_order))
            for (const auto& in : n.input())
                if (auto it = vals_.find(in); it != vals_.end() && !it->second.features.empty())
                    inexact("reads '" + in + "', whose features memo's Flatten orders otherwise than ONNX's: not followed here");
        const bool all_const = std::all_of(n.input().begin(), n.input().end(), [&](const std::string& s) { return s.empty() || consts_.count(s); });
        if (op == "Constant") return constant_op();
        if (all_const && n.input_size() > 0) return fold_op(op);
        if (op != "LSTM" && op != "GRU" && op != "RNN")
            for (int k = 1; k < n.output_size(); ++k)
                if (uses(k)) fail("output " + std::to_string(k) + " '" + n.output(k) + "' is used; memo models only output 0 of " + op);

        if (op == "Conv") return conv_op();
        if (op == "ConvTranspose") return conv_transpose_op();
        if (op == "MaxPool" || op == "AveragePool") return pool_op(op == "MaxPool");
        if (op == "GlobalMaxPool" || op == "GlobalAveragePool") return global_pool_op(op == "GlobalMaxPool");
        if (op == "ReduceMean" || op == "ReduceMax") return reduce_op(op == "ReduceMax");
        if (op == "BatchNormalization") return batch_norm_op();
        if (op == "LayerNormalization") return layer_norm_op();
        if (op == "Gemm") return gemm_op();
        if (op == "MatMul") return matmul_op();
        if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Sum" || op == "Max" || op == "Min" || op == "Mean") return elementwise_op(op);
        if (op == "Concat") return concat_op();
        if (op == "Softmax") return softmax_op();
        if (op == "Clip") return clip_op();
        if (op == "Dropout") return dropout_op();
        if (op == "Identity") return set_out(0, value_in(0));
        if (op == "Cast") return cast_op();
        if (op == "Transpose") return transpose_op();
        if (op == "Flatten") return flatten_op();
        if (op == "Reshape") return reshape_op();
        if (op == "Squeeze") return squeeze_op();
        if (op == "Gather") return gather_op();
        if (op == "Slice") return slice_op();
        if (op == "Unsqueeze") return unsqueeze_op();
        if (op == "Pad") return pad_op();
        if (op == "Resize" || op == "Upsample") return resize_op(op == "Upsample");
        if (op == "Shape") return shape_op();
        if (op == "LSTM" || op == "GRU" || op == "RNN") return recurrent_op(op);
        return activation_op(op);
    }
};

}  // namespace detail

/// The memo model of an ONNX model: the exact one memo's exporter stored in metadata_props
/// ("memo.model"), else the graph mapped onto the layers of `reg` (see the top of this file).
/// The result is shape-inferred and validated; anything that does not map throws memo::error
/// naming `source`, the node (index, name, operator) and the cause.
inline memo::model from_onnx(const ::onnx::ModelProto& m, const registry& reg, const std::string& source = "onnx model") {
    for (const auto& p : m.metadata_props())
        if (p.key() == "memo.model") {
            if (p.value().size() > (std::size_t{64} << 20)) throw error(source + ": metadata memo.model is larger than 64 MiB");
            return detail::from_metadata(m, p.value(), reg, source);
        }
    return detail::importer(m, reg, source).run();
}

/// from_onnx with the inexact parts and the layouts of the graph's inputs and outputs. A file memo
/// wrote holds the exact model, in memo's own layouts.
inline imported import_onnx(const ::onnx::ModelProto& m, const registry& reg, const std::string& source = "onnx model") {
    for (const auto& p : m.metadata_props())
        if (p.key() == "memo.model") {
            imported r;
            r.m = from_onnx(m, reg, source);
            const auto& g = m.graph();
            std::size_t next = 0;
            const auto ins = r.m.input_nodes();
            for (const auto& vi : g.input())
                if (vi.name().rfind("in", 0) == 0 && next < ins.size())
                    r.inputs.push_back({vi.name(), ins[next], detail::identity_perm(r.m[ins[next]].out.rank()), {}, false}), ++next;
            for (int k = 0; k < g.output_size() && static_cast<std::size_t>(k) < r.m.outputs.size(); ++k) {
                const int o = r.m.outputs[static_cast<std::size_t>(k)];
                r.outputs.push_back({g.output(k).name(), o, detail::identity_perm(r.m[o].out.rank()), {}, false});
            }
            return r;
        }
    return detail::importer(m, reg, source).run_all();
}

/// Parses ONNX bytes (a serialized ModelProto); throws memo::error("<source>: ...") for
/// malformed or truncated input.
inline memo::model from_onnx_bytes(std::string_view bytes, const registry& reg, const std::string& source = "onnx model") {
    if (bytes.size() > static_cast<std::size_t>(INT_MAX)) throw error(source + ": larger than protobuf's 2 GiB limit");
    ::onnx::ModelProto m;
    if (!m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) throw error(source + ": not an ONNX model (malformed or truncated protobuf)");
    return from_onnx(m, reg, source);
}

/// Reads an ONNX file; errors name the file.
inline memo::model load_onnx(const std::string& path, const registry& reg) { return from_onnx_bytes(io::read_file(path), reg, path); }

/// Reads an ONNX file as import_onnx does; errors name the file.
inline imported import_onnx_file(const std::string& path, const registry& reg) {
    const std::string bytes = io::read_file(path);
    if (bytes.size() > static_cast<std::size_t>(INT_MAX)) throw error(path + ": larger than protobuf's 2 GiB limit");
    ::onnx::ModelProto m;
    if (!m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) throw error(path + ": not an ONNX model (malformed or truncated protobuf)");
    return import_onnx(m, reg, path);
}

}  // namespace memo::onnx
