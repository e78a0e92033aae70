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
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../core/model.hpp"
#include "../io/json.hpp"

namespace memo::onnx {

namespace detail {

using i64 = std::int64_t;
using dims_t = std::vector<i64>;
using io::json;

// Limits that keep hostile files from costing much: every count is checked before it is used.
inline constexpr int max_nodes = 100000;           // ONNX nodes, graph values, memo nodes
inline constexpr i64 max_dim = i64{1} << 20;       // one dimension of a graph input
inline constexpr i64 max_elements = i64{1} << 31;  // elements per sample of any tensor
inline constexpr std::size_t max_read = 64;        // values read from one constant (shapes, pads)
inline constexpr int max_json_depth = 64;          // nesting of the memo.model metadata

inline std::string list_str(std::span<const i64> xs) {
    std::string s = "(";
    for (std::size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + std::to_string(xs[i]);
    return s + ")";
}
inline std::string list_str(std::span<const int> xs) {
    dims_t d(xs.begin(), xs.end());
    return list_str(d);
}
/// An ONNX shape, its unknown batch entry as N: (N, 3, 224, 224).
inline std::string dims_str(std::span<const i64> xs) {
    std::string s = "(";
    for (std::size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + (xs[i] == shape::unknown ? std::string("N") : std::to_string(xs[i]));
    return s + ")";
}
inline std::string real_str(double x) { return memo::to_string(value{x}); }

/// a * b for non-negative a and b, or -1 when it passes max_elements.
inline i64 mul_capped(i64 a, i64 b) {
    i64 r = 0;
    if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r) || r > max_elements) return -1;
    return r;
}

inline std::vector<int> identity_perm(int r) {
    std::vector<int> p(static_cast<std::size_t>(r));
    for (int i = 0; i < r; ++i) p[static_cast<std::size_t>(i)] = i;
    return p;
}
/// NCHW held as NHWC: memo's axes hold ONNX's axes 0, 2, 3, ..., 1.
inline std::vector<int> channels_last_perm(int r) {
    std::vector<int> p{0};
    for (int a = 2; a < r; ++a) p.push_back(a);
    p.push_back(1);
    return p;
}

/// A value memo computes: the node producing it, and how memo's tensor holds ONNX's.
struct tval {
    int node = -1;
    std::vector<int> perm;  // memo axis i holds ONNX axis perm[i]; perm[0] is ONNX's batch axis
    int dirs_axis = -1;     // an RNN's direction axis, folded into memo's last axis (dirs * hidden)
    i64 dirs = 1;
    int rank() const { return static_cast<int>(perm.size()); }
    int onnx_rank() const { return rank() + (dirs_axis >= 0 ? 1 : 0); }
    bool merged() const { return dirs_axis >= 0; }
};

/// A constant: an initializer, a Constant node's tensor, or a folded shape computation whose
/// element `batch` (a flat index, when >= 0) stands for the batch size.
struct cval {
    const ::onnx::TensorProto* t = nullptr;
    int batch = -1;
};

inline const ::onnx::AttributeProto* find_attr(const ::onnx::NodeProto& n, std::string_view name) {
    for (const auto& a : n.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

inline std::optional<dtype> dtype_of(i64 elem_type) {
    switch (elem_type) {
        case ::onnx::TensorProto::FLOAT: return dtype::float32;
        case ::onnx::TensorProto::FLOAT16: return dtype::float16;
        case ::onnx::TensorProto::DOUBLE: return dtype::float64;
        case ::onnx::TensorProto::BFLOAT16: return dtype::bfloat16;
        default: return std::nullopt;
    }
}

inline double half_to_double(std::uint16_t h) {
    const int e = (h >> 10) & 31, m = h & 1023;
    const double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? std::numeric_limits<double>::quiet_NaN() : HUGE_VAL) : std::ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}
inline double bfloat16_to_double(std::uint16_t b) {
    const std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

/// Operators whose output has the input's layout, seen through when looking for what layout a
/// fresh tensor should take.
inline bool layout_free(std::string_view op) {
    static constexpr std::string_view ops[] = {"Relu",
                                               "Sigmoid",
                                               "Tanh",
                                               "Softplus",
                                               "Softsign",
                                               "Elu",
                                               "Selu",
                                               "HardSigmoid",
                                               "LeakyRelu",
                                               "PRelu",
                                               "ThresholdedRelu",
                                               "Clip",
                                               "Exp",
                                               "Identity",
                                               "Dropout",
                                               "Cast",
                                               "BatchNormalization",
                                               "Add",
                                               "Sub",
                                               "Mul",
                                               "Div",
                                               "Sum",
                                               "Max",
                                               "Min",
                                               "Mean"};
    return std::find(std::begin(ops), std::end(ops), op) != std::end(ops);
}
/// Operators that work on NCHW tensors' spatial axes: memo holds their input channels_last.
inline bool spatial_op(std::string_view op) {
    static constexpr std::string_view ops[] = {"Conv",          "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool",
                                               "GlobalMaxPool", "Pad",           "Resize",  "Upsample"};
    return std::find(std::begin(ops), std::end(ops), op) != std::end(ops);
}

inline constexpr std::string_view conv_names[] = {"", "Conv1D", "Conv2D", "Conv3D"};
inline constexpr std::string_view depthwise_names[] = {"", "DepthwiseConv1D", "DepthwiseConv2D", ""};
inline constexpr std::string_view transpose_names[] = {"", "", "Conv2DTranspose", "Conv3DTranspose"};
inline constexpr std::string_view max_pool_names[] = {"", "MaxPooling1D", "MaxPooling2D", "MaxPooling3D"};
inline constexpr std::string_view avg_pool_names[] = {"", "AveragePooling1D", "AveragePooling2D", "AveragePooling3D"};
inline constexpr std::string_view global_max_names[] = {"", "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D"};
inline constexpr std::string_view global_avg_names[] = {"", "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAveragePooling3D"};
inline constexpr std::string_view zero_padding_names[] = {"", "ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D"};
inline constexpr std::string_view upsampling_names[] = {"", "UpSampling1D", "UpSampling2D", "UpSampling3D"};

/// Keras' 'same' padding in total along one axis (TensorFlow puts the odd one at the end).
inline i64 same_total(i64 in, i64 k_eff, i64 stride) {
    const i64 out = (in + stride - 1) / stride;
    return std::max<i64>((out - 1) * stride + k_eff - in, 0);
}

/// The metadata JSON comes from an untrusted file, and model_from_json takes shapes and indices
/// on trust: check nesting before parsing, and numbers and sizes before reading.
inline void check_json_depth(std::string_view text, const std::string& src) {
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_json_depth) throw error(src + ": metadata memo.model nests deeper than " + std::to_string(max_json_depth));
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
}

inline void check_memo_json(const json& j, const std::string& src) {
    const std::string what = src + ": metadata memo.model: ";
    auto integers = [&](const json& a, const char* field) {
        if (!a.is_array()) throw error(what + field + " is not a list");
        for (const auto& e : a)
            if (!e.is_number_integer()) throw error(what + field + " holds " + e.dump() + ", not an integer");
    };
    // Sample elements of a shape, each entry an integer 1..max_elements (or null for the batch).
    auto elements = [&](const json& a, const char* field, bool first_is_batch) {
        if (!a.is_array()) throw error(what + field + " is not a list");
        i64 e = 1;
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (first_is_batch && i == 0 && a[i].is_null()) continue;
            if (!a[i].is_number_integer() || a[i].get<i64>() < 1 || a[i].get<i64>() > max_elements)
                throw error(what + field + " " + a.dump() + " has an entry that is not 1 to 2^31");
            if (first_is_batch && i == 0) continue;
            if ((e = mul_capped(e, a[i].get<i64>())) < 0) throw error(what + field + " " + a.dump() + " has more than 2^31 elements");
        }
    };
    if (!j.is_object()) throw error(what + "not an object");
    if (j.contains("seed") && !j["seed"].is_number_integer()) throw error(what + "seed is not an integer");
    if (!j.contains("nodes") || !j["nodes"].is_array()) throw error(what + "nodes is not a list");
    if (j["nodes"].size() > static_cast<std::size_t>(max_nodes)) throw error(what + "more than " + std::to_string(max_nodes) + " nodes");
    for (const auto& n : j["nodes"]) {
        if (!n.is_object()) throw error(what + "a node is not an object");
        if (n.contains("inputs")) integers(n["inputs"], "inputs");
        if (n.contains("shape")) elements(n["shape"], "shape", true);
        if (n.contains("params") && n["params"].is_object())
            for (const char* p : {"target_shape", "shape"})
                if (n["params"].contains(p) && n["params"][p].is_array()) elements(n["params"][p], p, false);
    }
    if (j.contains("outputs")) integers(j["outputs"], "outputs");
    if (j.contains("weight_edits")) {
        if (!j["weight_edits"].is_array()) throw error(what + "weight_edits is not a list");
        for (const auto& e : j["weight_edits"]) {
            if (!e.is_object()) throw error(what + "a weight edit is not an object");
            for (const char* f : {"node", "seed"})
                if (e.contains(f) && !e[f].is_number_integer()) throw error(what + "weight edit " + f + " is not an integer");
        }
    }
}

class importer {
public:
    importer(const ::onnx::ModelProto& mp, const registry& reg, const std::string& src) : mp_(mp), g_(mp.graph()), reg_(reg), src_(src) {}

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
    using kv = std::pair<std::string_view, value>;

    const ::onnx::ModelProto& mp_;
    const ::onnx::GraphProto& g_;
    const registry& reg_;
    const std::string& src_;
    i64 opset_ = 0;
    i64 batch_hint_ = 0;  // the graph inputs' fixed batch size: 0 none seen, -1 they disagree
    model m_;
    std::unordered_map<std::string, tval> vals_;
    std::unordered_map<std::string, cval> consts_;
    std::deque<::onnx::TensorProto> owned_;  // tensors of Constant nodes and folded shapes
    std::unordered_map<std::string, int> producer_, uses_;
    std::unordered_map<std::string, std::vector<int>> consumers_;
    std::unordered_map<std::string, tval> permuted_;  // Permutes already made, by value and layout
    std::vector<bool> bare_dense_;                    // memo nodes: a Dense from MatMul, no bias yet
    const ::onnx::NodeProto* n_ = nullptr;
    std::string where_, name_;

    [[noreturn]] void fail(const std::string& why) const { throw error(where_ + ": " + why); }

    // ---- attributes of the current node ----------------------------------------------------

