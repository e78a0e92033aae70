#pragma once
// ONNX import: normalizations, Gemm and MatMul, element-wise and merging operators, activations, Dropout, Cast.
#include "windows.hpp"

namespace memo::onnx::detail {

/// Operators that map onto one Keras layer each (or a few).
class layer_ops : public window_ops {
public:
    using window_ops::window_ops;

protected:
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
        // scale, B, mean, var: Keras' gamma, beta, moving_mean, moving_variance.
        give(k, {vector_in(1, "scale"), vector_in(2, "B"), vector_in(3, "mean"), vector_in(4, "var")});
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
        std::vector<given_weights::one> ws{vector_in(1, "Scale")};
        if (has_input(2)) ws.push_back(vector_in(2, "B"));
        give(y.node, std::move(ws));
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
        std::vector<double> kernel = weight_in(1, "B");
        if (tb) kernel = reorder(kernel, wd, {1, 0});
        std::vector<given_weights::one> ws{{{K, units}, in_feature_order(x, std::move(kernel), units)}};
        if (has_input(2)) {
            auto c = weight_in(2, "C");
            if (c.size() == 1) c.assign(static_cast<std::size_t>(units), c[0]);  // a scalar C broadcasts
            ws.push_back({{static_cast<i64>(c.size())}, std::move(c)});
        }
        give(k, std::move(ws));
        set_out(0, tval{k, x.perm});
    }

    /// A Dense kernel (features x units) with its rows in the order memo's input holds its
    /// features (a Flatten of NHWC orders them otherwise than ONNX's of NCHW).
    static std::vector<double> in_feature_order(const tval& x, std::vector<double> kernel, i64 units) {
        if (x.features.empty()) return kernel;
        std::vector<double> out(kernel.size());
        for (std::size_t i = 0; i < x.features.size(); ++i)
            std::copy_n(kernel.begin() + static_cast<std::ptrdiff_t>(x.features[i] * units), units,
                        out.begin() + static_cast<std::ptrdiff_t>(i * static_cast<std::size_t>(units)));
        return out;
    }

