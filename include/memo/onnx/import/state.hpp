#pragma once
// ONNX import's state and the helpers every operator group uses.
#ifndef ONNX_NAMESPACE
#error "memo/onnx/import needs -DONNX_NAMESPACE=onnx -DONNX_ML=1 (ONNX's CMake targets set them)"
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

#include "common.hpp"

namespace memo::onnx::detail {

/// The state of one import: the graph read, the memo model being built, what each ONNX value
/// maps to, and the current node (its attributes, inputs and outputs); how memo nodes are
/// emitted, and the layouts fresh tensors take. Each operator group derives from it in turn
/// (constants.hpp, windows.hpp, layers.hpp, reshapes.hpp, recurrent.hpp); the importer
/// (onnx/import.hpp) is the last and dispatches each node to its group.
class import_state {
public:
    import_state(const ::onnx::ModelProto& mp, const registry& reg, const std::string& src) : mp_(mp), g_(mp.graph()), reg_(reg), src_(src) {}

protected:
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
    std::vector<std::string> inexact_;  // where the model computes otherwise than the file, and why

    /// Notes that the current node's memo model computes otherwise than the file (import goes on).
    void inexact(const std::string& why) { inexact_.push_back(where_ + ": " + why); }

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

    static std::string type_str(int t) {
        return ::onnx::TensorProto::DataType_IsValid(t) ? ::onnx::TensorProto::DataType_Name(static_cast<::onnx::TensorProto::DataType>(t)) : std::to_string(t);
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
    /// Concatenate of `srcs` along memo's `axis`. Keras' Concatenate takes at most 8 inputs (a
    /// DenseNet block concatenates dozens): more are concatenated in steps, each step's result the
    /// first input of the next, which is exact.
    int concatenate(const std::vector<int>& srcs, i64 axis, const std::string& suffix = "") {
        const std::vector<kv> ps{{"axis", axis}};
        std::vector<int> step{srcs[0]};
        for (std::size_t j = 1; j < srcs.size(); ++j) {
            if (step.size() == 8) step = {emit("Concatenate", step, ps, suffix + "_part" + std::to_string(j))};
            step.push_back(srcs[j]);
        }
        return step.size() == 1 ? step[0] : emit("Concatenate", step, ps, suffix);
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

    static ints ints_of(const dims_t& v) {
        ints r;
        for (auto x : v) r.push(x);
        return r;
    }
};

}  // namespace memo::onnx::detail