    const ::onnx::AttributeProto* attr(std::string_view name) const { return find_attr(*n_, name); }
    static std::string type_name(int t) {
        return ::onnx::AttributeProto::AttributeType_IsValid(t)
                   ? ::onnx::AttributeProto::AttributeType_Name(static_cast<::onnx::AttributeProto::AttributeType>(t))
                   : std::to_string(t);
    }
    void expect_type(const ::onnx::AttributeProto& a, ::onnx::AttributeProto::AttributeType t, bool set) const {
        if (a.type() != t && !(a.type() == ::onnx::AttributeProto::UNDEFINED && set))
            fail("attribute " + a.name() + " has type " + type_name(a.type()) + ", expected " + type_name(t));
    }
    i64 attr_int(std::string_view name, i64 fallback) const {
        const auto* a = attr(name);
        if (!a) return fallback;
        expect_type(*a, ::onnx::AttributeProto::INT, a->has_i());
        return a->i();
    }
    double attr_real(std::string_view name, double fallback) const {
        const auto* a = attr(name);
        if (!a) return fallback;
        expect_type(*a, ::onnx::AttributeProto::FLOAT, a->has_f());
        return a->f();
    }
    std::string attr_str(std::string_view name, const std::string& fallback) const {
        const auto* a = attr(name);
        if (!a) return fallback;
        expect_type(*a, ::onnx::AttributeProto::STRING, a->has_s());
        return a->s();
    }
    dims_t attr_ints(std::string_view name) const {
        const auto* a = attr(name);
        if (!a) return {};
        expect_type(*a, ::onnx::AttributeProto::INTS, a->ints_size() > 0);
        if (static_cast<std::size_t>(a->ints_size()) > max_read) fail("attribute " + a->name() + " has " + std::to_string(a->ints_size()) + " entries");
        return dims_t(a->ints().begin(), a->ints().end());
    }
    std::vector<double> attr_reals(std::string_view name) const {
        const auto* a = attr(name);
        if (!a) return {};
        expect_type(*a, ::onnx::AttributeProto::FLOATS, a->floats_size() > 0);
        if (static_cast<std::size_t>(a->floats_size()) > max_read) fail("attribute " + a->name() + " has " + std::to_string(a->floats_size()) + " entries");
        return std::vector<double>(a->floats().begin(), a->floats().end());
    }
    std::vector<std::string> attr_strs(std::string_view name) const {
        const auto* a = attr(name);
        if (!a) return {};
        expect_type(*a, ::onnx::AttributeProto::STRINGS, a->strings_size() > 0);
        if (static_cast<std::size_t>(a->strings_size()) > max_read) fail("attribute " + a->name() + " has " + std::to_string(a->strings_size()) + " entries");
        return std::vector<std::string>(a->strings().begin(), a->strings().end());
    }
    /// An integer list attribute of `count` entries in [lo, hi], or `fallback` repeated.
    dims_t attr_list(std::string_view name, int count, i64 fallback, i64 lo, i64 hi) const {
        if (!attr(name)) return dims_t(static_cast<std::size_t>(count), fallback);
        dims_t v = attr_ints(name);
        if (v.size() != static_cast<std::size_t>(count))
            fail("attribute " + std::string(name) + "=" + list_str(v) + " has " + std::to_string(v.size()) + " entries, expected " + std::to_string(count));
        for (auto x : v)
            if (x < lo || x > hi)
                fail("attribute " + std::string(name) + "=" + list_str(v) + " is not supported (each entry must be " + std::to_string(lo) + " to " +
                     std::to_string(hi) + ")");
        return v;
    }

    // ---- inputs and outputs of the current node ---------------------------------------------

    const std::string& input_name(int k) const {
        static const std::string absent;
        return k < n_->input_size() ? n_->input(k) : absent;
    }
    bool has_input(int k) const { return !input_name(k).empty(); }
    bool is_const(int k) const { return consts_.count(input_name(k)) > 0; }
    int uses(int output) const {
        if (output >= n_->output_size() || n_->output(output).empty()) return 0;
        auto it = uses_.find(n_->output(output));
        return it == uses_.end() ? 0 : it->second;
    }
    std::string input_label(int k) const { return "input " + std::to_string(k) + " '" + input_name(k) + "'"; }

    tval value_in(int k) const {
        if (!has_input(k)) fail("input " + std::to_string(k) + " is missing");
        if (auto it = vals_.find(input_name(k)); it != vals_.end()) return it->second;
        fail(input_label(k) + " is a constant; memo maps " + n_->op_type() + " only over computed tensors (no constant folding)");
    }
    const cval& const_in(int k, const char* what) const {
        if (!has_input(k)) fail("input " + std::to_string(k) + " (" + what + ") is missing");
        if (auto it = consts_.find(input_name(k)); it != consts_.end()) return it->second;
        fail(input_label(k) + " (" + what + ") is computed; memo needs it to be an initializer or a Constant");
    }
    const shape& out_of(const tval& t) const { return m_[t.node].out; }

    void set_out(int k, tval t) {
        if (k < n_->output_size() && !n_->output(k).empty()) vals_[n_->output(k)] = std::move(t);
    }
    void set_const(int k, cval c) {
        if (k < n_->output_size() && !n_->output(k).empty()) consts_[n_->output(k)] = c;
    }
    const ::onnx::TensorProto* own(::onnx::TensorProto t) {
        owned_.push_back(std::move(t));
        return &owned_.back();
    }

    /// ONNX's shape of a value (the batch entry unknown).
    dims_t onnx_dims(const tval& t) const {
        const shape& s = out_of(t);
        dims_t d(static_cast<std::size_t>(t.onnx_rank()), 1);
        for (int i = 0; i < t.rank(); ++i) d[static_cast<std::size_t>(t.perm[static_cast<std::size_t>(i)])] = s[i];
        if (t.merged()) {
            d[static_cast<std::size_t>(t.perm.back())] = s.back() / t.dirs;
            d[static_cast<std::size_t>(t.dirs_axis)] = t.dirs;
        }
        return d;
    }
    /// memo's axis holding ONNX axis a of t, or -1.
    static int memo_axis(const tval& t, int a) {
        for (int i = 0; i < t.rank(); ++i)
            if (t.perm[static_cast<std::size_t>(i)] == a) return i;
        return -1;
    }
    int normal_axis(i64 a, int r, const char* what) const {
        if (a < -r || a >= r) fail(std::string(what) + "=" + std::to_string(a) + " is not an axis of a rank-" + std::to_string(r) + " tensor");
        return static_cast<int>(a < 0 ? a + r : a);
    }

    // ---- constants --------------------------------------------------------------------------

    dims_t const_dims(const cval& c, const char* what) const {
        const auto& t = *c.t;
        if (t.dims_size() > shape::max_rank) fail(std::string(what) + " has rank " + std::to_string(t.dims_size()));
        dims_t d(t.dims().begin(), t.dims().end());
        for (auto x : d)
            if (x < 0 || x > (i64{1} << 40)) fail(std::string(what) + " has shape " + list_str(d));
        return d;
    }
    /// How many values a small constant holds; fails past `cap`.
    std::size_t const_count(const ::onnx::TensorProto& t, const std::string& what, std::size_t cap) const {
        if (t.data_location() == ::onnx::TensorProto::EXTERNAL) fail(what + " is stored outside the file");
        if (t.dims_size() > shape::max_rank) fail(what + " has rank " + std::to_string(t.dims_size()));
        std::size_t n = 1;
        for (auto d : t.dims()) {
            if (d < 0) fail(what + " has a negative dimension");
            if (d == 0) return 0;
            if (static_cast<std::size_t>(d) > cap || (n *= static_cast<std::size_t>(d)) > cap) fail(what + " has more than " + std::to_string(cap) + " values");
        }
        return n;
    }
    template <class T>
    std::vector<T> raw_values(const ::onnx::TensorProto& t, std::size_t n, const std::string& what) const {
        const std::string& raw = t.raw_data();
        if (raw.size() != n * sizeof(T)) fail(what + " has " + std::to_string(raw.size()) + " bytes of data for " + std::to_string(n) + " values");
        std::vector<T> v(n);
        if (n) std::memcpy(v.data(), raw.data(), n * sizeof(T));  // ONNX stores raw data little-endian, as x86 and ARM do
        return v;
    }
    void check_count(int have, std::size_t n, const std::string& what) const {
        if (static_cast<std::size_t>(have) != n) fail(what + " holds " + std::to_string(have) + " values, its shape says " + std::to_string(n));
    }
    /// The integers of a small integer constant.
    dims_t read_ints(const cval& c, const std::string& what, std::size_t cap = max_read) const {
        const auto& t = *c.t;
        const std::size_t n = const_count(t, what, cap);
        const bool raw = t.has_raw_data();
        dims_t out;
        switch (t.data_type()) {
            case ::onnx::TensorProto::INT64:
                if (raw) return raw_values<std::int64_t>(t, n, what);
                check_count(t.int64_data_size(), n, what);
                return dims_t(t.int64_data().begin(), t.int64_data().end());
            case ::onnx::TensorProto::INT32:
                if (raw) {
                    for (auto x : raw_values<std::int32_t>(t, n, what)) out.push_back(x);
                    return out;
                }
                break;
            case ::onnx::TensorProto::UINT64:
                if (raw) {
                    for (auto x : raw_values<std::uint64_t>(t, n, what)) out.push_back(static_cast<i64>(std::min<std::uint64_t>(x, INT64_MAX)));
                    return out;
                }
                check_count(t.uint64_data_size(), n, what);
                for (auto x : t.uint64_data()) out.push_back(static_cast<i64>(std::min<std::uint64_t>(x, INT64_MAX)));
                return out;
            case ::onnx::TensorProto::INT8:
            case ::onnx::TensorProto::BOOL:
                if (raw) {
                    for (auto x : raw_values<std::int8_t>(t, n, what)) out.push_back(x);
                    return out;
                }
                break;
            case ::onnx::TensorProto::UINT8:
                if (raw) {
                    for (auto x : raw_values<std::uint8_t>(t, n, what)) out.push_back(x);
                    return out;
                }
                break;
            case ::onnx::TensorProto::INT16:
                if (raw) {
                    for (auto x : raw_values<std::int16_t>(t, n, what)) out.push_back(x);
                    return out;
                }
                break;
            case ::onnx::TensorProto::UINT16:
                if (raw) {
                    for (auto x : raw_values<std::uint16_t>(t, n, what)) out.push_back(x);
                    return out;
                }
                break;
            case ::onnx::TensorProto::UINT32:
                if (raw) {
                    for (auto x : raw_values<std::uint32_t>(t, n, what)) out.push_back(x);
                    return out;
                }
                check_count(t.uint64_data_size(), n, what);
                return dims_t(t.uint64_data().begin(), t.uint64_data().end());
            default: fail(what + " holds " + type_str(t.data_type()) + " values, not integers");
        }
        check_count(t.int32_data_size(), n, what);
        return dims_t(t.int32_data().begin(), t.int32_data().end());
    }
    /// The values of a small numeric constant, as reals.
    std::vector<double> read_reals(const cval& c, const std::string& what, std::size_t cap = max_read) const {
        const auto& t = *c.t;
        const std::size_t n = const_count(t, what, cap);
        const bool raw = t.has_raw_data();
        std::vector<double> out;
        switch (t.data_type()) {
            case ::onnx::TensorProto::FLOAT:
                if (raw) {
                    for (auto x : raw_values<float>(t, n, what)) out.push_back(x);
                    return out;
                }
                check_count(t.float_data_size(), n, what);
                return std::vector<double>(t.float_data().begin(), t.float_data().end());
            case ::onnx::TensorProto::DOUBLE:
                if (raw) return raw_values<double>(t, n, what);
                check_count(t.double_data_size(), n, what);
                return std::vector<double>(t.double_data().begin(), t.double_data().end());
            case ::onnx::TensorProto::FLOAT16:
            case ::onnx::TensorProto::BFLOAT16: {
                const bool half = t.data_type() == ::onnx::TensorProto::FLOAT16;
                if (raw) {
                    for (auto x : raw_values<std::uint16_t>(t, n, what)) out.push_back(half ? half_to_double(x) : bfloat16_to_double(x));
                    return out;
                }
                check_count(t.int32_data_size(), n, what);
                for (auto x : t.int32_data()) {
                    const auto bits = static_cast<std::uint16_t>(x & 0xffff);
                    out.push_back(half ? half_to_double(bits) : bfloat16_to_double(bits));
                }
                return out;
            }
            case ::onnx::TensorProto::INT64:
            case ::onnx::TensorProto::INT32:
            case ::onnx::TensorProto::INT16:
            case ::onnx::TensorProto::INT8:
            case ::onnx::TensorProto::UINT64:
            case ::onnx::TensorProto::UINT32:
            case ::onnx::TensorProto::UINT16:
            case ::onnx::TensorProto::UINT8:
            case ::onnx::TensorProto::BOOL:
                for (auto x : read_ints(c, what, cap)) out.push_back(static_cast<double>(x));
                return out;
            default: fail(what + " holds " + type_str(t.data_type()) + " values, not numbers");
        }
    }
    double scalar_real(int k, const char* what) const {
        const auto v = read_reals(const_in(k, what), input_label(k) + " (" + what + ")");
        if (v.size() != 1) fail(input_label(k) + " (" + what + ") holds " + std::to_string(v.size()) + " values, expected one");
        return v[0];
    }
    static std::string type_str(int t) {
        return ::onnx::TensorProto::DataType_IsValid(t) ? ::onnx::TensorProto::DataType_Name(static_cast<::onnx::TensorProto::DataType>(t)) : std::to_string(t);
    }
    /// An INT64 constant holding `v`, of shape `d` (1-D of v's length when empty and not scalar).
    cval int_const(const dims_t& v, dims_t d, bool scalar, int batch) {
        ::onnx::TensorProto t;
        t.set_data_type(::onnx::TensorProto::INT64);
        if (!scalar && d.empty()) d.push_back(static_cast<i64>(v.size()));
        for (auto x : d) t.add_dims(x);
        for (auto x : v) t.add_int64_data(x);
        return cval{own(std::move(t)), batch};
    }

