#pragma once
// What the Keras layer families share: the candidate lists of MEMO's parameter pool, parameter
// builders, and Keras' output-length arithmetic.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "../core/layer.hpp"

namespace memo::layers {

using std::int64_t;

/// Keras activations (MEMO's pool).
inline choice activations(bool with_none = false) {
    choice c = element_of({"softmax", "elu", "selu", "softplus", "softsign", "relu", "tanh", "sigmoid", "hard_sigmoid", "exponential", "linear"});
    if (with_none) c.options.emplace_back(std::in_place_type<none_t>);
    return c;
}
/// The magnitude a Keras activation's usual formulas round against: elu and selu (exp(x) - 1),
/// softplus (log(1 + exp(x))), sigmoid and hard_sigmoid (1 + ..., or 0.5 * tanh + 0.5 in
/// approximating kernels), tanh (polynomial kernels are accurate to a few u absolute) and softmax
/// (exp(x - max): the largest term is 1) round at 1 (selu at its scale * alpha). relu, linear,
/// softsign and exponential are accurate to a few u of their result: 0. The oracle's rounding rule
/// (oracle/rounding.hpp) and the reference's shaken runs (reference::interpreter::run_shaken) use it.
constexpr double activation_rounds_at(std::string_view a) noexcept {
    if (a == "selu") return 1.0507009873554805 * 1.6732632423543772;
    if (a == "elu" || a == "softplus" || a == "sigmoid" || a == "hard_sigmoid" || a == "tanh" || a == "softmax") return 1.0;
    return 0.0;
}

/// Keras initializers (MEMO's pool, the union of its kernel and bias lists).
inline choice initializers() {
    return element_of({"Zeros", "Ones", "Constant", "RandomNormal", "RandomUniform", "TruncatedNormal", "VarianceScaling", "Orthogonal", "glorot_normal",
                       "glorot_uniform", "he_normal", "he_uniform", "lecun_normal", "lecun_uniform", "Identity"});
}
/// Regularizers and constraints: None (Keras' default) or MEMO's candidates.
inline choice regularizers() { return element_of({none, "l1", "l2"}); }
inline choice constraints() { return element_of({none, "Constraint", "MaxNorm", "MinMaxNorm", "NonNeg", "UnitNorm"}); }
inline choice data_formats() { return element_of({"channels_last", "channels_first"}); }
inline choice axes() { return element_of({-1, -2, -3, -4, -5}); }

/// Parameter-list builders: each appends the parameters a family shares, in Keras' order.
struct param_builder {
    std::vector<param> ps;
    param_builder& add(std::string_view name, any_domain d, role r, value fallback) {
        ps.push_back(param{name, std::move(d), r, std::move(fallback)});
        return *this;
    }
    /// activation, use_bias
    param_builder& activation() {
        add("activation", activations(), role::mode, "linear");
        return add("use_bias", bools(), role::mode, true);
    }
    /// <w>_initializer for each weight w (the first gets glorot_uniform, a bias gets Zeros)
    param_builder& initializers_for(std::initializer_list<std::string_view> weights) {
        for (auto w : weights) add(init_name(w), memo::layers::initializers(), role::init, w == "bias" ? value{"Zeros"} : value{"glorot_uniform"});
        return *this;
    }
    /// <w>_regularizer for each weight, then activity_regularizer, then <w>_constraint for each
    param_builder& training_only(std::initializer_list<std::string_view> weights, bool activity = true) {
        for (auto w : weights) add(intern(std::string(w) + "_regularizer"), regularizers(), role::inert, none);
        if (activity) add("activity_regularizer", regularizers(), role::inert, none);
        for (auto w : weights) add(intern(std::string(w) + "_constraint"), constraints(), role::inert, none);
        return *this;
    }
    /// What Keras puts after the settings of a layer with weights: activation and use_bias, then
    /// each weight's initializer, regularizer and constraint
    param_builder& weighted(std::initializer_list<std::string_view> weights) { return activation().initializers_for(weights).training_only(weights); }
    std::vector<param> done() { return std::move(ps); }

