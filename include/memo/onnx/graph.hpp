#pragma once
// Building an ONNX graph: unique value names, nodes with typed attributes, and initializers from
// memo tensors in any of the registry's dtypes. What the lowerings in lower.hpp write with.
//
// Needs Debian's libonnx-dev (link memo::onnx); neither memo.hpp nor all.hpp includes it.
#include <onnx/onnx_pb.h>

#include <Eigen/Core>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "../core/dtype.hpp"
#include "../engine/error.hpp"
#include "../tensors/tensor.hpp"

namespace memo::onnx {

namespace pb = ::onnx;
using dims_t = std::vector<std::int64_t>;

/// The opset memo writes: ONNX 1.12's newest, the first with LayerNormalization.
inline constexpr std::int64_t opset = 17;
inline constexpr std::int64_t ir_version = 8;

/// ONNX's element type for a memo dtype.
constexpr int elem_type(dtype t) noexcept {
    switch (t) {
        case dtype::float16: return pb::TensorProto::FLOAT16;
        case dtype::bfloat16: return pb::TensorProto::BFLOAT16;
        case dtype::float32: return pb::TensorProto::FLOAT;
        case dtype::float64: return pb::TensorProto::DOUBLE;
    }
    return pb::TensorProto::FLOAT;
}

/// A subgraph, as the attribute of a control-flow operator (Scan's body).
struct subgraph {
    std::shared_ptr<const pb::GraphProto> g;
};

/// A node attribute: int, float, string, ints, floats, strings or a graph.
struct attr {
    std::string name;
    std::variant<std::int64_t, double, std::string, dims_t, std::vector<double>, std::vector<std::string>, subgraph> v;
    attr(std::string n, std::int64_t x) : name(std::move(n)), v(x) {}
    attr(std::string n, int x) : name(std::move(n)), v(std::int64_t{x}) {}
    attr(std::string n, double x) : name(std::move(n)), v(x) {}
    attr(std::string n, const char* x) : name(std::move(n)), v(std::string(x)) {}
    attr(std::string n, std::string x) : name(std::move(n)), v(std::move(x)) {}
    attr(std::string n, dims_t x) : name(std::move(n)), v(std::move(x)) {}
    attr(std::string n, std::vector<double> x) : name(std::move(n)), v(std::move(x)) {}
    attr(std::string n, std::vector<std::string> x) : name(std::move(n)), v(std::move(x)) {}
    attr(std::string n, subgraph x) : name(std::move(n)), v(std::move(x)) {}
};

/// `t` with its axes permuted: result axis i is t's axis perm[i].
inline tensor permuted(const tensor& t, const dims_t& perm) {
    const std::size_t r = t.dims.size();
    if (r == 0) return t;
    dims_t out(r), stride(r, 1);
    for (std::size_t i = 0; i < r; ++i) out[i] = t.dims[static_cast<std::size_t>(perm[i])];
    for (std::size_t i = r; i-- > 1;) stride[i - 1] = stride[i] * t.dims[i];
    tensor y(out, t.type);
    if (y.size() == 0) return y;
    // The output in order, its source offset kept by an odometer over the output's axes (no
    // division per element): step[i] is how far the source moves when output axis i does.
    dims_t step(r), idx(r, 0);
    for (std::size_t i = 0; i < r; ++i) step[i] = stride[static_cast<std::size_t>(perm[i])];
    const std::int64_t inner = out[r - 1], inner_step = step[r - 1];
    std::int64_t src = 0;
    for (std::int64_t k = 0; k < y.size(); k += inner) {
        double* to = y.data.data() + k;
        const double* from = t.data.data() + src;
        for (std::int64_t j = 0; j < inner; ++j) to[j] = from[j * inner_step];
        for (std::size_t i = r - 1; i-- > 0;) {
            src += step[i];
            if (++idx[i] < out[i]) break;
            src -= step[i] * out[i];
            idx[i] = 0;
        }
    }
    return y;
}

/// `t` with other dimensions and the same elements in the same order.
inline tensor reshaped(tensor t, dims_t dims) {
    t.dims = std::move(dims);
    return t;
}

/// A graph being written.
class graph {
public:
    /// `prefix` keeps a subgraph's names apart from its outer graph's.
    explicit graph(pb::GraphProto& g, std::string prefix = {}) : g_(&g), prefix_(std::move(prefix)) {}

    pb::GraphProto& proto() noexcept { return *g_; }

    /// Names the nodes added from now on after `scope` ("n12/Conv_5"), so that a library's error
    /// about a node says which model node it came from.
    void set_scope(std::string scope) { scope_ = std::move(scope); }
    const std::string& scope() const noexcept { return scope_; }

    /// A value name not used before, from a hint.
    std::string fresh(std::string_view hint) { return prefix_ + std::string(hint) + "_" + std::to_string(next_++); }

    /// Adds a node of `type` and returns the names of its `outputs` outputs. An empty input name
    /// is an omitted optional input.
    std::vector<std::string> node(std::string_view type, const std::vector<std::string>& in, const std::vector<attr>& attrs, int outputs) {
        auto* n = g_->add_node();
        n->set_op_type(std::string(type));
        n->set_name(scope_ + fresh(type));
        for (const auto& i : in) n->add_input(i);
        std::vector<std::string> out;
        for (int k = 0; k < outputs; ++k) {
            out.push_back(fresh(std::string(type) + "_out"));
            n->add_output(out.back());
        }
        for (const auto& a : attrs) set_attr(*n->add_attribute(), a);
        return out;
    }
    /// Adds a node with one output and returns its name.
    std::string op(std::string_view type, const std::vector<std::string>& in, const std::vector<attr>& attrs = {}) { return node(type, in, attrs, 1)[0]; }