    // ---- emitting memo nodes ----------------------------------------------------------------

    int emit(std::string_view cls, std::vector<int> inputs, const std::vector<kv>& params, const std::string& suffix = "") {
        const layer_def* L = reg_.find(cls);
        if (!L) fail("maps to " + std::string(cls) + ", which the registry does not have");
        if (m_.nodes.size() >= static_cast<std::size_t>(max_nodes)) fail("the model passes " + std::to_string(max_nodes) + " nodes");
        node nd = make_node(*L, name_ + suffix);
        for (const auto& [k, v] : params) {
            const int i = L->param_index(k);
            if (i < 0) fail("maps to " + std::string(cls) + ", which has no parameter " + std::string(k));
            nd.params[static_cast<std::size_t>(i)] = v;
        }
        nd.inputs = std::move(inputs);
        m_.nodes.push_back(std::move(nd));
        bare_dense_.push_back(false);
        const std::size_t i = m_.nodes.size() - 1;
        if (auto r = infer_node(m_, i); !r) fail("maps to " + std::string(cls) + ": " + r.reason());
        check_size(m_.nodes[i].out);
        return static_cast<int>(i);
    }
    /// Every tensor stays within max_elements per sample, so that no later product overflows.
    void check_size(const shape& s) const {
        i64 e = 1;
        for (auto d : s.sample())
            if (d < 1 || (e = mul_capped(e, d)) < 0) fail("gives a tensor of shape " + s.str() + ", which memo does not hold (at most 2^31 elements)");
    }
    /// The output shape of class `cls` on `in` with `params`, without adding a node.
    expected<shape> try_infer(std::string_view cls, const shape& in, const std::vector<kv>& params) const {
        const layer_def* L = reg_.find(cls);
        if (!L) fail("maps to " + std::string(cls) + ", which the registry does not have");
        node nd = make_node(*L);
        for (const auto& [k, v] : params)
            if (const int i = L->param_index(k); i >= 0) nd.params[static_cast<std::size_t>(i)] = v;
        for (std::size_t p = 0; p < L->params.size(); ++p)
            if (!L->params[p].dom.validate(nd.params[p])) return memo::fail("parameter " + std::string(L->params[p].name) + " is out of range");
        const shape ins[1] = {in};
        return L->infer(inputs(ins), nd.params);
    }

    /// t with memo's axes holding ONNX's axes `want`: t itself, or a Permute of the two
    /// non-batch axes of a rank-3 tensor. memo has no other transposition.
    tval as_layout(const std::string& name, const tval& t, const std::vector<int>& want, const std::string& purpose) {
        if (t.merged()) fail("'" + name + "' still has the recurrent layer's direction axis; memo maps it only through Squeeze, Transpose and Reshape");
        if (t.perm == want) return t;
        if (t.rank() == 3 && want.size() == 3 && t.perm[0] == want[0] && t.perm[1] == want[2] && t.perm[2] == want[1]) {
            const std::string key = name + "#" + list_str(want);
            if (auto it = permuted_.find(key); it != permuted_.end()) return it->second;
            tval r{emit("Permute", {t.node}, {{"dims", ints{2, 1}}}, "_permute"), want};
            permuted_[key] = r;
            return r;
        }
        fail("'" + name + "' is held with memo's axes on ONNX's axes " + list_str(t.perm) + ", " + purpose + " needs " + list_str(want) +
             ": memo has no layer for that transposition");
    }
    /// t with ONNX's last axis as memo's last (Dense, LayerNormalization act on it).
    tval last_axis_last(const std::string& name, const tval& t, const std::string& purpose) {
        const int r = t.onnx_rank();
        // A folded direction axis: memo's last axis is ONNX's last only with one direction.
        if (t.merged() && t.dirs == 1 && t.perm.back() == r - 1) return t;
        if (!t.merged() && t.perm.back() == r - 1) return t;
        std::vector<int> want = t.perm;
        if (const int m = memo_axis(t, r - 1); m >= 0) std::swap(want[static_cast<std::size_t>(m)], want.back());
        return as_layout(name, t, want, purpose);
    }

    // ---- layouts of fresh tensors -----------------------------------------------------------

    /// The layout (memo axis -> ONNX axis) that the first consumer of value `name` (of rank r)
    /// wants, seen through layout-free operators and Transposes; empty when none matters.
    std::vector<int> demand(const std::string& name, int r, int depth) const {
        if (depth > 16 || r < 2) return {};
        auto it = consumers_.find(name);
        if (it == consumers_.end() || it->second.empty()) return {};
        const auto& c = g_.node(it->second.front());
        const std::string& op = c.op_type();
        if (spatial_op(op)) return r >= 3 && r <= 5 ? channels_last_perm(r) : std::vector<int>{};
        if (op == "LSTM" || op == "GRU" || op == "RNN") {
            if (r != 3 || c.input_size() < 1 || c.input(0) != name) return {};
            const auto* a = find_attr(c, "layout");
            return a && a->i() == 1 ? identity_perm(3) : std::vector<int>{1, 0, 2};
        }
        if (op == "MatMul" || op == "Gemm" || op == "LayerNormalization") return identity_perm(r);
        if (c.output_size() < 1) return {};
        if (op == "Transpose") {
            std::vector<int> p;
            if (const auto* a = find_attr(c, "perm")) {
                if (a->ints_size() != r) return {};
                std::vector<bool> seen(static_cast<std::size_t>(r), false);
                for (auto x : a->ints()) {
                    if (x < 0 || x >= r || seen[static_cast<std::size_t>(x)]) return {};
                    seen[static_cast<std::size_t>(x)] = true;
                    p.push_back(static_cast<int>(x));
                }
            } else {
                for (int i = r - 1; i >= 0; --i) p.push_back(i);
            }
            const auto q = demand(c.output(0), r, depth + 1);
            if (q.size() != static_cast<std::size_t>(r)) return {};
            std::vector<int> in(static_cast<std::size_t>(r));
            for (std::size_t i = 0; i < in.size(); ++i) in[i] = p[static_cast<std::size_t>(q[i])];
            return in;
        }
        if (layout_free(op)) return demand(c.output(0), r, depth + 1);
        return {};
    }
    /// How memo should hold a fresh tensor `name` of ONNX rank r with its batch on ONNX axis
    /// `batch` (-1: free): as its consumers want, else NCHW as NHWC (batch first, then the rest).
    std::vector<int> preferred_perm(const std::string& name, int r, int batch) const {
        auto want = demand(name, r, 0);
        if (want.size() == static_cast<std::size_t>(r) && (batch < 0 || want[0] == batch)) return want;
        const int b = batch < 0 ? 0 : batch;
        if (b == 0 && r >= 3 && r <= 5) return channels_last_perm(r);
        std::vector<int> p{b};
        for (int a = 0; a < r; ++a)
            if (a != b) p.push_back(a);
        return p;
    }

    // ---- graph inputs -----------------------------------------------------------------------

    void add_input(const ::onnx::ValueInfoProto& vi) {
        where_ = src_ + ": input '" + vi.name() + "'";
        name_ = vi.name();
        if (!vi.type().has_tensor_type()) fail("is not a tensor");
        const auto& tt = vi.type().tensor_type();
        const auto t = dtype_of(tt.elem_type());
        if (!t) fail("has element type " + type_str(tt.elem_type()) + "; memo's inputs are float16, bfloat16, float32 or float64");
        if (!tt.has_shape()) fail("has no shape");
        const int r = tt.shape().dim_size();
        if (r < 2 || r > 6) fail("has rank " + std::to_string(r) + "; memo's inputs have rank 2 to 6 (batch included)");
        const auto perm = preferred_perm(vi.name(), r, -1);
        const int b = perm[0];
        dims_t d(static_cast<std::size_t>(r), shape::unknown);
        for (int a = 0; a < r; ++a) {
            const auto& dim = tt.shape().dim(a);
            if (dim.has_dim_value()) {
                const i64 v = dim.dim_value();
                if (a == b) {
                    if (v >= 1) batch_hint_ = batch_hint_ == 0 || batch_hint_ == v ? v : -1;
                    continue;
                }
                if (v < 1 || v > max_dim) fail("dimension " + std::to_string(a) + " is " + std::to_string(v) + "; memo takes 1 to 2^20");
                d[static_cast<std::size_t>(a)] = v;
            } else if (a != b) {
                fail("dimension " + std::to_string(a) + " is " + (dim.has_dim_param() ? "symbolic ('" + dim.dim_param() + "')" : std::string("missing")) +
                     "; only the batch dimension (" + std::to_string(b) + ") may be");
            }
        }
        ints sample;
        i64 e = 1;
        for (int i = 1; i < r; ++i) {
            sample.push(d[static_cast<std::size_t>(perm[static_cast<std::size_t>(i)])]);
            if ((e = mul_capped(e, sample[i - 1])) < 0) fail("has more than 2^31 elements per sample");
        }
        const int k = emit("InputLayer", {}, {{"shape", sample}, {"dtype", std::string(name_of(*t))}});
        vals_[vi.name()] = tval{k, perm};
    }