    static std::string_view init_name(std::string_view w) { return intern(std::string(w) + "_initializer"); }
    /// Parameter names must outlive the tables; built names are kept here for the program's life.
    static std::string_view intern(std::string s) {
        static std::vector<std::unique_ptr<std::string>> pool;
        for (const auto& p : pool)
            if (*p == s) return *p;
        pool.push_back(std::make_unique<std::string>(std::move(s)));
        return *pool.back();
    }
};

/// A layer type's parameters, made by `build` (a lambda returning a param_builder) the first time
/// they are asked for and kept: each lambda, so each layer type, has its own.
template <class Build>
std::span<const param> built_once(Build build) {
    static const std::vector<param> ps = build().done();
    return ps;
}

/// The value of the parameter called `name` among a layer's parameters `ps` (the first where it has none).
inline const value& value_of(std::span<const param> ps, args p, std::string_view name) {
    const value* v = find_value(ps, p, name);
    return v ? *v : p[0];
}

/// The parameters `Builder::build()` makes, as a layer type's params(): a layer deriving from
/// it (`struct relu : built_by<relu>`) declares them in a `build` of its own.
template <class Builder>
struct built_by {
    static std::span<const param> params() {
        return built_once([] { return Builder::build(); });
    }
};

/// What a layer type described by a tag takes from it: the class name and the parameters its
/// builder makes (a family's layer template derives from it; the tag says the rest).
template <class Tag>
struct named_by : built_by<Tag> {
    static constexpr std::string_view name = Tag::name;
};

/// A kernel drawn by the layer's `<kernel>_initializer` ("kernel", or "depthwise" for
/// depthwise_kernel) and, with use_bias, a bias drawn by its `bias_initializer`.
inline void kernel_and_bias(const node_view& n, weight_list& w, std::vector<int64_t> kernel, std::vector<int64_t> bias, std::string_view name = "kernel") {
    const std::string s(name);
    w.add(name == "kernel" ? s : s + "_kernel", std::move(kernel), n.text(s + "_initializer", "glorot_uniform"));
    if (n.flag("use_bias", true)) w.add("bias", std::move(bias), n.text("bias_initializer", "Zeros"));
}

/// A class name a template can take as its argument ("Dropout"), for tags written in one line.
template <std::size_t N>
struct class_name {
    char text[N]{};
    constexpr class_name(const char (&s)[N]) {  // NOLINT: implicit, so that "Dropout" converts
        for (std::size_t i = 0; i < N; ++i) text[i] = s[i];
    }
    constexpr std::string_view view() const { return {text, N - 1}; }
};

/// The tensor layout of a channels_last or channels_first input: spatial sizes and channels.
struct spatial {
    int64_t batch = shape::unknown;
    int64_t channels = 0;
    int64_t sizes[4] = {0, 0, 0, 0};
    int n = 0;
    bool channels_first = false;

    static spatial of(const shape& s, std::string_view data_format) {
        spatial v;
        v.batch = s[0];
        v.n = s.rank() - 2;
        v.channels_first = data_format == "channels_first";
        v.channels = v.channels_first ? s[1] : s.back();
        for (int i = 0; i < v.n && i < 4; ++i) v.sizes[i] = s[i + (v.channels_first ? 2 : 1)];
        return v;
    }
    shape to_shape() const {
        shape s;
        s.push(batch);
        if (channels_first) s.push(channels);
        for (int i = 0; i < n; ++i) s.push(sizes[i]);
        if (!channels_first) s.push(channels);
        return s;
    }
};

/// Keras' conv_utils.conv_output_length, or 0 when the window does not fit.
inline int64_t conv_length(int64_t in, int64_t kernel, std::string_view padding, int64_t stride, int64_t dilation) {
    const int64_t k = (kernel - 1) * dilation + 1;
    int64_t len = in;
    if (padding == "valid") len = in - k + 1;
    else if (padding == "full") len = in + k - 1;
    if (len <= 0) return 0;
    return (len + stride - 1) / stride;
}

/// TensorFlow's padding of one spatial axis, before and after the data, for a window reaching
/// `reach` = (kernel - 1) * dilation + 1 elements: "same" pads max((out - 1) * stride + reach - in, 0)
/// in all, with out = ceil(in / stride) and the odd element after; "causal" pads reach - 1 before;
/// "valid" none. One rule for the reference, libtorch and ONNX, so that they pad alike.
struct axis_padding {
    int64_t before = 0, after = 0;
};
inline axis_padding window_padding(std::string_view padding, int64_t in, int64_t reach, int64_t stride) {
    if (padding == "causal") return {reach - 1, 0};
    if (padding != "same") return {};
    const int64_t out = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>((out - 1) * stride + reach - in, 0);
    return {total / 2, total - total / 2};
}

/// Keras' conv_utils.deconv_output_length.
inline int64_t deconv_length(int64_t in, int64_t kernel, std::string_view padding, const value& output_padding, int i, int64_t stride, int64_t dilation) {
    const int64_t k = (kernel - 1) * dilation + 1;
    if (is_none(output_padding)) {
        if (padding == "valid") return in * stride + std::max<int64_t>(k - stride, 0);
        if (padding == "full") return in * stride - (stride + k - 2);
        return in * stride;
    }
    const int64_t pad = padding == "same" ? k / 2 : padding == "full" ? k - 1 : 0;
    return (in - 1) * stride + k - 2 * pad + std::get<ints>(output_padding)[i];
}

inline std::string str_i(int64_t x) { return std::to_string(x); }

/// `a` followed by `b`: a kernel's window, then its channel dimensions.
inline std::vector<int64_t> cat(std::vector<int64_t> a, std::initializer_list<int64_t> b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

/// Spatial positions of a shape: its elements over its batch and channels, `skip` axes after the
/// batch left out (the time axis of ConvLSTM).
inline int64_t positions(const node_view& n, const shape& s, int skip = 0) {
    int64_t p = 1;
    const bool first = n.channels_first();
    for (int i = 1 + skip + (first ? 1 : 0); i < s.rank() - (first ? 0 : 1); ++i) p *= s[i];
    return p;
}

/// The input channels a cost counts: the first input's, at least 1.
inline int64_t channels_in(const node_view& n) { return n.in[0].rank() < 2 ? 1 : n.channels(); }

/// The cost of a layer that does one operation per input element (normalizations, element-wise functions).
inline int64_t per_input_element(const node_view& n) { return n.in[0].elements(); }

/// Normalises a Keras axis (negative from the end) for a rank; -1 when out of range.
inline int normal_axis(int64_t axis, int rank) {
    const int64_t a = axis < 0 ? axis + rank : axis;
    return a >= 1 && a < rank ? static_cast<int>(a) : -1;
}

}  // namespace memo::layers
