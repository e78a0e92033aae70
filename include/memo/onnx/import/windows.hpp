#pragma once
// ONNX import: Conv, ConvTranspose, pooling and spatial reductions as Keras windows.
#include "folds.hpp"

namespace memo::onnx::detail {

/// Windowed operators, with ONNX's pads mapped onto Keras' 'valid' and 'same' (or a ZeroPadding in front).
class window_ops : public fold_ops {
public:
    using fold_ops::fold_ops;

protected:
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
    /// A kernel `w` of dims `d` (two axes, then the spatial ones: ONNX's order) in Keras' layout:
    /// the spatial axes first, then axis a, then axis b.
    static given_weights::one spatial_first(const std::vector<double>& w, const dims_t& d, int a, int b) {
        std::vector<int> order;
        for (int s = 2; s < static_cast<int>(d.size()); ++s) order.push_back(s);
        order.push_back(a), order.push_back(b);
        dims_t kd;
        for (int x : order) kd.push_back(d[static_cast<std::size_t>(x)]);
        return {kd, reorder(w, d, order)};
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
        const dims_t ks = window(wd, N), strides = attr_list("strides", N, 1, 1, 512), dil = attr_list("dilations", N, 1, 1, 512);
        dims_t k_eff(ks.size());
        for (std::size_t i = 0; i < ks.size(); ++i) k_eff[i] = (ks[i] - 1) * dil[i] + 1;
        const dims_t sizes = spatial_sizes(in), pads = explicit_pads(sizes, k_eff, strides);
        const dims_t want = window_out(sizes, pads, k_eff, strides);
        const conv_kind c = conv_class(attr_int("group", 1), in.back(), wd, N);
        std::vector<kv> ps{c.channels};
        std::string padding;
        const int src = pad_for(x, pads, sizes, k_eff, strides, padding, true);
        ps.push_back({"kernel_size", ints_of(ks)});
        ps.push_back({"strides", ints_of(strides)});
        ps.push_back({"dilation_rate", ints_of(dil)});
        ps.push_back({"padding", padding});
        ps.push_back({"use_bias", has_input(2)});
        const int k = emit_conv(c, src, ps, wd, in.back(), N);
        expect_spatial(k, want);
        set_out(0, tval{k, x.perm});
    }

    /// What a Conv of `group` groups over cin input channels, of weight shape wd, becomes: its
    /// Keras class, the parameter that gives its output channels, and how many of it (a grouped
    /// convolution that is not depthwise: one per group).
    struct conv_kind {
        std::string cls;
        kv channels;
        i64 groups = 1;
    };
    conv_kind conv_class(i64 group, i64 cin, const dims_t& wd, int N) const {
        const i64 M = wd[0];
        if (group == 1) {
            if (wd[1] != cin) fail("the weight W has shape " + list_str(wd) + " for " + std::to_string(cin) + " input channels");
            return {std::string(conv_names[N]), {"filters", M}, 1};
        }
        if (group == cin && N <= 2 && wd[1] == 1 && M % cin == 0) return {std::string(depthwise_names[N]), {"depth_multiplier", M / cin}, 1};
        if (group > 1 && cin % group == 0 && M % group == 0 && wd[1] == cin / group) return {std::string(conv_names[N]), {"filters", M / group}, group};
        fail("attribute group=" + std::to_string(group) + " does not fit the weight W " + list_str(wd) + " for " + std::to_string(cin) +
             " input channels (each group takes input channels / group, and W's output channels must divide among the groups)");
    }