    // ---- nodes ------------------------------------------------------------------------------

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
        if (op == "Unsqueeze") return unsqueeze_op();
        if (op == "Pad") return pad_op();
        if (op == "Resize" || op == "Upsample") return resize_op(op == "Upsample");
        if (op == "Shape") return shape_op();
        if (op == "LSTM" || op == "GRU" || op == "RNN") return recurrent_op(op);
        return activation_op(op);
    }

    // Constants and the shape computations that exporters write for x.view(x.size(0), -1).

    void constant_op() {
        for (const auto& a : n_->attribute()) {
            ::onnx::TensorProto t;
            if (a.name() == "value") {
                expect_type(a, ::onnx::AttributeProto::TENSOR, a.has_t());
                return set_const(0, cval{&a.t(), -1});
            }
            if (a.name() == "value_float" || a.name() == "value_floats") {
                t.set_data_type(::onnx::TensorProto::FLOAT);
                if (a.name() == "value_float") t.add_float_data(static_cast<float>(attr_real("value_float", 0)));
                else {
                    for (auto x : attr_reals("value_floats")) t.add_float_data(static_cast<float>(x));
                    t.add_dims(t.float_data_size());
                }
            } else if (a.name() == "value_int" || a.name() == "value_ints") {
                t.set_data_type(::onnx::TensorProto::INT64);
                if (a.name() == "value_int") t.add_int64_data(attr_int("value_int", 0));
                else {
                    for (auto x : attr_ints("value_ints")) t.add_int64_data(x);
                    t.add_dims(t.int64_data_size());
                }
            } else {
                fail("attribute " + a.name() + " is not supported");
            }
            return set_const(0, cval{own(std::move(t)), -1});
        }
        fail("has no value");
    }

    /// An operator over constants only: the few that shape computations use are folded.
    void fold_op(const std::string& op) {
        if (op == "Identity" || op == "Cast") return set_const(0, const_in(0, "input"));
        if (op == "Unsqueeze" || op == "Squeeze") {
            const cval& c = const_in(0, "data");
            const auto v = read_ints(c, input_label(0));
            if (const_dims(c, "data").size() > 1) fail("folds only scalars and 1-D constants");
            // A scalar becomes [x], a [x] stays 1-D or becomes a scalar: the values are unchanged.
            const bool scalar = op == "Squeeze" && v.size() == 1;
            return set_const(0, int_const(v, scalar ? dims_t{} : dims_t{static_cast<i64>(v.size())}, scalar, c.batch));
        }
        if (op == "Concat") {
            dims_t v;
            int batch = -1;
            for (int k = 0; k < n_->input_size(); ++k) {
                const cval& c = const_in(k, "input");
                if (c.batch >= 0) batch = static_cast<int>(v.size()) + c.batch;
                for (auto x : read_ints(c, input_label(k))) v.push_back(x);
                if (v.size() > max_read) fail("folds at most " + std::to_string(max_read) + " values");
            }
            return set_const(0, int_const(v, {}, false, batch));
        }
        if (op == "Gather") {
            const cval& data = const_in(0, "data");
            const cval& idx = const_in(1, "indices");
            if (attr_int("axis", 0) != 0 || const_dims(data, "data").size() != 1 || const_dims(idx, "indices").size() > 1)
                fail("folds only a Gather from a 1-D constant");
            const auto v = read_ints(data, input_label(0));
            dims_t out;
            int batch = -1;
            for (auto j : read_ints(idx, input_label(1))) {
                if (j < -static_cast<i64>(v.size()) || j >= static_cast<i64>(v.size())) fail("index " + std::to_string(j) + " is out of range");
                if (j < 0) j += static_cast<i64>(v.size());
                if (j == data.batch) batch = static_cast<int>(out.size());
                out.push_back(v[static_cast<std::size_t>(j)]);
            }
            const bool scalar = const_dims(idx, "indices").empty();
            return set_const(0, int_const(out, scalar ? dims_t{} : dims_t{static_cast<i64>(out.size())}, scalar, batch));
        }
        fail("all inputs are constants, and memo folds no " + op + " (constant folding is not supported)");
    }

    void shape_op() {
        const tval x = value_in(0);
        const dims_t d = onnx_dims(x);
        const auto r = static_cast<i64>(d.size());
        auto clamp = [&](i64 a) { return std::clamp<i64>(a < 0 ? a + r : a, 0, r); };
        const i64 start = clamp(attr_int("start", 0)), end = clamp(attr_int("end", r));
        dims_t v;
        int batch = -1;
        for (i64 a = start; a < end; ++a) {
            if (a == x.perm[0]) batch = static_cast<int>(v.size());
            v.push_back(a == x.perm[0] ? std::max<i64>(batch_hint_, 1) : d[static_cast<std::size_t>(a)]);
        }
        set_const(0, int_const(v, {}, false, batch));
    }

    // Convolutions and pooling.

    /// kernel_shape from the attribute or the weight's shape (dims 2..), each 1..512.
    dims_t window(const dims_t& wd, int N) const {
        dims_t ks;
        if (attr("kernel_shape")) {
            ks = attr_ints("kernel_shape");
            if (ks.size() != static_cast<std::size_t>(N))
                fail("attribute kernel_shape=" + list_str(ks) + " has " + std::to_string(ks.size()) + " entries, expected " + std::to_string(N));
            if (!wd.empty() && !std::equal(ks.begin(), ks.end(), wd.begin() + 2))
                fail("attribute kernel_shape=" + list_str(ks) + " disagrees with the weight's shape " + list_str(wd));
        } else if (!wd.empty()) {
            ks.assign(wd.begin() + 2, wd.end());
        } else {
            fail("has no attribute kernel_shape");
        }
        for (auto k : ks)
            if (k < 1 || k > 512) fail("attribute kernel_shape=" + list_str(ks) + " is not supported (each entry must be 1 to 512)");
        return ks;
    }
    /// ONNX's pads (all begins, then all ends) after auto_pad.
    dims_t explicit_pads(const dims_t& sizes, const dims_t& k_eff, const dims_t& strides) const {
        const int N = static_cast<int>(sizes.size());
        const std::string mode = attr_str("auto_pad", "NOTSET");
        if (mode == "NOTSET" || mode.empty()) return attr_list("pads", 2 * N, 0, 0, 4096);
        if (mode == "VALID") return dims_t(static_cast<std::size_t>(2 * N), 0);
        if (mode != "SAME_UPPER" && mode != "SAME_LOWER") fail("attribute auto_pad='" + mode + "' is not supported");
        dims_t p(static_cast<std::size_t>(2 * N));
        for (std::size_t i = 0; i < sizes.size(); ++i) {
            const i64 total = same_total(sizes[i], k_eff[i], strides[i]), small = total / 2;
            p[i] = mode == "SAME_UPPER" ? small : total - small;
            p[i + sizes.size()] = total - p[i];
        }
        return p;
    }
    /// ONNX's output sizes of a window op (floor rounding).
    dims_t window_out(const dims_t& sizes, const dims_t& pads, const dims_t& k_eff, const dims_t& strides) const {
        dims_t out;
        for (std::size_t i = 0; i < sizes.size(); ++i) {
            const i64 padded = sizes[i] + pads[i] + pads[i + sizes.size()];
            if (padded < k_eff[i]) fail("the window (" + std::to_string(k_eff[i]) + ") is larger than the padded input (" + std::to_string(padded) + ")");
            out.push_back((padded - k_eff[i]) / strides[i] + 1);
        }
        return out;
    }
    /// Keras' padding for ONNX's pads: 'valid' for none, 'same' for the pads Keras' 'same' takes,
    /// else (when allowed) a ZeroPadding node in front of a 'valid' window. Returns the node to
    /// feed, or -1 when the pads do not map.
    int pad_for(const tval& x, const dims_t& pads, const dims_t& sizes, const dims_t& k_eff, const dims_t& strides, std::string& padding,
                bool allow_zero_padding) {
        const std::size_t N = sizes.size();
        if (std::all_of(pads.begin(), pads.end(), [](i64 p) { return p == 0; })) {
            padding = "valid";
            return x.node;
        }
        bool same = true;
        for (std::size_t i = 0; i < N; ++i) {
            const i64 total = same_total(sizes[i], k_eff[i], strides[i]);
            same = same && pads[i] == total / 2 && pads[i + N] == total - total / 2;
        }
        if (same) {
            padding = "same";
            return x.node;
        }
        if (!allow_zero_padding) return -1;
        padding = "valid";
        ints amounts;
        for (std::size_t i = 0; i < N; ++i) amounts.push(pads[i]), amounts.push(pads[i + N]);
        return emit(zero_padding_names[N], {x.node}, {{"padding", amounts}}, "_pad");
    }
    void expect_spatial(int k, const dims_t& want) const {
        const shape& s = m_[k].out;
        for (std::size_t i = 0; i < want.size(); ++i)
            if (s[static_cast<int>(i) + 1] != want[i])
                fail("maps to " + std::string(m_[k].layer->name) + " with output " + s.str() + ", where ONNX's spatial sizes are " + list_str(want));
    }
    /// The input of a spatial op: NCHW of rank 3 to 5 held as NHWC.
    tval spatial_in(int lo, int hi) {
        const tval x = value_in(0);
        const int r = x.onnx_rank();
        if (r < lo || r > hi)
            fail(input_label(0) + " has rank " + std::to_string(r) + "; memo maps " + n_->op_type() + " for ranks " + std::to_string(lo) + " to " +
                 std::to_string(hi));
        return as_layout(input_name(0), x, channels_last_perm(r), n_->op_type());
    }
    static dims_t spatial_sizes(const shape& s) {
        dims_t d;
        for (int i = 1; i + 1 < s.rank(); ++i) d.push_back(s[i]);
        return d;
    }

    void conv_op() {
        const tval x = spatial_in(3, 5);
        const int r = x.rank(), N = r - 2;
        const dims_t wd = const_dims(const_in(1, "W"), "the weight W");
        if (wd.size() != static_cast<std::size_t>(r)) fail("the weight W has shape " + list_str(wd) + ", expected rank " + std::to_string(r));
        const shape& in = out_of(x);
        const i64 cin = in.back(), group = attr_int("group", 1), M = wd[0];
        const dims_t ks = window(wd, N), strides = attr_list("strides", N, 1, 1, 512), dil = attr_list("dilations", N, 1, 1, 512);
        dims_t k_eff(ks.size());
        for (std::size_t i = 0; i < ks.size(); ++i) k_eff[i] = (ks[i] - 1) * dil[i] + 1;
        const dims_t sizes = spatial_sizes(in), pads = explicit_pads(sizes, k_eff, strides);
        const dims_t want = window_out(sizes, pads, k_eff, strides);
        std::string cls;
        std::vector<kv> ps;
        if (group == 1) {
            if (wd[1] != cin) fail("the weight W has shape " + list_str(wd) + " for " + std::to_string(cin) + " input channels");
            cls = conv_names[N];
            ps.push_back({"filters", M});
        } else if (group == cin && N <= 2 && wd[1] == 1 && M % cin == 0) {
            cls = depthwise_names[N];
            ps.push_back({"depth_multiplier", M / cin});
        } else {
            fail("attribute group=" + std::to_string(group) + " is not supported (only 1 or the number of input channels" +
                 (N == 3 ? ", and only 1 in 3D" : "") + ")");
        }
        std::string padding;
        const int src = pad_for(x, pads, sizes, k_eff, strides, padding, true);
        ps.push_back({"kernel_size", ints_of(ks)});
        ps.push_back({"strides", ints_of(strides)});
        ps.push_back({"dilation_rate", ints_of(dil)});
        ps.push_back({"padding", padding});
        ps.push_back({"use_bias", has_input(2)});
        const int k = emit(cls, {src}, ps);
        expect_spatial(k, want);
        set_out(0, tval{k, x.perm});
    }

