#pragma once
// ONNX import: Gather, Slice, Pad, Resize.
#include "reshapes.hpp"

namespace memo::onnx::detail {

/// Operators that take, pad or repeat positions along axes: as Keras' croppings, paddings and
/// upsamplings.
class select_ops : public reshape_ops {
public:
    using reshape_ops::reshape_ops;

protected:
    /// Gather of one index along an axis of a computed tensor (y[:, -1]: a sequence's last step):
    /// a Cropping that keeps that one position, then, for a scalar index, a reshape that drops
    /// the axis.
    void gather_op() {
        tval x = value_in(0);
        const cval& idx = const_in(1, "indices");
        const bool scalar = const_dims(idx, "indices").empty();
        const dims_t v = read_ints(idx, input_label(1));
        if (v.size() != 1 || const_dims(idx, "indices").size() > 1) fail("gathers only one index (a scalar, or a 1-D constant of one value)");
        const dims_t in = onnx_dims(x);
        const int r = static_cast<int>(in.size());
        const int a = normal_axis(attr_int("axis", 0), r, "attribute axis");
        if (a == x.perm[0]) fail("gathering on the batch axis is not supported");
        const i64 n = in[static_cast<std::size_t>(a)];
        i64 i = v[0];
        if (i < -n || i >= n) fail("index " + std::to_string(i) + " is out of range for an axis of size " + std::to_string(n));
        if (i < 0) i += n;
        const int m = x.merged() ? -1 : memo_axis(x, a), N = x.rank() - 2;
        if (m < 1 || m > N || N < 1 || N > 3)
            fail("gathers only along an axis memo can crop: one between the batch and the last axis of a tensor of rank 3 to 5, as memo holds it");
        ints crop;
        for (int s = 1; s <= N; ++s) crop.push(s == m ? i : 0), crop.push(s == m ? n - 1 - i : 0);
        if (n > 1) x.node = emit(cropping_names[static_cast<std::size_t>(N)], {x.node}, {{"cropping", crop}}, "_crop");
        if (!scalar) return set_out(0, x);
        dims_t o;
        int ob = -1;
        for (int k = 0; k < r; ++k) {
            if (k == a) continue;
            if (k == x.perm[0]) ob = static_cast<int>(o.size());
            o.push_back(in[static_cast<std::size_t>(k)]);
        }
        reshape_to(x, o, ob);
    }

    /// A Slice with steps of 1 of a computed tensor, along axes other than the batch: a
    /// CustomCropLayer, which crops any axis (ShuffleNet's channel split).
    void slice_op() {
        const tval x = as_layout(input_name(0), value_in(0), value_in(0).perm, "Slice");
        const dims_t in = onnx_dims(x);
        const int r = static_cast<int>(in.size());
        dims_t starts, ends, axes, steps;
        if (opset_ < 10) {
            if (!attr("starts") || !attr("ends")) fail("has no attributes starts and ends");
            starts = attr_ints("starts"), ends = attr_ints("ends");
            if (attr("axes")) axes = attr_ints("axes");
        } else {
            starts = read_ints(const_in(1, "starts"), input_label(1) + " (starts)");
            ends = read_ints(const_in(2, "ends"), input_label(2) + " (ends)");
            if (has_input(3)) axes = read_ints(const_in(3, "axes"), input_label(3) + " (axes)");
            if (has_input(4)) steps = read_ints(const_in(4, "steps"), input_label(4) + " (steps)");
        }
        if (axes.empty())
            for (std::size_t a = 0; a < starts.size(); ++a) axes.push_back(static_cast<i64>(a));
        if (starts.size() != axes.size() || ends.size() != axes.size())
            fail("starts " + list_str(starts) + ", ends " + list_str(ends) + " and axes " + list_str(axes) + " differ in length");
        for (auto st : steps)
            if (st != 1) fail("steps " + list_str(steps) + " is not supported (only 1)");
        dims_t lo(in.size(), 0), hi = in;
        for (std::size_t j = 0; j < axes.size(); ++j) {
            const int a = normal_axis(axes[j], r, "axis");
            const auto ua = static_cast<std::size_t>(a);
            if (a == x.perm[0]) {  // the batch, whose size is not fixed: only all of it
                if (starts[j] != 0 || ends[j] < (i64{1} << 31)) fail("slicing the batch axis is not supported");
                continue;
            }
            const i64 n = in[ua];
            const auto clamp = [n](i64 v) { return std::clamp<i64>(v < 0 ? v + n : v, 0, n); };
            lo[ua] = clamp(starts[j]), hi[ua] = clamp(ends[j]);
            if (hi[ua] <= lo[ua]) fail("takes nothing of axis " + std::to_string(a) + " (size " + std::to_string(n) + ")");
        }
        if (lo == dims_t(in.size(), 0) && hi == in) return set_out(0, x);
        ints crop;
        for (int k = 1; k < x.rank(); ++k) {
            const auto a = static_cast<std::size_t>(x.perm[static_cast<std::size_t>(k)]);
            crop.push(lo[a]), crop.push(in[a] - hi[a]);
        }
        set_out(0, tval{emit("CustomCropLayer", {x.node}, {{"cropping", crop}}), x.perm});
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
};

}  // namespace memo::onnx::detail
