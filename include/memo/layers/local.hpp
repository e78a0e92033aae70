#pragma once
// LLocal: LocallyConnected1D/2D (unshared weights; Keras supports only padding='valid').
#include "common.hpp"

namespace memo::layers {

inline constexpr std::string_view local_names[] = {"", "LocallyConnected1D", "LocallyConnected2D"};

template <int N>
struct locally_connected : layer_kind<family::local, rank_set::of(N + 2)> {
    static constexpr std::string_view name = local_names[N];
    enum : std::size_t { filters, kernel_size, strides, padding, data_format };
    static std::span<const param> params() {
        return built_once([] {
            return param_builder{}
                .add("filters", in_range(1, 4096, 32), role::shape, int64_t{8})
                .add("kernel_size", tuple_of(N, in_range(1, 512, 5)), role::shape, ints::filled(N, 3))
                .add("strides", tuple_of(N, in_range(1, 512, 5)), role::shape, ints::filled(N, 1))
                .add("padding", N == 1 ? element_of({"valid"}) : element_of({"valid", "same"}), role::shape, "valid")
                .add("data_format", data_formats(), role::shape, "channels_last")
                .weighted({"kernel", "bias"});
        });
    }
    static expected<shape> infer(inputs in, args p) {
        if (as_str(p[padding]) != "valid") return fail(std::string(name) + " supports only padding='valid' (as Keras)");
        const auto ks = as_ints(p[kernel_size], N), st = as_ints(p[strides], N);
        spatial s = spatial::of(in[0], as_str(p[data_format]));
        for (int i = 0; i < N; ++i) {
            const int64_t out = conv_length(s.sizes[i], ks[i], "valid", st[i], 1);
            if (out <= 0) return fail("kernel " + str_i(ks[i]) + " is larger than input size " + str_i(s.sizes[i]));
            s.sizes[i] = out;
        }
        s.channels = as_int(p[filters]);
        return s.to_shape();
    }
    /// kernel (output positions, k * in, filters), bias (output sizes..., filters)
    static void weights(const node_view& n, weight_list& w) {
        const auto out = spatial::of(n.out, n.channels_first() ? "channels_first" : "channels_last");
        const int64_t f = n.integer("filters", 0);
        int64_t positions = 1;
        std::vector<int64_t> bias;
        for (int k = 0; k < N; ++k) positions *= out.sizes[k], bias.push_back(out.sizes[k]);
        bias.push_back(f);
        kernel_and_bias(n, w, {positions, n.volume("kernel_size", N) * n.channels(), f}, std::move(bias));
    }
    /// output positions * k * c_in * filters
    static int64_t flops(const node_view& n) { return layers::positions(n, n.out) * n.volume("kernel_size", N) * channels_in(n) * n.integer("filters", 1); }
};

using local_layers = layer_list<locally_connected<1>, locally_connected<2>>;

}  // namespace memo::layers