    void matmul_op() {
        const tval x0 = value_in(0);
        const dims_t wd = const_dims(const_in(1, "B"), "the weight B");
        if (wd.size() != 2) fail("the weight B has shape " + list_str(wd) + "; memo maps MatMul by a 2-D constant (a Dense)");
        const tval x = last_axis_last(input_name(0), x0, "MatMul");
        if (wd[0] != out_of(x).back()) fail("the weight B has shape " + list_str(wd) + " for " + std::to_string(out_of(x).back()) + " input features");
        tval y = x;
        y.node = emit("Dense", {x.node}, {{"units", wd[1]}, {"use_bias", false}});
        y.features.clear();
        bare_dense_[static_cast<std::size_t>(y.node)] = true;
        give(y.node, {{wd, in_feature_order(x, weight_in(1, "B"), wd[1])}});
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
        // The computed input of the broadcast shape (a squeeze-and-excitation block multiplies
        // N,C,H,W by N,C,1,1): the others are repeated up to it (spread()).
        tval first = vals_.at(input_name(values[0]));
        for (int k : values)
            if (const tval v = vals_.at(input_name(k)); v.onnx_rank() == first.onnx_rank() && out_of(v).elements() > out_of(first).elements()) first = v;
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
        if (values.size() == 1) return constant_operand_op(op, first, values[0], consts);
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
            tval v = vals_.at(input_name(k));
            if (first.merged() || v.merged()) {
                if (!(v.perm == first.perm && v.dirs_axis == first.dirs_axis)) as_layout(input_name(k), v, {}, op);
            } else {
                v = as_layout(input_name(k), v, first.perm, op);
            }
            if (onnx_dims(v) != d) v = spread(v, d, input_label(k));
            srcs.push_back(v.node);
        }
        tval out = first;
        out.node = emit(cls, srcs, {});
        set_out(0, out);
    }

    /// One computed tensor and constants: a bias add right after a MatMul is the Dense's bias; a
    /// scalar is a ScaleShift; any other constant operand (per channel, say) passes the value
    /// through unchanged, noted as inexact.
    void constant_operand_op(const std::string& op, tval x, int computed, const std::vector<int>& consts) {
        if (consts.empty()) return set_out(0, x);
        const std::string& cname = input_name(consts[0]);
        const dims_t c = const_dims(consts_.at(cname), "the constant");
        if ((op == "Add" || op == "Sum") && consts.size() == 1 && bare_dense_[static_cast<std::size_t>(x.node)] && uses_[input_name(computed)] == 1 &&
            !x.merged()) {
            const i64 units = out_of(x).back();
            if (!c.empty() && c.back() == units && std::all_of(c.begin(), c.end() - 1, [](i64 v) { return v == 1; })) {
                node& d = m_.nodes[static_cast<std::size_t>(x.node)];
                d.set("use_bias", true);
                bare_dense_[static_cast<std::size_t>(x.node)] = false;
                std::vector<given_weights::one> ws;
                if (d.weights) ws.push_back(d.weights->weights.at(0));
                d.weights.reset();
                ws.push_back(vector_in(consts[0], "the bias"));
                give(x.node, std::move(ws));
                return set_out(0, x);
            }
        }
        std::vector<double> v;
        if (consts.size() == 1 && tensor::count(c) <= i64{1} << 20) v = weight_in(consts[0], "the constant");
        const bool scalar = !v.empty() && std::all_of(v.begin(), v.end(), [&](double e) { return e == v[0]; });
        if (!scalar) {
            inexact("a constant operand of shape " + list_str(c) + " is not modelled: the value passes through unchanged");
            return set_out(0, x);
        }
        // op(x, c) = scale * x + shift, c first for Sub (c - x).
        const double k = v[0];
        const bool c_first = consts[0] < computed;
        double scale = 1, shift = 0;
        if (op == "Add" || op == "Sum") shift = k;
        else if (op == "Sub") scale = c_first ? -1 : 1, shift = c_first ? k : -k;
        else if (op == "Mul") scale = k;
        else scale = 1 / k;  // Div by c (c / x failed above)
        if (scale == 1 && shift == 0) return set_out(0, x);
        if (!(std::abs(scale) <= 1e6 && std::abs(shift) <= 1e6)) {
            inexact(op + " by " + real_str(k) + " is not modelled (ScaleShift takes -1e6 to 1e6): the value passes through unchanged");
            return set_out(0, x);
        }
        x.node = emit("ScaleShift", {x.node}, {{"scale", scale}, {"shift", shift}});
        set_out(0, x);
    }

    /// v repeated along its spatial axes of size 1 up to ONNX shape `d`, which it broadcasts to:
    /// UpSampling (nearest: each value copied, exactly), in steps of at most 64 per axis.
    tval spread(tval v, const dims_t& d, const std::string& what) {
        const dims_t have = onnx_dims(v);
        const int r = static_cast<int>(d.size()), N = r - 2;
        const auto fails = [&](const std::string& why) { fail(what + " has shape " + dims_str(have) + ", the other inputs " + dims_str(d) + ": " + why); };
        if (static_cast<int>(have.size()) != r) fails("broadcasting between ranks is not supported");
        for (int a = 0; a < r; ++a)
            if (have[static_cast<std::size_t>(a)] != d[static_cast<std::size_t>(a)] && (a < 2 || have[static_cast<std::size_t>(a)] != 1))
                fails("only spatial axes of size 1 broadcast (memo repeats them by UpSampling)");
        if (N < 1 || N > 3 || v.merged() || v.perm != channels_last_perm(r)) fails("only spatial axes of a channels-first tensor broadcast");
        dims_t left(d.begin() + 2, d.end());
        while (std::any_of(left.begin(), left.end(), [](i64 x) { return x > 1; })) {
            ints step;
            for (auto& x : left) {
                i64 f = std::min<i64>(x, 64);
                while (x % f) --f;
                if (f == 1 && x > 1) fails("a size with a prime factor above 64 cannot be reached in steps of UpSampling");
                step.push(f);
                x /= f;
            }
            const value size = N == 1 ? value{step[0]} : value{step};
            v.node = emit(upsampling_names[static_cast<std::size_t>(N)], {v.node}, {{"size", size}}, "_spread");
        }
        return v;
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
        const tval x = as_layout(input_name(ks[0]), first, first.perm, "Concat");
        const int m = memo_axis(x, a);
        if (m <= 0) fail("attribute axis=" + std::to_string(a) + " is the batch axis");
        std::vector<int> srcs{x.node};
        for (std::size_t j = 1; j < ks.size(); ++j) {
            const tval v = value_in(ks[j]);
            if (v.onnx_rank() != r) fail("inputs have different ranks");
            srcs.push_back(as_layout(input_name(ks[j]), v, x.perm, "Concat").node);
        }
        set_out(0, tval{concatenate(srcs, m - r), x.perm});
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
            // Keras shares PReLU's slopes by shared_axes, ONNX by broadcasting the slope tensor:
            // memo's PReLU holds a slope per element, each the one ONNX broadcasts to it.
            const tval x = value_in(0);
            const int k = emit("PReLU", {x.node}, {});
            if (out_of(x).elements() > i64{1} << 24) inexact("a slope per element of more than 2^24 is not built: memo draws its own");
            else give(k, {{sample_dims(x), broadcast_to(x, weight_in(1, "slope"), const_dims(const_in(1, "slope"), "the slope"))}});
            return set_out(0, tval{k, x.perm, x.dirs_axis, x.dirs, x.features});
        } else if (op == "Selu") {
            const double a = attr_real("alpha", 1.67326319217681884765625), g = attr_real("gamma", 1.05070102214813232421875);
            if (std::abs(a - 1.6732632) > 1e-5 || std::abs(g - 1.0507010) > 1e-5)
                fail("attributes alpha=" + real_str(a) + ", gamma=" + real_str(g) + " are not supported (only SELU's constants)");
            cls = "Activation", ps.push_back({"activation", std::string("selu")});
        } else if (op == "HardSigmoid" || op == "HardSwish") {
            // max(0, min(1, alpha * x + beta)): Keras' hard_sigmoid where alpha and beta are its
            // own (0.2 and 0.5), else a ScaleShift and a ReLU capped at 1 (PyTorch's hardsigmoid
            // is x / 6 + 1 / 2). HardSwish is x times PyTorch's.
            const double a = op == "HardSwish" ? 1.0 / 6 : attr_real("alpha", 0.2), b = op == "HardSwish" ? 0.5 : attr_real("beta", 0.5);
            tval x = value_in(0);
            const int in = x.node;
            if (std::abs(a - 0.2) <= 1e-6 && std::abs(b - 0.5) <= 1e-6) {
                x.node = emit("Activation", {in}, {{"activation", std::string("hard_sigmoid")}});
            } else {
                x.node = emit("ScaleShift", {in}, {{"scale", a}, {"shift", b}}, "_scale");
                x.node = emit("ReLU", {x.node}, {{"max_value", 1.0}});
            }
            if (op == "HardSwish") x.node = emit("Multiply", {in, x.node}, {}, "_times");
            return set_out(0, x);
        }
        if (cls.empty()) fail("operator " + op + " is not supported");
        tval x = value_in(0);
        x.node = emit(cls, {x.node}, ps);
        set_out(0, x);
    }

    /// The dims of one sample of x as memo holds it.
    dims_t sample_dims(const tval& x) const {
        const shape& s = out_of(x);
        return dims_t(s.view().begin() + 1, s.view().end());
    }
    /// A constant of ONNX shape `c`, broadcast (numpy's rules) to one sample of x, in memo's layout.
    std::vector<double> broadcast_to(const tval& x, const std::vector<double>& v, const dims_t& c) const {
        if (x.merged()) fail("a constant on a recurrent layer's output with its direction axis is not supported");
        const dims_t od = onnx_dims(x), md = sample_dims(x);
        const std::size_t r = od.size();
        if (c.size() > r) fail("the constant of shape " + list_str(c) + " has a higher rank than the tensor " + dims_str(od));
        dims_t cstride(r, 0);  // stride in v of each ONNX axis (0 where it broadcasts)
        i64 st = 1;
        for (std::size_t j = c.size(); j-- > 0;) {
            const std::size_t a = r - c.size() + j;
            if (c[j] != 1 && c[j] != od[a]) fail("the constant of shape " + list_str(c) + " does not broadcast to " + dims_str(od));
            cstride[a] = c[j] == 1 ? 0 : st;
            st *= c[j];
        }
        std::vector<double> out(static_cast<std::size_t>(tensor::count(md)));
        dims_t idx(md.size(), 0);
        for (auto& e : out) {
            i64 at = 0;
            for (std::size_t i = 0; i < md.size(); ++i) at += idx[i] * cstride[static_cast<std::size_t>(x.perm[i + 1])];
            e = v[static_cast<std::size_t>(at)];
            for (std::size_t a = md.size(); a-- > 0;) {
                if (++idx[a] < md[a]) break;
                idx[a] = 0;
            }
        }
        return out;
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
};

}  // namespace memo::onnx::detail
