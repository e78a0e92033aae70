#pragma once
// Reference kernels: Flatten, RepeatVector, Permute, Cropping1D/2D/3D, UpSampling1D/2D/3D and
// ZeroPadding1D/2D/3D (Keras 2.8). Output dimensions come from the node's inferred shape.
#include <utility>

#include "../../layers/reshape.hpp"
#include "array.hpp"

namespace memo::reference {

namespace detail::reshape {

/// Calls f(index, linear) for every multi-index of `dims` in row-major order.
template <class F>
void each_index(const std::vector<int64_t>& dims, F f) {
    const int64_t total = tensor::count(dims);
    std::vector<int64_t> idx(dims.size(), 0);
    for (int64_t e = 0; e < total; ++e) {
        f(std::as_const(idx), e);
        for (auto d = dims.size(); d-- > 0;) {
            if (++idx[d] < dims[d]) break;
            idx[d] = 0;
        }
    }
}

/// out[i] = x[src(i)] for every index i of `out_dims`, or 0 where src returns false or an index
/// outside x (an input of another shape than inferred reads no further than its own end).
template <class T, class Source>
array<T> gather(const array<T>& x, std::vector<int64_t> out_dims, Source src) {
    array<T> out(std::move(out_dims));
    const auto xs = x.strides();
    std::vector<int64_t> from(xs.size());
    each_index(out.dims, [&](const std::vector<int64_t>& idx, int64_t e) {
        if (!src(idx, from) || from.size() != xs.size()) return;
        int64_t at = 0;
        for (std::size_t d = 0; d < from.size(); ++d) {
            if (from[d] < 0 || from[d] >= x.dims[d]) return;
            at += from[d] * xs[d];
        }
        out[e] = x[at];
    });
    return out;
}

/// x with its axes reordered: out axis k is x's axis perm[k].
template <class T>
array<T> transpose(const array<T>& x, const std::vector<std::size_t>& perm) {
    std::vector<int64_t> dims;
    for (auto a : perm) dims.push_back(x.dims[a]);
    return gather(x, dims, [&](const std::vector<int64_t>& idx, std::vector<int64_t>& from) {
        for (std::size_t k = 0; k < perm.size(); ++k) from[perm[k]] = idx[k];
        return true;
    });
}

/// The first spatial axis: 2 for channels_first, else 1.
inline std::size_t first_spatial(const params& p) { return p.channels_first() ? 2 : 1; }

/// Cropping (sign -1) and ZeroPadding (sign +1): out index = in index + sign * before, per spatial axis.
template <class T>
array<T> border(const node& n, const array<T>& x, int sign) {
    params p{n};
    const int spatial = x.rank() - 2;
    const auto amounts = p.ints(sign < 0 ? "cropping" : "padding", 2 * spatial);
    const std::size_t first = first_spatial(p);
    return gather(x, concrete(n.out, x.dims[0]), [&](const std::vector<int64_t>& idx, std::vector<int64_t>& from) {
        from = idx;
        for (int s = 0; s < spatial; ++s) {
            const std::size_t d = first + static_cast<std::size_t>(s);
            from[d] = idx[d] - sign * amounts[static_cast<std::size_t>(2 * s)];  // outside x: padding
        }
        return true;
    });
}

/// Nearest-neighbour upsampling by integer factors: out index i reads in index i / size.
template <class T>
array<T> repeat(const node& n, const array<T>& x) {
    params p{n};
    const int spatial = x.rank() - 2;
    const auto size = p.ints("size", spatial);
    const std::size_t first = first_spatial(p);
    return gather(x, concrete(n.out, x.dims[0]), [&](const std::vector<int64_t>& idx, std::vector<int64_t>& from) {
        from = idx;
        for (int s = 0; s < spatial; ++s) from[first + static_cast<std::size_t>(s)] /= size[static_cast<std::size_t>(s)];
        return true;
    });
}

/// One output coordinate of TF2's bilinear resize (half_pixel_centers, no align_corners).
struct lerp_at {
    int64_t lower, upper;
    double weight;
    static lerp_at of(int64_t out, int64_t in_size, int64_t out_size) {
        const double in = (static_cast<double>(out) + 0.5) * static_cast<double>(in_size) / static_cast<double>(out_size) - 0.5;
        const double floor_in = std::floor(in);
        return {std::max<int64_t>(static_cast<int64_t>(floor_in), 0), std::min<int64_t>(static_cast<int64_t>(std::ceil(in)), in_size - 1), in - floor_in};
    }
};

/// UpSampling2D with interpolation="bilinear": Keras calls tf.image.resize(method=BILINEAR).
template <class T>
array<T> bilinear(const node& n, const array<T>& x) {
    using A = acc_t<T>;
    const std::size_t ry = first_spatial(params{n}), rx = ry + 1;
    array<T> out(concrete(n.out, x.dims[0]));
    const auto xs = x.strides();
    each_index(out.dims, [&](const std::vector<int64_t>& idx, int64_t e) {
        const auto y = lerp_at::of(idx[ry], x.dims[ry], out.dims[ry]), h = lerp_at::of(idx[rx], x.dims[rx], out.dims[rx]);
        int64_t base = 0;
        for (std::size_t d = 0; d < idx.size(); ++d)
            if (d != ry && d != rx) base += idx[d] * xs[d];
        auto at = [&](int64_t r, int64_t c) { return static_cast<A>(x[base + r * xs[ry] + c * xs[rx]]); };
        const A wx = static_cast<A>(h.weight), wy = static_cast<A>(y.weight);
        const A top = at(y.lower, h.lower) + (at(y.lower, h.upper) - at(y.lower, h.lower)) * wx;
        const A bottom = at(y.upper, h.lower) + (at(y.upper, h.upper) - at(y.upper, h.lower)) * wx;
        out[e] = static_cast<T>(top + (bottom - top) * wy);
    });
    return out;
}

}  // namespace detail::reshape

/// The kernels of the reshaping layers.
template <class T>
struct reshape_kernels {
    using ins = std::span<const array<T>>;