    /// An initializer holding `t`'s values in dtype `type` (rounded to it).
    std::string initializer(const tensor& t, dtype type, std::string_view hint = "w") {
        auto* p = g_->add_initializer();
        const std::string name = fresh(hint);
        p->set_name(name);
        p->set_data_type(elem_type(type));
        for (auto d : t.dims) p->add_dims(d);
        std::string raw;
        const auto n = t.data.size();
        switch (type) {
            case dtype::float64:
                raw.resize(n * 8);
                std::memcpy(raw.data(), t.data.data(), n * 8);
                break;
            case dtype::float32: {
                raw.resize(n * 4);
                for (std::size_t i = 0; i < n; ++i) {
                    const float f = static_cast<float>(t.data[i]);
                    std::memcpy(raw.data() + 4 * i, &f, 4);
                }
                break;
            }
            case dtype::float16:
            case dtype::bfloat16: {
                raw.resize(n * 2);
                for (std::size_t i = 0; i < n; ++i) {
                    const std::uint16_t bits = type == dtype::float16 ? Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(static_cast<float>(t.data[i])))
                                                                      : Eigen::numext::bit_cast<std::uint16_t>(Eigen::bfloat16(static_cast<float>(t.data[i])));
                    std::memcpy(raw.data() + 2 * i, &bits, 2);
                }
                break;
            }
        }
        p->set_raw_data(std::move(raw));
        return name;
    }

    /// A constant int64 tensor of rank 1 (shapes, axes, pads), shared between nodes.
    std::string ints(const dims_t& v) {
        std::string key = "i";
        for (auto x : v) key += ":" + std::to_string(x);
        if (auto it = consts_.find(key); it != consts_.end()) return it->second;
        auto* p = g_->add_initializer();
        const std::string name = fresh("ints");
        p->set_name(name);
        p->set_data_type(pb::TensorProto::INT64);
        p->add_dims(static_cast<std::int64_t>(v.size()));
        for (auto x : v) p->add_int64_data(x);
        return consts_[key] = name;
    }
    /// A constant int64 scalar (rank 0): Gather's index.
    std::string int_scalar(std::int64_t v) {
        const std::string key = "s" + std::to_string(v);
        if (auto it = consts_.find(key); it != consts_.end()) return it->second;
        auto* p = g_->add_initializer();
        const std::string name = fresh("index");
        p->set_name(name);
        p->set_data_type(pb::TensorProto::INT64);
        p->add_int64_data(v);
        return consts_[key] = name;
    }
    /// A constant float32 tensor of rank 1 (Resize's scales).
    std::string floats(const std::vector<double>& v) {
        tensor t({static_cast<std::int64_t>(v.size())}, dtype::float32);
        t.data = v;
        return initializer(t, dtype::float32, "floats");
    }
    /// A scalar (rank 0) of dtype `type`, shared between nodes.
    std::string scalar(double v, dtype type) {
        char key[64];
        std::snprintf(key, sizeof key, "c%d:%.17g", static_cast<int>(type), v);
        if (auto it = consts_.find(key); it != consts_.end()) return it->second;
        tensor t(dims_t{}, type);
        t.data = {v};
        return consts_[key] = initializer(t, type, "c");
    }
    /// A boolean constant of these dims, true where `mask` is.
    std::string bools(const dims_t& dims, const std::vector<bool>& mask) {
        auto* p = g_->add_initializer();
        const std::string name = fresh("mask");
        p->set_name(name);
        p->set_data_type(pb::TensorProto::BOOL);
        for (auto d : dims) p->add_dims(d);
        std::string raw(mask.size(), '\0');
        for (std::size_t i = 0; i < mask.size(); ++i) raw[i] = mask[i] ? 1 : 0;
        p->set_raw_data(std::move(raw));
        return name;
    }

    /// Declares a graph input or output of this element type and these dims.
    static void declare(pb::ValueInfoProto& v, const std::string& name, dtype type, const dims_t& dims) {
        v.set_name(name);
        auto* t = v.mutable_type()->mutable_tensor_type();
        t->set_elem_type(elem_type(type));
        auto* s = t->mutable_shape();
        for (auto d : dims) s->add_dim()->set_dim_value(d);
    }

private:
    static void set_attr(pb::AttributeProto& a, const attr& x) {
        a.set_name(x.name);
        std::visit(
            [&](const auto& v) {
                using V = std::decay_t<decltype(v)>;
                if constexpr (std::is_same_v<V, std::int64_t>) {
                    a.set_type(pb::AttributeProto::INT);
                    a.set_i(v);
                } else if constexpr (std::is_same_v<V, double>) {
                    a.set_type(pb::AttributeProto::FLOAT);
                    a.set_f(static_cast<float>(v));
                } else if constexpr (std::is_same_v<V, std::string>) {
                    a.set_type(pb::AttributeProto::STRING);
                    a.set_s(v);
                } else if constexpr (std::is_same_v<V, dims_t>) {
                    a.set_type(pb::AttributeProto::INTS);
                    for (auto i : v) a.add_ints(i);
                } else if constexpr (std::is_same_v<V, std::vector<double>>) {
                    a.set_type(pb::AttributeProto::FLOATS);
                    for (auto f : v) a.add_floats(static_cast<float>(f));
                } else if constexpr (std::is_same_v<V, subgraph>) {
                    a.set_type(pb::AttributeProto::GRAPH);
                    a.mutable_g()->CopyFrom(*v.g);
                } else {
                    a.set_type(pb::AttributeProto::STRINGS);
                    for (const auto& s : v) a.add_strings(s);
                }
            },
            x.v);
    }

    pb::GraphProto* g_;
    std::string prefix_, scope_;
    int next_ = 0;
    std::map<std::string, std::string, std::less<>> consts_;
};

}  // namespace memo::onnx
