#pragma once
// ONNX import: Constant nodes, and the shape computations over constants exporters write for
// x.view(x.size(0), -1), which are folded.
#include "constants.hpp"

namespace memo::onnx::detail {

/// Constant nodes, Shape, and the operators over constants only that shape computations use, folded.
class fold_ops : public constant_ops {
public:
    using constant_ops::constant_ops;

protected:
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
        if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") return arithmetic_fold(op);
        if (op == "Expand") return expand_fold();
        if (op == "ConstantOfShape") return constant_of_shape_fold();
        if (op == "Slice") return slice_fold();
        fail("all inputs are constants, and memo folds no " + op +
             " (it folds Identity, Cast, Squeeze, Unsqueeze, Concat, Gather, Add, Sub, Mul, Div, Expand, ConstantOfShape, Slice)");
    }

    /// Integer arithmetic of shape computations (a channel count halved for a split, say), over
    /// scalars and 1-D constants, a scalar broadcast. A value that stands for the batch size is
    /// unknown here: arithmetic on it is refused.
    void arithmetic_fold(const std::string& op) {
        const cval &a = const_in(0, "A"), &b = const_in(1, "B");
        for (const cval* c : {&a, &b}) {
            const auto t = c->t->data_type();
            if (t != ::onnx::TensorProto::INT64 && t != ::onnx::TensorProto::INT32) fail("folds " + op + " only over integer constants, not " + type_str(t));
            if (const_dims(*c, "input").size() > 1) fail("folds " + op + " only over scalars and 1-D constants");
        }
        const dims_t x = read_ints(a, input_label(0)), y = read_ints(b, input_label(1));
        if (x.size() != y.size() && x.size() != 1 && y.size() != 1)
            fail("inputs of " + std::to_string(x.size()) + " and " + std::to_string(y.size()) + " values do not broadcast");
        if (a.batch >= 0 || b.batch >= 0) fail("folds no arithmetic on the batch size (it is not fixed)");
        dims_t out;
        for (std::size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
            const i64 p = x[x.size() == 1 ? 0 : i], q = y[y.size() == 1 ? 0 : i];
            i64 r = 0;
            if (op == "Div") {
                if (q == 0) fail("divides by zero");
                r = p / q;  // ONNX's integer Div truncates
            } else if ((op == "Add" && __builtin_add_overflow(p, q, &r)) || (op == "Sub" && __builtin_sub_overflow(p, q, &r)) ||
                       (op == "Mul" && __builtin_mul_overflow(p, q, &r))) {
                fail("overflows");
            }
            out.push_back(r);
        }
        const bool scalar = const_dims(a, "A").empty() && const_dims(b, "B").empty();
        set_const(0, int_const(out, scalar ? dims_t{} : dims_t{static_cast<i64>(out.size())}, scalar, -1));
    }

    /// Expand of a constant to a shape (numpy's broadcasting): how exporters write a recurrent
    /// layer's initial state (zeros of layers x batch x hidden). The batch entry becomes 1.
    void expand_fold() {
        const cval& c = const_in(0, "input");
        const cval& s = const_in(1, "shape");
        const dims_t have = const_dims(c, "input");
        dims_t want = read_ints(s, input_label(1));
        for (std::size_t i = 0; i < want.size(); ++i)
            if (static_cast<int>(i) == s.batch) want[i] = 1;
        // The output's dims: each axis the larger of the two, from the right; 1 broadcasts.
        const std::size_t r = std::max(have.size(), want.size());
        dims_t out(r, 1), in(r, 1);
        std::copy(have.begin(), have.end(), in.begin() + static_cast<std::ptrdiff_t>(r - have.size()));
        std::copy(want.begin(), want.end(), out.begin() + static_cast<std::ptrdiff_t>(r - want.size()));
        i64 count = 1;
        for (std::size_t i = 0; i < r; ++i) {
            if (in[i] != out[i] && in[i] != 1 && out[i] != 1) fail("input " + list_str(have) + " does not broadcast to " + list_str(want));
            out[i] = std::max(in[i], out[i]);
            if (out[i] < 1 || (count = mul_capped(count, out[i])) < 0 || count > (i64{1} << 20))
                fail("folds Expand only to shapes of at most 2^20 elements, not " + list_str(out));
        }
        const auto v = read_reals(c, input_label(0), static_cast<std::size_t>(count));
        ::onnx::TensorProto t;
        t.set_data_type(::onnx::TensorProto::FLOAT);
        for (auto d : out) t.add_dims(d);
        for (i64 i = 0; i < count; ++i) {
            // The input's element that output element i reads: its index on each axis, 0 where it broadcasts.
            i64 at = 0, rest = i, stride = 1;
            for (std::size_t k = r; k-- > 0;) {
                const i64 j = rest % out[k];
                rest /= out[k];
                if (in[k] != 1) at += j * stride;
                stride *= in[k];
            }
            t.add_float_data(static_cast<float>(v.at(static_cast<std::size_t>(at))));
        }
        set_const(0, cval{own(std::move(t)), -1});
    }