    // channels_first: Keras moves the channels last before flattening (for rank > 2).
    static expected<array<T>> run(layers::flatten, const node& n, ins in, ins) {
        const array<T>& x = in[0];
        array<T> out = x;
        if (params{n}.channels_first() && x.rank() > 2) {
            std::vector<std::size_t> perm{0};
            for (std::size_t d = 2; d < x.dims.size(); ++d) perm.push_back(d);
            perm.push_back(1);
            out = detail::reshape::transpose(x, perm);
        }
        out.dims = concrete(n.out, x.dims[0]);
        if (tensor::count(out.dims) != x.size()) return fail("Flatten input does not match the inferred shape");
        return out;
    }
    static expected<array<T>> run(layers::repeat_vector, const node& n, ins in, ins) {
        return detail::reshape::gather(in[0], concrete(n.out, in[0].dims[0]), [](const std::vector<int64_t>& idx, std::vector<int64_t>& from) {
            from = {idx[0], idx[2]};
            return true;
        });
    }
    // dims are 1-based over the sample axes: out axis k is input axis dims[k - 1].
    static expected<array<T>> run(layers::permute, const node& n, ins in, ins) {
        const auto& dims = std::get<ints>(params{n}.param("dims"));
        std::vector<std::size_t> perm{0};
        for (auto d : dims) perm.push_back(static_cast<std::size_t>(d));
        auto sorted = perm;
        std::sort(sorted.begin(), sorted.end());
        for (std::size_t k = 0; k < sorted.size(); ++k)
            if (sorted[k] != k || sorted.size() != in[0].dims.size()) return fail("Permute dims are not a permutation of the input's sample axes");
        return detail::reshape::transpose(in[0], perm);
    }
    // Cropping (Sign -1) and ZeroPadding (Sign +1).
    template <int N, int Sign, const std::string_view* Names, const char* Param>
    static expected<array<T>> run(layers::border<N, Sign, Names, Param>, const node& n, ins in, ins) {
        return detail::reshape::border(n, in[0], Sign);
    }
    template <int N>
    static expected<array<T>> run(layers::upsampling<N>, const node& n, ins in, ins) {
        if constexpr (N == 2) {
            const auto how = params{n}.str("interpolation");
            if (how == "bilinear") return detail::reshape::bilinear(n, in[0]);
            if (how != "nearest") return fail("UpSampling2D interpolation '" + std::string(how) + "' has no reference kernel");
        }
        return detail::reshape::repeat(n, in[0]);
    }
};

}  // namespace memo::reference
