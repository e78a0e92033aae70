#pragma once
// LConv: Conv1D/2D/3D, SeparableConv1D/2D, DepthwiseConv1D/2D, Conv2DTranspose/3DTranspose.
// One template per kind over the spatial rank N (input rank N + 2).
#include "common.hpp"

namespace memo::layers {

inline constexpr std::string_view conv_names[] = {"", "Conv1D", "Conv2D", "Conv3D"};
inline constexpr std::string_view separable_names[] = {"", "SeparableConv1D", "SeparableConv2D", ""};
inline constexpr std::string_view depthwise_names[] = {"", "DepthwiseConv1D", "DepthwiseConv2D", ""};
inline constexpr std::string_view transpose_names[] = {"", "", "Conv2DTranspose", "Conv3DTranspose"};

enum class conv_kind { plain, separable, depthwise, transpose };

/// The windowed-conv parameters every kind starts with, in Keras' order.
inline param_builder conv_head(int n, conv_kind kind, bool causal) {
    param_builder b;
    if (kind != conv_kind::depthwise) b.add("filters", in_range(1, 4096, 32), role::shape, int64_t{8});
    b.add("kernel_size", tuple_of(n, in_range(1, 512, 5)), role::shape, ints::filled(n, 3));
    b.add("strides", tuple_of(n, in_range(1, 512, 5)), role::shape, ints::filled(n, 1));
    b.add("padding", causal ? element_of({"valid", "same", "causal"}) : element_of({"valid", "same"}), role::shape, "valid");
    if (kind == conv_kind::transpose) b.add("output_padding", optional(tuple_of(n, in_range(0, 511, 4))), role::shape, none);
    if (kind == conv_kind::depthwise) b.add("depth_multiplier", in_range(1, 512, 5), role::shape, int64_t{1});
    b.add("data_format", data_formats(), role::shape, "channels_last");
    b.add("dilation_rate", tuple_of(n, in_range(1, 512, 5)), role::shape, ints::filled(n, 1));
    if (kind == conv_kind::separable) b.add("depth_multiplier", in_range(1, 512, 5), role::shape, int64_t{1});
    return b;
}

/// Output shape of any conv kind: spatial sizes by Keras' arithmetic, channels by kind.
template <int N, conv_kind Kind>
expected<shape> conv_infer(inputs in, args p, std::span<const param> ps) {
    auto at = [&](std::string_view n) -> const value& { return value_of(ps, p, n); };
    const auto padding = as_str(at("padding"));
    const auto ks = as_ints(at("kernel_size"), N), st = as_ints(at("strides"), N), dl = as_ints(at("dilation_rate"), N);
    spatial s = spatial::of(in[0], as_str(at("data_format")));
    if (s.channels <= 0) return fail("input has no channels");
    if (st.max() > 1 && dl.max() > 1) return fail("strides > 1 with dilation_rate > 1 (Keras rejects the combination)");
    for (int i = 0; i < N; ++i) {
        if constexpr (Kind == conv_kind::transpose) {
            const value& op = at("output_padding");
            if (!is_none(op) && std::get<ints>(op)[i] >= st[i])
                return fail("output_padding " + str_i(std::get<ints>(op)[i]) + " must be less than strides " + str_i(st[i]));
            const int64_t out = deconv_length(s.sizes[i], ks[i], padding, op, i, st[i], dl[i]);
            // With an explicit output_padding, TensorFlow runs the transpose as the gradient of a
            // forward convolution from the output's size, which must come back to the input's: an
            // even (dilated) kernel under 'same' with output_padding 0 loses one, and TensorFlow
            // rejects the model; libraries that run it anyway each crop their own side.
            if (!is_none(op) && padding != "full") {
                const int64_t k = (ks[i] - 1) * dl[i] + 1;
                const int64_t back = padding == "same" ? (out + st[i] - 1) / st[i] : (out - k) / st[i] + 1;
                if (back != s.sizes[i])
                    return fail("output_padding " + str_i(std::get<ints>(op)[i]) + " with kernel " + str_i(k) + " under padding '" + std::string(padding) +
                                "' gives output size " + str_i(out) + ", whose convolution has size " + str_i(back) + ", not the input's " + str_i(s.sizes[i]) +
                                " (TensorFlow rejects it)");
            }
            s.sizes[i] = out;
        } else {
            const int64_t out = conv_length(s.sizes[i], ks[i], padding, st[i], dl[i]);
            if (out <= 0)
                return fail("kernel " + str_i((ks[i] - 1) * dl[i] + 1) + " is larger than input size " + str_i(s.sizes[i]) + " under padding '" +
                            std::string(padding) + "'");
            s.sizes[i] = out;
        }
        if (s.sizes[i] <= 0) return fail("output size " + str_i(s.sizes[i]) + " on spatial axis " + str_i(i + 1));
    }
    if constexpr (Kind == conv_kind::depthwise) s.channels *= as_int(at("depth_multiplier"));
    else s.channels = as_int(at("filters"));
    return s.to_shape();
}

template <int N>
struct conv : layer_kind<family::conv, rank_set::of(N + 2)> {
    static_assert(N >= 1 && N <= 3);
    static constexpr std::string_view name = conv_names[N];
    static std::span<const param> params() {
        return built_once([] { return conv_head(N, conv_kind::plain, N == 1).weighted({"kernel", "bias"}); });
    }
    static expected<shape> infer(inputs in, args p) { return conv_infer<N, conv_kind::plain>(in, p, params()); }
    /// kernel (k..., in, filters), bias (filters)
    static void weights(const node_view& n, weight_list& w) {
        const int64_t filters = n.integer("filters", 0);
        kernel_and_bias(n, w, cat(n.sizes("kernel_size", N), {n.channels(), filters}), {filters});
    }
    /// output positions * k * c_in * filters
    static int64_t flops(const node_view& n) { return positions(n, n.out) * n.volume("kernel_size", N) * channels_in(n) * n.integer("filters", 1); }
};

template <int N>
struct separable_conv : layer_kind<family::conv, rank_set::of(N + 2)> {
    static_assert(N >= 1 && N <= 2);
    static constexpr std::string_view name = separable_names[N];
    static std::span<const param> params() {
        return built_once([] {
            return conv_head(N, conv_kind::separable, N == 1).weighted({"depthwise", "pointwise", "bias"}).add("trainable", bools(), role::inert, true);
        });
    }
    static expected<shape> infer(inputs in, args p) { return conv_infer<N, conv_kind::separable>(in, p, params()); }
    /// depthwise_kernel (k..., in, dm), pointwise_kernel (1..., in * dm, filters), bias (filters)
    static void weights(const node_view& n, weight_list& w) {
        const int64_t dm = n.integer("depth_multiplier", 1), filters = n.integer("filters", 0), c = n.channels();
        w.add("depthwise_kernel", cat(n.sizes("kernel_size", N), {c, dm}), n.text("depthwise_initializer", "glorot_uniform"));
        kernel_and_bias(n, w, cat(std::vector<int64_t>(N, 1), {c * dm, filters}), {filters}, "pointwise");
    }
    /// output positions * (k * c_in * dm + c_in * dm * filters)
    static int64_t flops(const node_view& n) {
        const int64_t dm = n.integer("depth_multiplier", 1), cin = channels_in(n);
        return positions(n, n.out) * (n.volume("kernel_size", N) * cin * dm + cin * dm * n.integer("filters", 1));
    }
};

template <int N>
struct depthwise_conv : layer_kind<family::conv, rank_set::of(N + 2)> {
    static_assert(N >= 1 && N <= 2);
    static constexpr std::string_view name = depthwise_names[N];
    static std::span<const param> params() {
        return built_once([] { return conv_head(N, conv_kind::depthwise, false).weighted({"depthwise", "bias"}); });
    }
    static expected<shape> infer(inputs in, args p) { return conv_infer<N, conv_kind::depthwise>(in, p, params()); }
    /// depthwise_kernel (k..., in, dm), bias (in * dm)
    static void weights(const node_view& n, weight_list& w) {
        const int64_t dm = n.integer("depth_multiplier", 1);
        kernel_and_bias(n, w, cat(n.sizes("kernel_size", N), {n.channels(), dm}), {n.channels() * dm}, "depthwise");
    }
    /// output positions * k * c_in * dm
    static int64_t flops(const node_view& n) { return positions(n, n.out) * n.volume("kernel_size", N) * channels_in(n) * n.integer("depth_multiplier", 1); }
};

template <int N>
struct conv_transpose : layer_kind<family::conv, rank_set::of(N + 2)> {
    static_assert(N >= 2 && N <= 3);
    static constexpr std::string_view name = transpose_names[N];
    static std::span<const param> params() {
        return built_once([] { return conv_head(N, conv_kind::transpose, false).weighted({"kernel", "bias"}); });
    }
    static expected<shape> infer(inputs in, args p) { return conv_infer<N, conv_kind::transpose>(in, p, params()); }
    /// kernel (k..., filters, in), bias (filters)
    static void weights(const node_view& n, weight_list& w) {
        const int64_t filters = n.integer("filters", 0);
        kernel_and_bias(n, w, cat(n.sizes("kernel_size", N), {filters, n.channels()}), {filters});
    }
    /// input positions * k * c_in * filters
    static int64_t flops(const node_view& n) { return positions(n, n.in[0]) * n.volume("kernel_size", N) * channels_in(n) * n.integer("filters", 1); }
};

using conv_layers =
    layer_list<conv<1>, conv<2>, conv<3>, separable_conv<1>, separable_conv<2>, depthwise_conv<1>, depthwise_conv<2>, conv_transpose<2>, conv_transpose<3>>;

}  // namespace memo::layers
