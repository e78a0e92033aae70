#pragma once
// Reference kernels: Concatenate, Average, Maximum, Minimum, Add, Subtract, Multiply and Dot
// (Keras 2.8). Element-wise merges accumulate in acc_t<T> and round once.
#include "../../layers/merge.hpp"
#include "array.hpp"

namespace memo::reference {

namespace detail::merge {

/// Folds the inputs element-wise: r = first(x0), r = step(r, xi) for the rest, out = last(r, count).
template <class T, class Step, class Last>
expected<array<T>> fold(std::span<const array<T>> in, Step step, Last last) {
    using A = acc_t<T>;
    for (const auto& x : in)
        if (x.dims != in[0].dims) return fail("merged inputs have different shapes");
    array<T> out(in[0].dims);
    for (int64_t e = 0; e < out.size(); ++e) {
        A r = static_cast<A>(in[0][e]);
        for (std::size_t k = 1; k < in.size(); ++k) r = step(r, static_cast<A>(in[k][e]));
        out[e] = static_cast<T>(last(r, static_cast<A>(in.size())));
    }
    return out;
}

/// Rows of the last axis, each divided by its L2 norm (tf.math.l2_normalize, epsilon 1e-12).
/// The libraries square and sum in T: a square or sum out of T's range underflows to 0 or
/// overflows to inf there (float16's 1e-12 is 0, so a row of tiny values gives 0/0), and the
/// reference rounds the same values to T, or it would call their non-finite answer a fault. A
/// library that keeps them wider (ONNX Runtime runs float16 in float32) stays finite there: each
/// row's divisor is noted (divides_by) for the oracle's range rule, which judges neither.
template <class T>
std::vector<acc_t<T>> l2_rows(const array<T>& x, bool normalize) {
    using A = acc_t<T>;
    using std::sqrt;
    auto in_t = [](A v) { return static_cast<A>(static_cast<T>(v)); };
    const A eps = in_t(A(1e-12));
    const int64_t k = x.dim(-1);
    std::vector<A> r(x.data.size());
    for (int64_t row = 0; row < x.size() / std::max<int64_t>(1, k); ++row) {
        A sq = 0;
        for (int64_t j = 0; j < k; ++j) sq += in_t(static_cast<A>(x[row * k + j]) * static_cast<A>(x[row * k + j]));
        const A divisor = std::max(in_t(sq), eps);
        if (normalize) detail::divides_by(static_cast<double>(divisor));
        const A inv = normalize ? A(1) / sqrt(divisor) : A(1);
        for (int64_t j = 0; j < k; ++j) r[static_cast<std::size_t>(row * k + j)] = static_cast<A>(x[row * k + j]) * inv;
    }
    return r;
}

}  // namespace detail::merge

/// The kernels of the merge layers.
template <class T>
struct merge_kernels {
    using A = acc_t<T>;
    using ins = std::span<const array<T>>;

    static expected<array<T>> run(layers::add, const node&, ins in, ins) { return detail::merge::fold(in, std::plus<A>(), as_is); }
    static expected<array<T>> run(layers::subtract, const node&, ins in, ins) { return detail::merge::fold(in, std::minus<A>(), as_is); }
    static expected<array<T>> run(layers::multiply, const node&, ins in, ins) { return detail::merge::fold(in, std::multiplies<A>(), as_is); }
    static expected<array<T>> run(layers::average, const node&, ins in, ins) {
        return detail::merge::fold(in, std::plus<A>(), [](A r, A count) { return r / count; });
    }
    // NaN wins either way round.
    static expected<array<T>> run(layers::maximum, const node&, ins in, ins) {
        return detail::merge::fold(
            in, [](A a, A b) { return a < b || b != b ? b : a; }, as_is);
    }
    static expected<array<T>> run(layers::minimum, const node&, ins in, ins) {
        return detail::merge::fold(
            in, [](A a, A b) { return b < a || b != b ? b : a; }, as_is);
    }
    // Inputs one after another along `axis`: each contributes a block of len_i * inner per outer index.
    static expected<array<T>> run(layers::concatenate, const node& n, ins in, ins) {
        array<T> out(concrete(n.out, in[0].dims[0]));
        int axis = static_cast<int>(params{n}.integer("axis"));
        if (axis < 0) axis += out.rank();
        int64_t len = 0;
        for (const auto& x : in) {
            bool fits = x.rank() == out.rank();
            for (int d = 0; fits && d < x.rank(); ++d) fits = d == axis || x.dims[static_cast<std::size_t>(d)] == out.dims[static_cast<std::size_t>(d)];
            if (!fits) return fail("Concatenate inputs differ off the concatenation axis");
            len += x.dim(axis);
        }
        if (len != out.dim(axis)) return fail("Concatenate inputs do not add up to the inferred shape");
        const int64_t inner = out.strides()[static_cast<std::size_t>(axis)];
        const int64_t outer = out.size() / std::max<int64_t>(1, out.dim(axis) * inner);
        int64_t at = 0;
        for (int64_t o = 0; o < outer; ++o)
            for (const auto& x : in) {
                const int64_t block = x.dim(axis) * inner;
                std::copy_n(x.data.begin() + o * block, block, out.data.begin() + at);
                at += block;
            }
        return out;
    }
    // Keras' Dot with axes=-1: batch dot over the last axes, (b, k).(b, k) -> (b, 1) and
    // (b, n, k).(b, m, k) -> (b, n, m); normalize l2-normalises both along that axis first.
    static expected<array<T>> run(layers::dot, const node& n, ins in, ins) {
        const bool normalize = params{n}.flag("normalize");
        const array<T>&x = in[0], &y = in[1];
        if (x.rank() != y.rank() || x.dims[0] != y.dims[0] || x.dim(-1) != y.dim(-1)) return fail("Dot inputs differ in rank, batch or last axis");
        const auto a = detail::merge::l2_rows(x, normalize), b = detail::merge::l2_rows(y, normalize);
        const int64_t batch = x.dims[0], k = x.dim(-1);
        const int64_t rows = x.rank() == 3 ? x.dims[1] : 1, cols = y.rank() == 3 ? y.dims[1] : 1;
        array<T> out(concrete(n.out, batch));
        if (out.size() != batch * rows * cols) return fail("Dot inputs do not match the inferred shape");
        for (int64_t s = 0; s < batch; ++s)
            for (int64_t i = 0; i < rows; ++i)
                for (int64_t j = 0; j < cols; ++j) {
                    A sum = 0;
                    for (int64_t c = 0; c < k; ++c)
                        sum += a[static_cast<std::size_t>((s * rows + i) * k + c)] * b[static_cast<std::size_t>((s * cols + j) * k + c)];
                    out[(s * rows + i) * cols + j] = static_cast<T>(sum);
                }
        return out;
    }

private:
    static A as_is(A r, A) { return r; }
};

}  // namespace memo::reference