    void conv_transpose_op() {
        const tval x = spatial_in(4, 5);
        const int r = x.rank(), N = r - 2;
        const dims_t wd = const_dims(const_in(1, "W"), "the weight W");
        if (wd.size() != static_cast<std::size_t>(r)) fail("the weight W has shape " + list_str(wd) + ", expected rank " + std::to_string(r));
        const shape& in = out_of(x);
        if (wd[0] != in.back()) fail("the weight W has shape " + list_str(wd) + " for " + std::to_string(in.back()) + " input channels");
        if (const i64 group = attr_int("group", 1); group != 1) fail("attribute group=" + std::to_string(group) + " is not supported (only 1)");
        if (attr("output_shape")) fail("attribute output_shape is not supported (give pads and output_padding)");
        const dims_t ks = window(wd, N), strides = attr_list("strides", N, 1, 1, 512), dil = attr_list("dilations", N, 1, 1, 512);
        const dims_t op = attr_list("output_padding", N, 0, 0, 511);
        const dims_t sizes = spatial_sizes(in);
        const std::string mode = attr_str("auto_pad", "NOTSET");
        dims_t pads(static_cast<std::size_t>(2 * N), 0), want(static_cast<std::size_t>(N));
        if (mode == "NOTSET" || mode.empty()) pads = attr_list("pads", 2 * N, 0, 0, 4096);
        else if (mode != "VALID" && mode != "SAME_UPPER" && mode != "SAME_LOWER") fail("attribute auto_pad='" + mode + "' is not supported");
        for (std::size_t i = 0; i < want.size(); ++i) {
            want[i] = mode.starts_with("SAME") ? sizes[i] * strides[i]
                                               : strides[i] * (sizes[i] - 1) + op[i] + (ks[i] - 1) * dil[i] + 1 - pads[i] - pads[i + want.size()];
            if (want[i] < 1) fail("gives spatial size " + std::to_string(want[i]));
        }
        // Keras' sizes: 'valid' is in * s + max(k - s, 0), 'same' in * s, and with output_padding
        // (in - 1) * s + k - 2 * pad + output_padding; take the first that gives ONNX's.
        std::vector<kv> ps{
            {"filters", wd[1]}, {"kernel_size", ints_of(ks)}, {"strides", ints_of(strides)}, {"dilation_rate", ints_of(dil)}, {"use_bias", has_input(2)}};
        const std::pair<const char*, value> candidates[] = {{"valid", none}, {"same", none}, {"valid", ints_of(op)}, {"same", ints_of(op)}};
        for (const auto& [padding, output_padding] : candidates) {
            auto trial = ps;
            trial.push_back({"padding", std::string(padding)});
            trial.push_back({"output_padding", output_padding});
            auto s = try_infer(transpose_names[N], in, trial);
            if (!s || spatial_sizes(*s) != want) continue;
            const int k = emit(transpose_names[N], {x.node}, trial);
            return set_out(0, tval{k, x.perm});
        }
        fail("attributes pads=" + list_str(pads) + ", output_padding=" + list_str(op) +
             " are not supported (memo's transposed convolutions give the sizes of Keras' 'valid' or 'same')");
    }

    void pool_op(bool max) {
        const tval x = spatial_in(3, 5);
        const int N = x.rank() - 2;
        if (!attr("kernel_shape")) fail("has no attribute kernel_shape");
        const dims_t ks = window({}, N), strides = attr_list("strides", N, 1, 1, 512);
        if (attr("dilations")) {
            const dims_t d = attr_ints("dilations");
            if (std::any_of(d.begin(), d.end(), [](i64 v) { return v != 1; }))
                fail("attribute dilations=" + list_str(d) + " is not supported (Keras' pooling has no dilation)");
        }
        if (const i64 c = attr_int("ceil_mode", 0); c != 0) fail("attribute ceil_mode=" + std::to_string(c) + " is not supported (Keras' pooling rounds down)");
        const dims_t sizes = spatial_sizes(out_of(x)), pads = explicit_pads(sizes, ks, strides);
        const dims_t want = window_out(sizes, pads, ks, strides);
        std::string padding;
        int src;
        if (max) {
            // Zeros pad where ONNX's max ignores the border: the same shapes, and the same values
            // after a ReLU, the common case.
            src = pad_for(x, pads, sizes, ks, strides, padding, true);
        } else {
            const i64 cip = attr_int("count_include_pad", 0);
            const bool padded = std::any_of(pads.begin(), pads.end(), [](i64 p) { return p != 0; });
            if (cip != 0 && padded)
                fail("attribute count_include_pad=" + std::to_string(cip) + " with pads " + list_str(pads) +
                     " is not supported (Keras' average pooling leaves padding out of the count)");
            src = pad_for(x, pads, sizes, ks, strides, padding, false);
            if (src < 0) fail("attribute pads=" + list_str(pads) + " is not supported (only zeros or the pads of Keras' 'same')");
        }
        const int k =
            emit(max ? max_pool_names[N] : avg_pool_names[N], {src}, {{"pool_size", ints_of(ks)}, {"strides", ints_of(strides)}, {"padding", padding}});
        expect_spatial(k, want);
        set_out(0, tval{k, x.perm});
    }

    void global_pool_op(bool max) {
        const tval x = spatial_in(3, 5);
        const int N = x.rank() - 2;
        // ONNX keeps the pooled axes as 1s: keepdims.
        const int k = emit(max ? global_max_names[N] : global_avg_names[N], {x.node}, {{"keepdims", true}});
        set_out(0, tval{k, x.perm});
    }

    /// ReduceMean / ReduceMax over all spatial axes: a global pooling.
    void reduce_op(bool max) {
        const tval x0 = value_in(0);
        const int r = x0.onnx_rank();
        dims_t axes = attr_ints("axes");
        if (!attr("axes") && has_input(1)) axes = read_ints(const_in(1, "axes"), input_label(1));
        std::vector<bool> on(static_cast<std::size_t>(r), false);
        for (auto a : axes) on[static_cast<std::size_t>(normal_axis(a, r, "axis"))] = true;
        bool spatial = r >= 3 && r <= 5 && !on[0] && !on[1];
        for (int a = 2; a < r; ++a) spatial = spatial && on[static_cast<std::size_t>(a)];
        if (!spatial) fail("attribute axes=" + list_str(axes) + " is not supported (only all spatial axes of an NCHW tensor: a global pooling)");
        const tval x = spatial_in(3, 5);
        const int N = r - 2;
        const bool keep = attr_int("keepdims", 1) != 0;
        const int k = emit(max ? global_max_names[N] : global_avg_names[N], {x.node}, {{"keepdims", keep}});
        set_out(0, tval{k, keep ? x.perm : identity_perm(2)});
    }

    // Normalization.

    void batch_norm_op() {
        const tval x = value_in(0);
        const int r = x.onnx_rank();
        if (x.merged()) as_layout(input_name(0), x, {}, "BatchNormalization");
        if (r < 3 || r > 6) fail(input_label(0) + " has rank " + std::to_string(r) + "; memo's BatchNormalization takes ranks 3 to 6");
        for (int k = 1; k <= 4; ++k) const_in(k, k == 1 ? "scale" : k == 2 ? "B" : k == 3 ? "mean" : "var");
        if (const i64 t = attr_int("training_mode", 0); t != 0) fail("attribute training_mode=" + std::to_string(t) + " is not supported");
        if (const i64 s = attr_int("spatial", 1); s != 1) fail("attribute spatial=" + std::to_string(s) + " is not supported");
        const int c = memo_axis(x, 1);
        if (c <= 0) fail("the channel axis is the batch axis in memo's layout");
        const int k =
            emit("BatchNormalization", {x.node}, {{"axis", i64{c - r}}, {"epsilon", attr_real("epsilon", 1e-5)}, {"momentum", attr_real("momentum", 0.9)}});
        set_out(0, tval{k, x.perm});
    }

    void layer_norm_op() {
        const tval x0 = value_in(0);
        const int r = x0.onnx_rank();
        if (const i64 a = attr_int("axis", -1); normal_axis(a, r, "attribute axis") != r - 1)
            fail("attribute axis=" + std::to_string(a) + " is not supported (only the last axis)");
        const tval x = last_axis_last(input_name(0), x0, "LayerNormalization");
        const_in(1, "Scale");
        if (has_input(2)) const_in(2, "B");
        tval y = x;
        y.node = emit("LayerNormalization", {x.node}, {{"axis", i64{-1}}, {"epsilon", attr_real("epsilon", 1e-5)}, {"center", has_input(2)}});
        set_out(0, y);
    }

    // Dense.

    void gemm_op() {
        const tval x0 = value_in(0);
        if (x0.onnx_rank() != 2) fail(input_label(0) + " has rank " + std::to_string(x0.onnx_rank()) + "; Gemm takes rank 2");
        const tval x = as_layout(input_name(0), x0, identity_perm(2), "Gemm");
        if (const i64 t = attr_int("transA", 0); t != 0) fail("attribute transA=" + std::to_string(t) + " is not supported (only 0: A holds the batch)");
        const bool tb = attr_int("transB", 0) != 0;
        if (const double a = attr_real("alpha", 1.0); a != 1.0) fail("attribute alpha=" + real_str(a) + " is not supported (only 1)");
        if (const double b = attr_real("beta", 1.0); b != 1.0 && has_input(2)) fail("attribute beta=" + real_str(b) + " is not supported (only 1)");
        const dims_t wd = const_dims(const_in(1, "B"), "the weight B");
        if (wd.size() != 2) fail("the weight B has shape " + list_str(wd) + ", expected rank 2");
        const i64 K = tb ? wd[1] : wd[0], units = tb ? wd[0] : wd[1];
        if (K != out_of(x).back()) fail("the weight B has shape " + list_str(wd) + " for " + std::to_string(out_of(x).back()) + " input features");
        if (has_input(2)) const_in(2, "C");
        const int k = emit("Dense", {x.node}, {{"units", units}, {"use_bias", has_input(2)}});
        bare_dense_[static_cast<std::size_t>(k)] = !has_input(2);
        set_out(0, tval{k, x.perm});
    }

