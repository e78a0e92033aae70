#pragma once
// ONNX models as memo models, so that a user's own ONNX files can seed a campaign.
//
//   memo::model m = memo::onnx::load_onnx("resnet18.onnx", memo::default_registry());
//
// A file memo wrote itself carries the exact model in metadata_props["memo.model"] (our JSON
// format) and comes back unchanged. Any other graph is mapped operator by operator onto memo's
// layers, which are Keras' and hold tensors channels_last: ONNX's NCHW tensors become NHWC, and
// each ONNX value remembers which ONNX axis each axis of memo's tensor holds, so Transposes cost
// nothing and Conv->Relu->Conv chains need no Permute. Weights are not imported (a memo model
// draws its weights from its seed): initializers only tell shapes (filters, kernel sizes, units).
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

}  // namespace memo::onnx