    /// The layers of a Conv on node src, given the file's weights: one (plain or depthwise), or
    /// one per group; the node that holds its output.
    int emit_conv(const conv_kind& c, int src, const std::vector<kv>& ps, const dims_t& wd, i64 cin, int N) {
        const i64 M = wd[0];
        // The file's weights in Keras' layouts: W (M, C / group, k...) becomes (k..., C / group, M);
        // a depthwise W (C * dm, 1, k...) is (C, dm, k...) in memory and becomes (k..., C, dm).
        const std::vector<double> W = weight_in(1, "W");
        const std::vector<double> B = has_input(2) ? weight_in(2, "B") : std::vector<double>{};
        auto conv_weights = [&](std::size_t from, std::size_t to, i64 outs) {
            dims_t d{outs, wd[1]};
            d.insert(d.end(), wd.begin() + 2, wd.end());
            std::vector<given_weights::one> ws{spatial_first(std::vector<double>(W.begin() + static_cast<std::ptrdiff_t>(from * W.size() / wd[0]),
                                                                                 W.begin() + static_cast<std::ptrdiff_t>(to * W.size() / wd[0])),
                                                             d, 1, 0)};
            if (!B.empty())
                ws.push_back({{outs}, std::vector<double>(B.begin() + static_cast<std::ptrdiff_t>(from), B.begin() + static_cast<std::ptrdiff_t>(to))});
            return ws;
        };
        if (c.groups == 1 && c.cls.starts_with("Depthwise")) {
            const i64 dm = M / cin;
            dims_t d{cin, dm};
            d.insert(d.end(), wd.begin() + 2, wd.end());
            std::vector<given_weights::one> ws{spatial_first(W, d, 0, 1)};
            if (!B.empty()) ws.push_back({{M}, B});
            const int k = emit(c.cls, {src}, ps);
            give(k, std::move(ws));
            return k;
        }
        if (c.groups == 1) {
            const int k = emit(c.cls, {src}, ps);
            give(k, conv_weights(0, static_cast<std::size_t>(M), M));
            return k;
        }
        // Exactly what a grouped convolution is: each group's channels (a CustomCropLayer of the
        // channel axis) convolved on their own, the results concatenated in group order.
        const i64 per = cin / c.groups, outs = M / c.groups;
        std::vector<int> parts;
        for (i64 g = 0; g < c.groups; ++g) {
            ints crop;
            for (int i = 0; i < N; ++i) crop.push(0), crop.push(0);
            crop.push(g * per), crop.push(cin - (g + 1) * per);
            const std::string tag = "_group" + std::to_string(g);
            parts.push_back(emit(c.cls, {emit("CustomCropLayer", {src}, {{"cropping", crop}}, tag + "_in")}, ps, tag));
            give(parts.back(), conv_weights(static_cast<std::size_t>(g * outs), static_cast<std::size_t>((g + 1) * outs), outs));
        }
        return concatenate(parts, -1);
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
            // W (C, M, k...) becomes Keras' (k..., M, C): the same sums, no flip.
            std::vector<given_weights::one> ws{spatial_first(weight_in(1, "W"), wd, 1, 0)};
            if (has_input(2)) ws.push_back(vector_in(2, "B"));
            give(k, std::move(ws));
            if (std::any_of(pads.begin(), pads.end(), [](i64 p) { return p != 0; }) || std::string(padding) != "valid")
                inexact("pads=" + list_str(pads) + " crop the output where Keras' '" + padding +
                        "' may crop elsewhere: the sizes agree, the alignment is not checked");
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
        const dims_t sizes = spatial_sizes(out_of(x));
        dims_t pads = explicit_pads(sizes, ks, strides);
        if (attr_int("ceil_mode", 0) != 0) {
            // ceil_mode rounds the output size up: a last window that starts in the input (or the
            // padding before it) and passes its end counts. Keras rounds down, so the end is
            // padded for it, which gives the same sizes (exactly 'same' where those are its pads).
            for (int i = 0; i < N; ++i) {
                const std::size_t a = static_cast<std::size_t>(i), b = static_cast<std::size_t>(N + i);
                const i64 padded = sizes[a] + pads[a] + pads[b];
                if (padded < ks[a]) continue;  // window_out names it
                i64 out = (padded - ks[a] + strides[a] - 1) / strides[a] + 1;
                if ((out - 1) * strides[a] >= sizes[a] + pads[a]) --out;
                pads[b] += std::max<i64>(0, (out - 1) * strides[a] + ks[a] - padded);
            }
        }
        const dims_t want = window_out(sizes, pads, ks, strides);
        std::string padding;
        int src;
        if (max) {
            // Zeros pad where ONNX's max ignores the border: the same shapes, and the same values
            // after a ReLU, the common case.
            src = pad_for(x, pads, sizes, ks, strides, padding, true);
            const auto& from = m_[x.node];
            const bool non_negative = from.layer->name == "ReLU" || (from.layer->name == "Activation" && as_str(from.param("activation")) == "relu");
            if (src != x.node && !non_negative) inexact("pads with zeros where ONNX's max ignores the border: the same only for non-negative inputs");
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
};

}  // namespace memo::onnx::detail