    void matmul_op() {
        const tval x0 = value_in(0);
        const dims_t wd = const_dims(const_in(1, "B"), "the weight B");
        if (wd.size() != 2) fail("the weight B has shape " + list_str(wd) + "; memo maps MatMul by a 2-D constant (a Dense)");
        const tval x = last_axis_last(input_name(0), x0, "MatMul");
        if (wd[0] != out_of(x).back()) fail("the weight B has shape " + list_str(wd) + " for " + std::to_string(out_of(x).back()) + " input features");
        tval y = x;
        y.node = emit("Dense", {x.node}, {{"units", wd[1]}, {"use_bias", false}});
        bare_dense_[static_cast<std::size_t>(y.node)] = true;
        set_out(0, y);
    }

    // Element-wise merges, bias adds and scalings.

    void elementwise_op(const std::string& op) {
        std::vector<int> values, consts;
        for (int k = 0; k < n_->input_size(); ++k) {
            if (!has_input(k)) continue;
            (is_const(k) ? consts : values).push_back(k);
        }
        if (values.empty()) fail("has no computed input");
        const tval first = vals_.at(input_name(values[0]));
        const dims_t d = onnx_dims(first);
        for (int k : consts) {
            if (op == "Max" || op == "Min" || op == "Mean") fail(input_label(k) + " is a constant; memo maps " + op + " only over computed tensors");
            if (op == "Div" && k == 0) fail("dividing a constant by a tensor is not supported");
            // Broadcasting a constant must not grow the tensor.
            const dims_t c = const_dims(consts_.at(input_name(k)), input_label(k).c_str());
            bool fits = c.size() <= d.size();
            for (std::size_t i = 0; fits && i < c.size(); ++i) {
                const i64 t = d[d.size() - c.size() + i];
                fits = c[i] == 1 || c[i] == t || (t == shape::unknown && c[i] == batch_hint_);
            }
            if (!fits) fail(input_label(k) + " has shape " + list_str(c) + ", which broadcasting to " + dims_str(d) + " would grow");
        }
        if (values.size() == 1) {
            // A bias add or a scaling by a constant changes values, never the architecture (memo
            // draws its own weights): the value passes through. A bias add right after a MatMul
            // is the Dense's bias.
            if ((op == "Add" || op == "Sum") && !consts.empty() && bare_dense_[static_cast<std::size_t>(first.node)] && uses_[input_name(values[0])] == 1 &&
                !first.merged()) {
                const dims_t c = const_dims(consts_.at(input_name(consts.at(0))), "the bias");
                const i64 units = out_of(first).back();
                if (!c.empty() && c.back() == units && std::all_of(c.begin(), c.end() - 1, [](i64 v) { return v == 1; })) {
                    m_.nodes[static_cast<std::size_t>(first.node)].set("use_bias", true);
                    bare_dense_[static_cast<std::size_t>(first.node)] = false;
                }
            }
            return set_out(0, first);
        }
        if (op == "Div") fail("dividing two computed tensors is not supported (memo has no such layer)");
        const std::string_view cls = op == "Add" || op == "Sum" ? "Add"
                                     : op == "Sub"              ? "Subtract"
                                     : op == "Mul"              ? "Multiply"
                                     : op == "Max"              ? "Maximum"
                                     : op == "Min"              ? "Minimum"
                                                                : "Average";
        if (values.size() > 8) fail("has " + std::to_string(values.size()) + " inputs; memo's merges take at most 8");
        std::vector<int> srcs;
        for (int k : values) {
            const tval v = vals_.at(input_name(k));
            if (first.merged() || v.merged()) {
                if (!(v.perm == first.perm && v.dirs_axis == first.dirs_axis)) as_layout(input_name(k), v, {}, op);
                srcs.push_back(v.node);
            } else {
                srcs.push_back(as_layout(input_name(k), v, first.perm, op).node);
            }
        }
        for (std::size_t j = 1; j < values.size(); ++j)
            if (onnx_dims(vals_.at(input_name(values[j]))) != d)
                fail("inputs have shapes " + dims_str(d) + " and " + dims_str(onnx_dims(vals_.at(input_name(values[j])))) +
                     " (broadcasting between computed tensors is not supported)");
        tval out = first;
        out.node = emit(cls, srcs, {});
        set_out(0, out);
    }

    void concat_op() {
        std::vector<int> ks;
        for (int k = 0; k < n_->input_size(); ++k)
            if (has_input(k)) ks.push_back(k);
        for (int k : ks)
            if (is_const(k)) fail(input_label(k) + " is a constant; memo concatenates only computed tensors");
        if (ks.empty()) fail("has no inputs");
        const tval first = value_in(ks[0]);
        const int r = first.onnx_rank();
        if (!attr("axis")) fail("has no attribute axis");
        const int a = normal_axis(attr_int("axis", 0), r, "attribute axis");
        if (ks.size() == 1) return set_out(0, first);
        if (ks.size() > 8) fail("has " + std::to_string(ks.size()) + " inputs; memo's Concatenate takes at most 8");
        const tval x = as_layout(input_name(ks[0]), first, first.perm, "Concat");
        const int m = memo_axis(x, a);
        if (m <= 0) fail("attribute axis=" + std::to_string(a) + " is the batch axis");
        std::vector<int> srcs{x.node};
        for (std::size_t j = 1; j < ks.size(); ++j) {
            const tval v = value_in(ks[j]);
            if (v.onnx_rank() != r) fail("inputs have different ranks");
            srcs.push_back(as_layout(input_name(ks[j]), v, x.perm, "Concat").node);
        }
        const int k = emit("Concatenate", srcs, {{"axis", i64{m - r}}});
        set_out(0, tval{k, x.perm});
    }

    // Activations.

    void activation_op(const std::string& op) {
        static const std::pair<std::string_view, std::string_view> plain[] = {
            {"Sigmoid", "sigmoid"}, {"Tanh", "tanh"}, {"Softplus", "softplus"}, {"Softsign", "softsign"}, {"Exp", "exponential"}};
        std::string_view cls;
        std::vector<kv> ps;
        for (const auto& [o, a] : plain)
            if (o == op) cls = "Activation", ps.push_back({"activation", std::string(a)});
        if (op == "Relu") {
            cls = "ReLU";
        } else if (op == "Elu") {
            cls = "ELU";
            ps.push_back({"alpha", attr_real("alpha", 1.0)});
        } else if (op == "LeakyRelu") {
            cls = "LeakyReLU";
            ps.push_back({"alpha", attr_real("alpha", 0.01)});
        } else if (op == "ThresholdedRelu") {
            cls = "ThresholdedReLU";
            ps.push_back({"theta", attr_real("alpha", 1.0)});
        } else if (op == "PRelu") {
            // Keras shares PReLU's slopes by shared_axes, ONNX by broadcasting the slope tensor;
            // only the slope values differ, and weights are not imported.
            cls = "PReLU";
            const_in(1, "slope");
        } else if (op == "Selu") {
            const double a = attr_real("alpha", 1.67326319217681884765625), g = attr_real("gamma", 1.05070102214813232421875);
            if (std::abs(a - 1.6732632) > 1e-5 || std::abs(g - 1.0507010) > 1e-5)
                fail("attributes alpha=" + real_str(a) + ", gamma=" + real_str(g) + " are not supported (only SELU's constants)");
            cls = "Activation", ps.push_back({"activation", std::string("selu")});
        } else if (op == "HardSigmoid") {
            const double a = attr_real("alpha", 0.2), b = attr_real("beta", 0.5);
            if (std::abs(a - 0.2) > 1e-6 || std::abs(b - 0.5) > 1e-6)
                fail("attributes alpha=" + real_str(a) + ", beta=" + real_str(b) + " are not supported (only Keras' hard_sigmoid: 0.2 and 0.5)");
            cls = "Activation", ps.push_back({"activation", std::string("hard_sigmoid")});
        }
        if (cls.empty()) fail("operator " + op + " is not supported");
        tval x = value_in(0);
        x.node = emit(cls, {x.node}, ps);
        set_out(0, x);
    }

    void clip_op() {
        double lo = -HUGE_VAL, hi = HUGE_VAL;
        bool has_lo = false, has_hi = false;
        if (opset_ < 11) {
            has_lo = attr("min") != nullptr, has_hi = attr("max") != nullptr;
            lo = attr_real("min", lo), hi = attr_real("max", hi);
        } else {
            if ((has_lo = has_input(1))) lo = scalar_real(1, "min");
            if ((has_hi = has_input(2))) hi = scalar_real(2, "max");
        }
        if (!has_lo || lo != 0.0) fail("min=" + real_str(lo) + " is not supported (only Clip(0, max), a ReLU)");
        std::vector<kv> ps;
        if (has_hi) {
            if (!(hi > 0 && hi <= 10)) fail("max=" + real_str(hi) + " is not supported (ReLU's max_value is 0 to 10)");
            ps.push_back({"max_value", hi});
        }
        tval x = value_in(0);
        x.node = emit("ReLU", {x.node}, ps);
        set_out(0, x);
    }

    void softmax_op() {
        const tval x = value_in(0);
        const int r = x.onnx_rank();
        if (x.merged()) as_layout(input_name(0), x, {}, "Softmax");
        const i64 raw = attr_int("axis", opset_ >= 13 ? -1 : 1);
        const int a = normal_axis(raw, r, "attribute axis");
        if (opset_ < 13 && a != r - 1)
            fail("attribute axis=" + std::to_string(raw) + " is not supported before opset 13 (Softmax then spans axes " + std::to_string(a) +
                 ".., only the last axis maps)");
        const int m = memo_axis(x, a);
        if (m <= 0) fail("attribute axis=" + std::to_string(raw) + " is the batch axis");
        const int k = emit("Softmax", {x.node}, {{"axis", i64{m - r}}});
        set_out(0, tval{k, x.perm});
    }

    void dropout_op() {
        double rate = 0.5;
        if (opset_ < 12) rate = attr_real("ratio", 0.5);
        else if (has_input(1)) rate = scalar_real(1, "ratio");
        if (opset_ >= 12 && has_input(2) && scalar_real(2, "training_mode") != 0) fail("training_mode is not supported");
        if (!(rate >= 0 && rate <= 0.99)) fail("ratio=" + real_str(rate) + " is not supported (Dropout's rate is 0 to 0.99)");
        tval x = value_in(0);
        x.node = emit("Dropout", {x.node}, {{"rate", rate}});
        set_out(0, x);
    }

    void cast_op() {
        const i64 to = attr_int("to", 0);
        const auto t = dtype_of(to);
        if (!t) fail("attribute to=" + type_str(static_cast<int>(std::clamp<i64>(to, INT_MIN, INT_MAX))) + " is not supported (only floating-point types)");
        tval x = value_in(0);
        if (m_[x.node].type != *t) x.node = emit("CustomCastLayer", {x.node}, {{"target_dtype", std::string(name_of(*t))}});
        set_out(0, x);
    }

    // Layout and shape.

