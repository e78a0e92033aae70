#pragma once
// ONNX import: Transpose, Flatten, Reshape, Squeeze, Unsqueeze.
#include "layers.hpp"

namespace memo::onnx::detail {

/// Layout and shape operators, mapped onto memo's axes (a Transpose costs nothing: it changes which ONNX axis each memo axis holds).
class reshape_ops : public layer_ops {
public:
    using layer_ops::layer_ops;

protected:
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
        // shapes agree, and the value remembers the order for the Dense that reads it.
        const int k = emit("Flatten", {x.node}, {});
        tval y{k, identity_perm(2)};
        if (x.merged()) inexact("flattens a recurrent layer's output with its direction axis: its features' order is not followed");
        else if (out_of(y).elements() > max_ordered) inexact("flattens more than " + std::to_string(max_ordered) + " features: their order is not followed");
        else y.features = flat_order(x);
        set_out(0, y);
    }

    /// For each element of one sample of memo's tensor x (row-major over memo's axes), its index
    /// in ONNX's (row-major over ONNX's axes, the batch axis left out); empty when they agree.
    /// The most elements per sample whose order reshapes and flattens follow (the orders are
    /// tables of that size, and a hostile file must not make them huge).
    static constexpr i64 max_ordered = i64{1} << 22;
    std::vector<i64> flat_order(const tval& x) const { return flat_order(onnx_dims(x), x.perm); }
    static std::vector<i64> flat_order(const dims_t& od, const std::vector<int>& perm) {
        const std::size_t r = perm.size();
        dims_t ostride(od.size(), 0), idx(r, 0), md(r, 1);
        i64 st = 1;
        for (std::size_t a = od.size(); a-- > 0;)
            if (static_cast<int>(a) != perm[0]) ostride[a] = st, st *= od[a];
        for (std::size_t i = 1; i < r; ++i) md[i] = od[static_cast<std::size_t>(perm[i])];
        std::vector<i64> order(static_cast<std::size_t>(st));
        bool same = true;
        for (i64 f = 0; f < st; ++f) {
            i64 at = 0;
            for (std::size_t i = 1; i < r; ++i) at += idx[i] * ostride[static_cast<std::size_t>(perm[i])];
            order[static_cast<std::size_t>(f)] = at;
            same = same && at == f;
            for (std::size_t i = r; i-- > 1;) {
                if (++idx[i] < md[i]) break;
                idx[i] = 0;
            }
        }
        if (same) order.clear();
        return order;
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
        // memo's Reshape keeps the order of memo's elements, ONNX's that of ONNX's: the layout
        // consumers prefer where the two orders agree, else one where they do (a split or merge
        // of axes memo holds side by side), else a permutation of the last axis after it.
        auto perm = preferred_perm(n_->output_size() > 0 ? n_->output(0) : std::string(), r, ob);
        const bool ordered = !x.merged() && out_of(x).elements() <= max_ordered;
        const auto from = ordered ? flat_order(x) : std::vector<i64>{};
        if (ordered && flat_order(o, perm) != from)
            if (auto p = grouped_perm(in, x.perm, o, ob); !p.empty() && flat_order(o, p) == from) perm = std::move(p);
        ints target;
        for (int i = 1; i < r; ++i) target.push(o[static_cast<std::size_t>(perm[static_cast<std::size_t>(i)])]);
        const shape& cur = out_of(x);
        int k = x.node;
        if (!(cur.rank() == r && std::equal(target.begin(), target.end(), cur.sample().begin())))
            k = r == 2 ? emit("Flatten", {x.node}, {}) : emit("Reshape", {x.node}, {{"target_shape", target}});
        if (x.merged()) inexact("reshapes a recurrent layer's output with its direction axis: the order of its elements is not checked");
        else if (!ordered) inexact("reshapes more than " + std::to_string(max_ordered) + " elements per sample: their order is not checked");
        else if (const auto to = flat_order(o, perm); to != from) k = reorder_last_axis(k, from, to, o, perm);
        set_out(0, tval{k, perm});
    }

    /// A layout for ONNX shape `o` (batch on ob) in which memo's Reshape of x (ONNX shape `in`,
    /// layout `perm`) keeps ONNX's order: where the reshape only splits or merges groups of
    /// ONNX axes that memo holds side by side in ONNX's order. Empty when there is none.
    static std::vector<int> grouped_perm(const dims_t& in, const std::vector<int>& perm, const dims_t& o, int ob) {
        if (perm[0] != 0 || ob != 0) return {};
        // Groups of ONNX axes with equal products: in[a0..a1) becomes o[b0..b1).
        std::vector<std::pair<std::vector<int>, std::vector<int>>> groups;
        std::size_t a = 1, b = 1;
        while (a < in.size() || b < o.size()) {
            std::vector<int> ga, gb;
            i64 pa = 1, pb = 1;
            do {
                if (pa <= pb && a < in.size()) ga.push_back(static_cast<int>(a)), pa *= in[a++];
                else if (b < o.size()) gb.push_back(static_cast<int>(b)), pb *= o[b++];
                else return {};
            } while (pa != pb || ga.empty() || gb.empty());
            groups.emplace_back(std::move(ga), std::move(gb));
        }
        std::vector<int> out{0};
        for (std::size_t i = 1; i < perm.size();) {
            const auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& gr) { return gr.first.front() == perm[i]; });
            if (g == groups.end()) return {};
            for (int ax : g->first)
                if (i >= perm.size() || perm[i++] != ax) return {};
            out.insert(out.end(), g->second.begin(), g->second.end());
        }
        return out;
    }

    /// Node k (memo's elements in the order `from` gives ONNX's) with its elements put in the order
    /// `to` gives, where that moves elements only within the last axis, alike at every position:
    /// a Dense with a permutation matrix (exact for finite values: one product by 1, the rest 0).
    int reorder_last_axis(int k, const std::vector<i64>& from, const std::vector<i64>& to, const dims_t& o, const std::vector<int>& perm) {
        const i64 L = o[static_cast<std::size_t>(perm.back())];
        if (L > 4096) {  // the permutation matrix would be too large
            inexact("memo's Reshape orders the elements otherwise than ONNX's, and a last axis of " + std::to_string(L) + " is too long to put back");
            return k;
        }
        const auto n = static_cast<i64>(std::max(from.size(), to.size()));
        std::vector<i64> where(static_cast<std::size_t>(n));  // memo's index of ONNX's element e, before
        for (i64 f = 0; f < n; ++f) where[static_cast<std::size_t>(from.empty() ? f : from[static_cast<std::size_t>(f)])] = f;
        std::vector<i64> src(static_cast<std::size_t>(L), -1);
        for (i64 f = 0; f < n; ++f) {
            const i64 s = where[static_cast<std::size_t>(to.empty() ? f : to[static_cast<std::size_t>(f)])];
            if (s / L != f / L || (src[static_cast<std::size_t>(f % L)] >= 0 && src[static_cast<std::size_t>(f % L)] != s % L)) {
                inexact("memo's Reshape orders the elements otherwise than ONNX's, and no layer of memo's puts them back");
                return k;
            }
            src[static_cast<std::size_t>(f % L)] = s % L;
        }
        std::vector<double> P(static_cast<std::size_t>(L * L), 0.0);  // kernel (in, out)
        for (i64 c = 0; c < L; ++c) P[static_cast<std::size_t>(src[static_cast<std::size_t>(c)] * L + c)] = 1.0;
        const int d = emit("Dense", {k}, {{"units", L}, {"use_bias", false}}, "_order");
        give(d, {{{L, L}, std::move(P)}});
        return d;
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
};

}  // namespace memo::onnx::detail
