#pragma once
// Keras' layouts as a channels-first library holds them, described once for every backend that
// needs them (libtorch, ONNX): a permutation of Keras' axes, then the dims to reshape to.
//
//   tensors   channels_last (B, s..., C)       as (B, C, s...)         to_channels_first(rank)
//   kernels   conv (k..., in, out)             as (out, in, k...)      channels_first_kernel(dims)
//             conv_transpose (k..., out, in)   as (in, out, k...)      (the same permutation)
//             depthwise (k..., in, dm)         as (in * dm, 1, k...)   channels_first_depthwise(dims)
//
// A depthwise kernel becomes a grouped convolution's (groups = in): output channel c * dm + m is
// input channel c's m-th filter, as Keras orders them.
#include <cstdint>
#include <span>
#include <vector>

namespace memo::layers {

/// How to hold a Keras array channels-first: permute its axes by `perm`, then (where `dims` is
/// not empty) reshape it to `dims`.
struct layout_change {
    std::vector<std::int64_t> perm, dims;
};

/// The axes of a channels_last tensor of `rank` (B, s..., C) in channels-first order (B, C, s...).
inline std::vector<std::int64_t> to_channels_first(std::int64_t rank) {
    std::vector<std::int64_t> p{0, rank - 1};
    for (std::int64_t i = 1; i < rank - 1; ++i) p.push_back(i);
    return p;
}
/// The axes of a channels-first tensor of `rank` (B, C, s...) in channels_last order (B, s..., C).
inline std::vector<std::int64_t> from_channels_first(std::int64_t rank) {
    std::vector<std::int64_t> p{0};
    for (std::int64_t i = 2; i < rank; ++i) p.push_back(i);
    p.push_back(1);
    return p;
}

/// Keras' kernel (k..., a, b) as (b, a, k...).
inline layout_change channels_first_kernel(std::span<const std::int64_t> dims) {
    const auto n = static_cast<std::int64_t>(dims.size()) - 2;
    layout_change c{{n + 1, n}, {}};
    for (std::int64_t i = 0; i < n; ++i) c.perm.push_back(i);
    return c;
}
/// Keras' depthwise kernel (k..., in, dm) as a grouped convolution's (in * dm, 1, k...).
inline layout_change channels_first_depthwise(std::span<const std::int64_t> dims) {
    const auto n = static_cast<std::int64_t>(dims.size()) - 2;
    const auto at = [&](std::int64_t i) { return dims[static_cast<std::size_t>(i)]; };
    layout_change c{{n, n + 1}, {at(n) * at(n + 1), 1}};
    for (std::int64_t i = 0; i < n; ++i) c.perm.push_back(i), c.dims.push_back(at(i));
    return c;
}

}  // namespace memo::layers