    /// ConstantOfShape: one value (attribute value, else float 0) in every element, how exporters
    /// write a recurrent layer's zero initial states (torch.zeros(layers, batch, hidden)). The
    /// batch entry becomes 1, as in expand_fold.
    void constant_of_shape_fold() {
        const cval& s = const_in(0, "input");
        dims_t want = read_ints(s, input_label(0));
        i64 count = 1;
        for (std::size_t i = 0; i < want.size(); ++i) {
            if (static_cast<int>(i) == s.batch) want[i] = 1;
            if (want[i] < 0 || (count = mul_capped(count, want[i])) < 0 || count > (i64{1} << 20))
                fail("folds ConstantOfShape only to shapes of at most 2^20 elements, not " + list_str(want));
        }
        ::onnx::TensorProto t;
        t.set_data_type(::onnx::TensorProto::FLOAT);
        double value = 0;
        for (const auto& a : n_->attribute())
            if (a.name() == "value") {
                expect_type(a, ::onnx::AttributeProto::TENSOR, a.has_t());
                const auto v = read_reals(cval{&a.t(), -1}, "attribute value");
                if (v.size() != 1) fail("attribute value has " + std::to_string(v.size()) + " elements, not 1");
                value = v[0];
                t.set_data_type(a.t().data_type());
            }
        const bool integer = t.data_type() == ::onnx::TensorProto::INT64 || t.data_type() == ::onnx::TensorProto::INT32;
        if (!integer && t.data_type() != ::onnx::TensorProto::FLOAT) t.set_data_type(::onnx::TensorProto::FLOAT);
        if (integer) t.set_data_type(::onnx::TensorProto::INT64);
        for (auto d : want) t.add_dims(d);
        for (i64 i = 0; i < count; ++i) {
            if (integer) t.add_int64_data(static_cast<i64>(value));
            else t.add_float_data(static_cast<float>(value));
        }
        set_const(0, cval{own(std::move(t)), -1});
    }

    /// Slice of a constant (opset 10 on: starts, ends, axes and steps as inputs): a stacked
    /// recurrent layer's initial state taken layer by layer, a shape's entries.
    void slice_fold() {
        const cval& c = const_in(0, "data");
        const dims_t d = const_dims(c, "data");
        if (opset_ < 10) fail("folds Slice from opset 10 on");
        const dims_t starts = read_ints(const_in(1, "starts"), input_label(1)), ends = read_ints(const_in(2, "ends"), input_label(2));
        dims_t axes, steps;
        if (has_input(3)) axes = read_ints(const_in(3, "axes"), input_label(3));
        else
            for (std::size_t a = 0; a < starts.size(); ++a) axes.push_back(static_cast<i64>(a));
        if (has_input(4)) steps = read_ints(const_in(4, "steps"), input_label(4));
        if (starts.size() != axes.size() || ends.size() != axes.size() || (!steps.empty() && steps.size() != axes.size()))
            fail("starts, ends, axes and steps differ in length");
        const int r = static_cast<int>(d.size());
        dims_t lo(d.size(), 0), step(d.size(), 1), out = d;
        for (std::size_t j = 0; j < axes.size(); ++j) {
            const auto a = static_cast<std::size_t>(normal_axis(axes[j], r, "axis"));
            const i64 n = d[a], st = steps.empty() ? 1 : steps[j];
            if (st < 1) fail("folds Slice only with positive steps");
            const auto clamp = [n](i64 v) { return std::clamp<i64>(v < 0 ? v + n : v, 0, n); };
            const i64 b = clamp(starts[j]), e = clamp(ends[j]);
            lo[a] = b, step[a] = st, out[a] = e > b ? (e - b + st - 1) / st : 0;
        }
        i64 count = 1;
        for (auto x : out) count *= x;
        const auto v = read_reals(c, input_label(0), std::size_t{1} << 20);
        const bool integer = c.t->data_type() == ::onnx::TensorProto::INT64 || c.t->data_type() == ::onnx::TensorProto::INT32;
        ::onnx::TensorProto t;
        t.set_data_type(integer ? ::onnx::TensorProto::INT64 : ::onnx::TensorProto::FLOAT);
        for (auto x : out) t.add_dims(x);
        int batch = -1;
        for (i64 i = 0; i < count; ++i) {
            i64 at = 0, rest = i, stride = 1;  // the data's element that output element i takes
            for (std::size_t k = d.size(); k-- > 0;) {
                const i64 j = rest % out[k];
                rest /= out[k];
                at += (lo[k] + j * step[k]) * stride;
                stride *= d[k];
            }
            if (at == c.batch) batch = static_cast<int>(i);
            if (integer) t.add_int64_data(static_cast<i64>(v.at(static_cast<std::size_t>(at))));
            else t.add_float_data(static_cast<float>(v.at(static_cast<std::size_t>(at))));
        }
        set_const(0, cval{own(std::move(t)), batch});
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
};

}  // namespace memo::onnx::detail