    void transpose_op() {
        const tval x = value_in(0);
        const int r = x.onnx_rank();
        dims_t p = attr_ints("perm");
        if (!attr("perm"))
            for (int i = r - 1; i >= 0; --i) p.push_back(i);
        std::vector<int> inv(static_cast<std::size_t>(r), -1);
        bool ok = p.size() == static_cast<std::size_t>(r);
        for (std::size_t j = 0; ok && j < p.size(); ++j) {
            ok = p[j] >= 0 && p[j] < r && inv[static_cast<std::size_t>(p[j])] < 0;
            if (ok) inv[static_cast<std::size_t>(p[j])] = static_cast<int>(j);
        }
        if (!ok) fail("attribute perm=" + list_str(p) + " is not a permutation of " + std::to_string(r) + " axes");
        // memo's tensor stays as it is: only which ONNX axis each of its axes holds changes.
        tval y = x;
        for (auto& a : y.perm) a = inv[static_cast<std::size_t>(a)];
        if (y.merged()) y.dirs_axis = inv[static_cast<std::size_t>(y.dirs_axis)];
        set_out(0, y);
    }

    void flatten_op() {
        const tval x = value_in(0);
        const int r = x.onnx_rank();
        const i64 raw = attr_int("axis", 1);
        const i64 a = raw < 0 ? raw + r : raw;
        if (a != 1 || x.perm[0] != 0)
            fail("attribute axis=" + std::to_string(raw) + " is not supported (only 1, with the batch on axis 0: Keras' Flatten keeps the batch alone)");
        if (!x.merged() && r == 2) return set_out(0, x);
        // Keras' Flatten orders an NHWC tensor's features H, W, C where ONNX's orders C, H, W: the
        // shapes agree, and as weights are not imported the order of the features does not matter.
        const int k = emit("Flatten", {x.node}, {});
        set_out(0, tval{k, identity_perm(2)});
    }

    /// ONNX's output shape and batch axis of a Reshape of a tensor of shape `in` (batch on
    /// axis b) to `t`, whose entry tb (when >= 0) is the batch size.
    std::pair<dims_t, int> resolve_reshape(const dims_t& in, int b, const dims_t& t, int tb) const {
        if (t.empty() || t.size() > static_cast<std::size_t>(shape::max_rank)) fail("shape " + list_str(t) + " is not supported (rank 2 to 6)");
        i64 E = 1;
        for (std::size_t a = 0; a < in.size(); ++a)
            if (static_cast<int>(a) != b) E = mul_capped(E, in[a]);
        dims_t o(t.size(), 1);
        int batch = -1, minus = -1;
        i64 P = 1;
        for (std::size_t i = 0; i < t.size(); ++i) {
            i64 v = t[i];
            if (static_cast<int>(i) == tb || (v == 0 && static_cast<int>(i) == b)) {
                batch = static_cast<int>(i);
                o[i] = shape::unknown;
                continue;
            }
            if (v == 0) {
                if (i >= in.size()) fail("shape " + list_str(t) + " copies dimension " + std::to_string(i) + ", which the input lacks");
                v = in[i];
            }
            if (v == -1) {
                if (minus >= 0) fail("shape " + list_str(t) + " has more than one -1");
                minus = static_cast<int>(i);
                continue;
            }
            if (v < 1 || v > max_elements || __builtin_mul_overflow(P, v, &P) || P > max_elements * 1024) fail("shape " + list_str(t) + " is not supported");
            o[i] = v;
        }
        if (batch < 0 && minus >= 0 && P == E) {
            batch = minus, minus = -1;
            o[static_cast<std::size_t>(batch)] = shape::unknown;
        }
        if (batch < 0 && batch_hint_ > 0) {
            // Exported with a fixed batch: the entry equal to it (on the input's batch axis first).
            std::vector<int> order{b};
            for (int i = 0; i < static_cast<int>(t.size()); ++i) order.push_back(i);
            for (int i : order)
                if (i < static_cast<int>(t.size()) && i != minus && t[static_cast<std::size_t>(i)] == batch_hint_) {
                    batch = i;
                    P /= batch_hint_;
                    o[static_cast<std::size_t>(i)] = shape::unknown;
                    break;
                }
        }
        if (batch < 0) fail("shape " + list_str(t) + " does not keep the batch dimension");
        if (minus >= 0) {
            if (E % P != 0) fail("shape " + list_str(t) + " does not fit " + std::to_string(E) + " elements per sample");
            o[static_cast<std::size_t>(minus)] = E / P;
        } else if (P != E) {
            fail("shape " + list_str(t) + " does not fit " + std::to_string(E) + " elements per sample");
        }
        return {o, batch};
    }

    /// Output 0 as ONNX shape `o` (batch on axis ob) of x's elements: x itself where memo's
    /// tensor already has that shape, else a Reshape (or a Flatten).
    void reshape_to(const tval& x, const dims_t& o, int ob) {
        const dims_t in = onnx_dims(x);
        if (!x.merged() && o == in) return set_out(0, x);
        if (x.merged()) {
            // Squeezing a single direction axis, or joining it to the hidden axis after it, is
            // what memo's tensor already holds.
            const int h = x.perm.back();
            if (x.dirs == 1 || x.dirs_axis + 1 == h) {
                dims_t c;
                std::vector<int> to(in.size(), -1);
                for (int a = 0; a < static_cast<int>(in.size()); ++a) {
                    if (a == x.dirs_axis) continue;
                    to[static_cast<std::size_t>(a)] = static_cast<int>(c.size());
                    c.push_back(a == h ? in[static_cast<std::size_t>(a)] * x.dirs : in[static_cast<std::size_t>(a)]);
                }
                if (c == o) {
                    tval y{x.node, {}};
                    for (int a : x.perm) y.perm.push_back(to[static_cast<std::size_t>(a)]);
                    return set_out(0, y);
                }
            }
        }
        const int r = static_cast<int>(o.size());
        if (r < 2 || r > 6) fail("gives a tensor of rank " + std::to_string(r) + "; memo's tensors have rank 2 to 6");
        const auto perm = preferred_perm(n_->output_size() > 0 ? n_->output(0) : std::string(), r, ob);
        ints target;
        for (int i = 1; i < r; ++i) target.push(o[static_cast<std::size_t>(perm[static_cast<std::size_t>(i)])]);
        const shape& cur = out_of(x);
        if (cur.rank() == r && std::equal(target.begin(), target.end(), cur.sample().begin())) return set_out(0, tval{x.node, perm});
        const int k = r == 2 ? emit("Flatten", {x.node}, {}) : emit("Reshape", {x.node}, {{"target_shape", target}});
        set_out(0, tval{k, perm});
    }

    void reshape_op() {
        const tval x = value_in(0);
        dims_t t;
        int tb = -1;
        if (opset_ < 5) {
            if (!attr("shape")) fail("has no attribute shape");
            t = attr_ints("shape");
        } else {
            const cval& c = const_in(1, "shape");
            t = read_ints(c, input_label(1) + " (shape)");
            tb = c.batch;
        }
        if (attr_int("allowzero", 0) != 0 && std::find(t.begin(), t.end(), 0) != t.end()) fail("attribute allowzero=1 with a 0 in the shape is not supported");
        const auto [o, ob] = resolve_reshape(onnx_dims(x), x.perm[0], t, tb);
        reshape_to(x, o, ob);
    }

    dims_t axes_of(const char* what) const {
        if (opset_ < 13 || attr("axes")) return attr_ints("axes");
        if (has_input(1)) return read_ints(const_in(1, "axes"), input_label(1) + " (" + what + ")");
        return {};
    }

    void squeeze_op() {
        const tval x = value_in(0);
        const dims_t in = onnx_dims(x);
        const int r = static_cast<int>(in.size()), b = x.perm[0];
        const dims_t axes = axes_of("axes");
        std::vector<bool> drop(in.size(), false);
        if (axes.empty()) {
            for (int a = 0; a < r; ++a) drop[static_cast<std::size_t>(a)] = a != b && in[static_cast<std::size_t>(a)] == 1;
        }
        for (auto raw : axes) {
            const int a = normal_axis(raw, r, "axis");
            if (a == b) fail("squeezing the batch axis is not supported");
            if (in[static_cast<std::size_t>(a)] != 1)
                fail("axis " + std::to_string(a) + " has size " + std::to_string(in[static_cast<std::size_t>(a)]) + ", not 1");
            drop[static_cast<std::size_t>(a)] = true;
        }
        dims_t o;
        int ob = -1;
        for (int a = 0; a < r; ++a) {
            if (drop[static_cast<std::size_t>(a)]) continue;
            if (a == b) ob = static_cast<int>(o.size());
            o.push_back(in[static_cast<std::size_t>(a)]);
        }
        reshape_to(x, o, ob);
    }

    void unsqueeze_op() {
        const tval x = value_in(0);
        const dims_t in = onnx_dims(x);
        const dims_t axes = axes_of("axes");
        if (axes.empty()) fail("has no axes");
        const int R = static_cast<int>(in.size() + axes.size());
        if (R > shape::max_rank) fail("gives a tensor of rank " + std::to_string(R));
        std::vector<bool> added(static_cast<std::size_t>(R), false);
        for (auto raw : axes) {
            const int a = normal_axis(raw, R, "axis");
            if (added[static_cast<std::size_t>(a)]) fail("axis " + std::to_string(a) + " is given twice");
            added[static_cast<std::size_t>(a)] = true;
        }
        dims_t o;
        int ob = -1;
        std::size_t next = 0;
        for (int a = 0; a < R; ++a) {
            if (added[static_cast<std::size_t>(a)]) {
                o.push_back(1);
                continue;
            }
            if (static_cast<int>(next) == x.perm[0]) ob = a;
            o.push_back(in[next++]);
        }
        reshape_to(x, o, ob);
    }

    void pad_op() {
        const tval x = value_in(0);
        if (x.merged()) as_layout(input_name(0), x, {}, "Pad");
        const int r = x.onnx_rank();
        if (const std::string mode = attr_str("mode", "constant"); mode != "constant") fail("attribute mode='" + mode + "' is not supported (only 'constant')");
        dims_t pads;
        double c = 0;
        if (opset_ < 11) {
            const char* key = opset_ < 2 ? "paddings" : "pads";
            if (!attr(key)) fail(std::string("has no attribute ") + key);
            pads = attr_ints(key);
            c = attr_real("value", 0);
        } else {
            pads = read_ints(const_in(1, "pads"), input_label(1) + " (pads)");
            if (has_input(2)) c = scalar_real(2, "constant_value");
            if (has_input(3)) fail("input axes is not supported");
        }
        if (pads.size() != static_cast<std::size_t>(2 * r))
            fail("pads " + list_str(pads) + " has " + std::to_string(pads.size()) + " entries for rank " + std::to_string(r));
        for (auto p : pads)
            if (p < 0 || p > 4096) fail("pads " + list_str(pads) + " is not supported (each entry must be 0 to 4096; negative pads crop)");
        const auto at = [&](int memo, bool end) { return pads[static_cast<std::size_t>(x.perm[static_cast<std::size_t>(memo)] + (end ? r : 0))]; };
        if (at(0, false) || at(0, true)) fail("padding the batch axis is not supported");
        if (std::all_of(pads.begin(), pads.end(), [](i64 p) { return p == 0; })) return set_out(0, x);
        const int N = r - 2;
        int k;
        if (c == 0 && N >= 1 && N <= 3 && !at(r - 1, false) && !at(r - 1, true)) {
            ints amounts;
            for (int i = 1; i <= N; ++i) amounts.push(at(i, false)), amounts.push(at(i, true));
            k = emit(zero_padding_names[N], {x.node}, {{"padding", amounts}});
        } else {
            ints amounts;
            for (int i = 1; i < r; ++i) amounts.push(at(i, false)), amounts.push(at(i, true));
            k = emit("CustomPadLayer", {x.node}, {{"padding", amounts}, {"constant_values", c}});
        }
        set_out(0, tval{k, x.perm});
    }

    void resize_op(bool upsample) {
        const tval x = value_in(0);
        if (x.merged()) as_layout(input_name(0), x, {}, n_->op_type());
        const int r = x.onnx_rank(), N = r - 2;
        if (r < 3 || r > 5) fail(input_label(0) + " has rank " + std::to_string(r) + "; memo's UpSampling takes ranks 3 to 5");
        std::vector<double> scales;
        if (upsample && opset_ < 9) scales = attr_reals("scales");
        else if (upsample || opset_ < 11) scales = read_reals(const_in(1, "scales"), input_label(1) + " (scales)");
        else {
            if (has_input(2)) scales = read_reals(const_in(2, "scales"), input_label(2) + " (scales)");
            if (scales.empty() && has_input(3)) {
                const cval& c = const_in(3, "sizes");
                const dims_t sizes = read_ints(c, input_label(3) + " (sizes)"), in = onnx_dims(x);
                if (sizes.size() != in.size())
                    fail("sizes " + list_str(sizes) + " has " + std::to_string(sizes.size()) + " entries for rank " + std::to_string(r));
                for (std::size_t a = 0; a < in.size(); ++a) {
                    if (static_cast<int>(a) == x.perm[0] || static_cast<int>(a) == c.batch) {
                        scales.push_back(1);
                        continue;
                    }
                    if (sizes[a] < 1 || sizes[a] % in[a] != 0) fail("sizes " + list_str(sizes) + " are not whole multiples of the input's " + dims_str(in));
                    scales.push_back(static_cast<double>(sizes[a] / in[a]));
                }
            }
        }
        if (scales.size() != static_cast<std::size_t>(r)) fail("has " + std::to_string(scales.size()) + " scales for rank " + std::to_string(r));
        dims_t size;
        for (int i = 0; i < r; ++i) {
            const int a = x.perm[static_cast<std::size_t>(i)];
            const double s = scales[static_cast<std::size_t>(a)];
            if (!(s >= 1 && s <= 64 && s == std::floor(s)))
                fail("scale " + real_str(s) + " on axis " + std::to_string(a) + " is not supported (only whole numbers 1 to 64)");
            if ((i == 0 || i == r - 1) && s != 1) fail("scaling axis " + std::to_string(a) + " is not supported (only the spatial axes)");
            if (i >= 1 && i <= N) size.push_back(static_cast<i64>(s));
        }
        const std::string mode = attr_str("mode", "nearest");
        std::vector<kv> ps;
        if (N == 1) ps.push_back({"size", size[0]});
        else ps.push_back({"size", ints_of(size)});
        if (mode == "linear" || mode == "bilinear") {
            if (N != 2)
                fail("attribute mode='" + mode + "' is not supported in " + std::to_string(N) + "D (memo's UpSampling" + std::to_string(N) + "D only repeats)");
            ps.push_back({"interpolation", std::string("bilinear")});
        } else if (mode != "nearest") {
            fail("attribute mode='" + mode + "' is not supported (only 'nearest' and 'linear')");
        }
        const int k = emit(upsampling_names[N], {x.node}, ps);
        set_out(0, tval{k, x.perm});
    }

    // Recurrent layers.

    static std::string keras_activation(const std::string& onnx) {
        static const std::pair<std::string_view, std::string_view> names[] = {
            {"Sigmoid", "sigmoid"},   {"Tanh", "tanh"},         {"Relu", "relu"}, {"HardSigmoid", "hard_sigmoid"},
            {"Softsign", "softsign"}, {"Softplus", "softplus"}, {"Elu", "elu"}};
        for (const auto& [o, k] : names)
            if (o == onnx) return std::string(k);
        return {};
    }

    void recurrent_op(const std::string& op) {
        const bool lstm = op == "LSTM", gru = op == "GRU";
        const i64 gates = lstm ? 4 : gru ? 3 : 1;
        const i64 layout = attr_int("layout", 0);
        if (layout != 0 && layout != 1) fail("attribute layout=" + std::to_string(layout) + " is not supported");
        const std::string direction = attr_str("direction", "forward");
        if (direction != "forward" && !(lstm && direction == "bidirectional"))
            fail("attribute direction='" + direction + "' is not supported (only 'forward', and 'bidirectional' for LSTM)");
        const i64 dirs = direction == "bidirectional" ? 2 : 1;
        const tval x0 = value_in(0);
        if (x0.onnx_rank() != 3) fail(input_label(0) + " has rank " + std::to_string(x0.onnx_rank()) + ", expected 3");
        const tval x = as_layout(input_name(0), x0, layout == 0 ? std::vector<int>{1, 0, 2} : identity_perm(3), op);
        const dims_t wd = const_dims(const_in(1, "W"), "the weight W");
        const_in(2, "R");
        if (wd.size() != 3 || wd[0] != dirs || wd[1] % gates != 0 || wd[1] == 0)
            fail("the weight W has shape " + list_str(wd) + ", expected (" + std::to_string(dirs) + ", " + std::to_string(gates) +
                 " * hidden_size, input_size)");
        const i64 units = wd[1] / gates;
        if (wd[2] != out_of(x).back()) fail("the weight W has shape " + list_str(wd) + " for " + std::to_string(out_of(x).back()) + " input features");
        if (const i64 h = attr_int("hidden_size", units); h != units)
            fail("attribute hidden_size=" + std::to_string(h) + " disagrees with W's shape " + list_str(wd));
        if (has_input(3)) const_in(3, "B");
        if (has_input(4)) fail("input sequence_lens is not supported (memo's sequences all have the full length)");
        for (int k = 5; k < n_->input_size(); ++k)
            if (has_input(k)) {
                if (k == 7) fail("input P (peepholes) is not supported");
                const_in(k, k == 5 ? "initial_h" : "initial_c");  // initial states are weights: not imported
            }
        if (attr("clip")) fail("attribute clip is not supported");
        if (attr("activation_alpha") || attr("activation_beta")) fail("attributes activation_alpha and activation_beta are not supported");
        if (const i64 f = attr_int("input_forget", 0); f != 0) fail("attribute input_forget=" + std::to_string(f) + " is not supported");

        // ONNX names f, g (and h for LSTM) per direction: Keras' recurrent_activation and activation.
        const std::vector<std::string> defaults = lstm  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                                  : gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                        : std::vector<std::string>{"Tanh"};
        std::vector<std::string> acts = attr_strs("activations");
        if (acts.empty())
            for (int d = 0; d < dirs; ++d) acts.insert(acts.end(), defaults.begin(), defaults.end());
        if (acts.size() != defaults.size() * static_cast<std::size_t>(dirs))
            fail("attribute activations has " + std::to_string(acts.size()) + " entries, expected " +
                 std::to_string(defaults.size() * static_cast<std::size_t>(dirs)));
        if (lstm && acts[1] != acts[2]) fail("attribute activations is not supported (memo's LSTM takes one activation for g and h)");
        if (dirs == 2)
            for (std::size_t i = 0; i < acts.size(); ++i)
                if (acts[i] != defaults[i % defaults.size()]) fail("attribute activations is not supported (memo's Bidirectional takes the defaults only)");
        const std::string act = keras_activation(gates == 1 ? acts[0] : acts[1]), rec = gates == 1 ? std::string() : keras_activation(acts[0]);
        if (act.empty() || (gates > 1 && rec.empty()))
            fail("attribute activations is not supported (activation " + (act.empty() ? acts[gates == 1 ? 0 : 1] : acts[0]) + ")");

        // memo's recurrent layers give one output: the sequence Y or the last state Y_h.
        const bool y = uses(0) > 0, yh = uses(1) > 0;
        if (lstm && uses(2) > 0) fail("output Y_c is used; memo's LSTM gives only Y or Y_h");
        if (y && yh) fail("outputs Y and Y_h are both used; memo's recurrent layers give one of them");
        int k;
        if (dirs == 2) {
            k = emit("Bidirectional", {x.node}, {{"merge_mode", std::string("concat")}, {"units", units}, {"return_sequences", y}});
        } else {
            std::vector<kv> ps{{"units", units}, {"activation", act}, {"use_bias", has_input(3)}, {"return_sequences", y}};
            if (gates > 1) ps.push_back({"recurrent_activation", rec});
            if (gru) ps.push_back({"reset_after", attr_int("linear_before_reset", 0) != 0});
            k = emit(lstm ? "LSTM" : gru ? "GRU" : "SimpleRNN", {x.node}, ps);
        }
        // Y is [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]), Y_h
        // [dirs, batch, hidden] ([batch, dirs, hidden]); memo's are (batch, seq, dirs * hidden)
        // and (batch, dirs * hidden).
        if (layout == 0) {
            set_out(0, tval{k, {2, 0, 3}, 1, dirs});
            set_out(1, tval{k, {1, 2}, 0, dirs});
        } else {
            set_out(0, tval{k, {0, 1, 3}, 2, dirs});
            set_out(1, tval{k, {0, 2}, 1, dirs});
        }
        if (n_->output_size() > 0 && !y && !n_->output(0).empty()) vals_.erase(n_->output(0));
        if (n_->output_size() > 1 && !yh && !n_->output(1).empty()) vals_.erase(n_->output(1));
    }

    static ints ints_of(const dims_t& v) {
        ints r;
        for (auto x : v) r.push(x);
        return r;
    }
};

/// Rebuilds the model that memo's exporter stored in the metadata, after checking it agrees with
/// the graph's inputs and outputs.
inline model from_metadata(const ::onnx::ModelProto& mp, const std::string& text, const registry& reg, const std::string& src) {
    check_json_depth(text, src);
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        throw error(src + ": metadata memo.model is not JSON: " + e.what());
    }
    check_memo_json(j, src);
    model m;
    try {
        m = io::model_from_json(j, reg, src);
    } catch (const json::exception& e) {
        throw error(src + ": metadata memo.model: " + e.what());
    }
    std::unordered_set<std::string> inits;
    for (const auto& t : mp.graph().initializer()) inits.insert(t.name());
    std::size_t inputs = 0;
    for (const auto& vi : mp.graph().input()) inputs += !inits.count(vi.name());
    if (inputs != m.input_nodes().size())
        throw error(src + ": metadata memo.model has " + std::to_string(m.input_nodes().size()) + " inputs, the graph " + std::to_string(inputs));
    if (static_cast<std::size_t>(mp.graph().output_size()) != m.outputs.size())
        throw error(src + ": metadata memo.model has " + std::to_string(m.outputs.size()) + " outputs, the graph " + std::to_string(mp.graph().output_size()));
    return m;
}

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
