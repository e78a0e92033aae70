#pragma once
// The CUDA backend's own kernels, one output element at a time. Each is a small struct whose
// `operator()(i)` computes (or places) element i; it is `__host__ __device__`, so the same code
// runs in a CUDA kernel (device.cuh launches it over a grid) and in a plain loop on the host
// (host.hpp), where the tests check it against the reference interpreter on machines with no GPU.
//
// Tensors here are row-major with at most max_rank axes; T is the storage type, A the type the
// arithmetic is done in (float for float32, double for float64).
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define MEMO_HD __host__ __device__
#else
#define MEMO_HD
#endif

namespace memo::cuda::kernels {

using index_t = std::int64_t;
using std::ceil, std::exp, std::expm1, std::fabs, std::floor, std::log1p, std::sqrt, std::tanh;
inline constexpr int max_rank = 8;

/// Dims of a tensor of at most max_rank axes, with its row-major strides.
struct shape {
    int rank = 0;
    index_t dims[max_rank] = {};

    MEMO_HD index_t count() const {
        index_t n = 1;
        for (int d = 0; d < rank; ++d) n *= dims[d];
        return n;
    }
    MEMO_HD index_t stride(int axis) const {
        index_t s = 1;
        for (int d = rank - 1; d > axis; --d) s *= dims[d];
        return s;
    }
    /// The coordinates of flat index i.
    MEMO_HD void coords(index_t i, index_t* c) const {
        for (int d = rank - 1; d >= 0; --d) {
            c[d] = dims[d] ? i % dims[d] : 0;
            i = dims[d] ? i / dims[d] : 0;
        }
    }
};

/// Where each output element comes from: for output axis j, input axis `from[j]` (-1: none, the
/// output repeats along j) at coordinate (out - offset[j]) / repeat[j]. That one description is a
/// permutation (layouts, Permute), a pad or a crop (offset), nearest upsampling (repeat), a
/// RepeatVector (an axis from nowhere) and a slice (CustomDropDimLayer). A coordinate outside the
/// input takes `fill`.
struct gather_map {
    shape out, in;
    int from[max_rank] = {};
    index_t offset[max_rank] = {};
    index_t repeat[max_rank] = {};
    bool reverse[max_rank] = {};  // the coordinate counts from the end of the input's axis (a time flip)

    /// The input's flat index of output element i, or -1 where it falls outside the input.
    MEMO_HD index_t source(index_t i) const {
        index_t c[max_rank];
        out.coords(i, c);
        index_t at = 0;
        index_t ic[max_rank] = {};
        for (int j = 0; j < out.rank; ++j) {
            if (from[j] < 0) continue;
            const index_t shifted = c[j] - offset[j];
            if (shifted < 0) return -1;
            const index_t k = shifted / repeat[j];
            if (k >= in.dims[from[j]]) return -1;
            ic[from[j]] = reverse[j] ? in.dims[from[j]] - 1 - k : k;
        }
        for (int d = 0; d < in.rank; ++d) at = at * in.dims[d] + ic[d];
        return at;
    }
};

/// A gather: y[i] = x[map.source(i)], or fill.
template <class T>
struct gather {
    const T* x;
    T* y;
    gather_map map;
    double fill;
    MEMO_HD void operator()(index_t i) const {
        const index_t s = map.source(i);
        y[i] = s < 0 ? static_cast<T>(fill) : x[s];
    }
};

/// A scatter into a part of a larger tensor: element i of x goes to y at x's coordinates shifted
/// by `offset` along `axis` (Concatenate, one input at a time).
template <class T>
struct place {
    const T* x;
    T* y;
    shape in, out;
    int axis;
    index_t offset;
    MEMO_HD void operator()(index_t i) const {
        index_t c[max_rank];
        in.coords(i, c);
        c[axis] += offset;
        index_t at = 0;
        for (int d = 0; d < out.rank; ++d) at = at * out.dims[d] + c[d];
        y[at] = x[i];
    }
};

/// Element-wise functions of one value; p0..p2 are their parameters.
enum class unary_fn : unsigned char {
    identity,
    relu,
    tanh,
    sigmoid,
    hard_sigmoid,
    elu,  // p0: alpha
    selu,
    softplus,
    softsign,
    exponential,
    leaky_relu,        // p0: alpha
    keras_relu,        // p0: negative_slope, p1: threshold, p2: max_value (NaN: none)
    thresholded_relu,  // p0: theta
    abs,
    square,
    scale_shift,  // x * p0 (rounded to T), + p1
    scale,        // x * p0
};

template <class A>
MEMO_HD A relu0(A x) {
    return x < A(0) ? A(0) : x;  // NaN passes through, as in TensorFlow
}

/// f(x) in A, as the reference interpreter computes it (reference/array.hpp, act.hpp).
template <class A>
MEMO_HD A apply(unary_fn f, A x, A p0, A p1, A p2) {
    switch (f) {
        case unary_fn::identity: return x;
        case unary_fn::relu: return relu0(x);
        case unary_fn::tanh: return tanh(x);
        case unary_fn::sigmoid: return A(1) / (A(1) + exp(-x));
        case unary_fn::hard_sigmoid: {
            const A y = A(0.2) * x + A(0.5);
            return y < A(0) ? A(0) : (y > A(1) ? A(1) : y);
        }
        case unary_fn::elu: return x > A(0) ? x : p0 * expm1(x);
        case unary_fn::selu: return A(1.0507009873554805) * (x > A(0) ? x : A(1.6732632423543772) * expm1(x));
        case unary_fn::softplus: return x > A(0) ? x + log1p(exp(-x)) : log1p(exp(x));
        case unary_fn::softsign: return x / (fabs(x) + A(1));
        case unary_fn::exponential: return exp(x);
        case unary_fn::leaky_relu: return x < A(0) ? p0 * x : x;
        case unary_fn::keras_relu: {
            A y = p1 != A(0) ? (x > p1 ? x : A(0)) : relu0(x);  // Keras 3 selects (see the reference's ReLU)
            if (p2 == p2) {                                     // a max_value
                const A top = p2 < A(0) ? A(0) : p2;
                y = y < A(0) ? A(0) : (y > top ? top : y);
            }
            return p0 != A(0) ? y - p0 * relu0(p1 - x) : y;
        }
        case unary_fn::thresholded_relu: return x * A(x > p0 ? 1 : 0);
        case unary_fn::abs: return fabs(x);
        case unary_fn::square: return x * x;
        case unary_fn::scale_shift: return x * p0 + p1;
        case unary_fn::scale: return x * p0;
    }
    return x;
}

/// y[i] = f(x[i]), optionally after adding a bias along the last axis (Dense, convolutions).
template <class T, class A>
struct unary {
    const T* x;
    T* y;
    unary_fn f;
    A p0 = 0, p1 = 0, p2 = 0;
    const T* bias = nullptr;  // indexed by (i / bias_inner) % bias_len
    index_t bias_len = 1, bias_inner = 1;
    MEMO_HD void operator()(index_t i) const {
        A v = static_cast<A>(x[i]);
        if (f == unary_fn::scale_shift) {  // the product is rounded to T before the shift is added
            y[i] = static_cast<T>(static_cast<A>(static_cast<T>(v * p0)) + p1);
            return;
        }
        if (bias) v = static_cast<A>(static_cast<T>(v + static_cast<A>(bias[(i / bias_inner) % bias_len])));
        y[i] = static_cast<T>(apply<A>(f, v, p0, p1, p2));
    }
};

/// Two-input element-wise functions (Keras merges fold left to right).
enum class binary_fn : unsigned char { add, subtract, multiply, maximum, minimum, add_scaled /* a + p * b */ };

template <class A>
MEMO_HD A apply(binary_fn f, A a, A b, A p) {
    switch (f) {
        case binary_fn::add: return a + b;
        case binary_fn::subtract: return a - b;
        case binary_fn::multiply: return a * b;
        case binary_fn::maximum: return a < b || b != b ? b : a;  // NaN wins either way round
        case binary_fn::minimum: return b < a || b != b ? b : a;
        case binary_fn::add_scaled: return a + p * b;
    }
    return a;
}

template <class T, class A>
struct binary {
    const T* a;
    const T* b;
    T* y;
    binary_fn f;
    A p = 0;
    MEMO_HD void operator()(index_t i) const { y[i] = static_cast<T>(apply<A>(f, static_cast<A>(a[i]), static_cast<A>(b[i]), p)); }
};

/// Every `stride`-th element set to `value` (CustomInjectLayer: NaN or an infinity).
template <class T>
struct inject {
    T* y;
    index_t stride;
    double value;
    MEMO_HD void operator()(index_t i) const {
        if (i % stride == 0) y[i] = static_cast<T>(value);
    }
};

/// Pooling of a channels-first tensor (B, C, s...) with up to three spatial axes, TF's way: the
/// window starts at o * stride - pad_before; max ignores what lies outside the input (as padding
/// with -inf would), average divides by the count of elements inside it.
struct window {
    int n = 0;  // spatial axes
    index_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
    MEMO_HD index_t in_count() const { return in[0] * in[1] * in[2]; }
    MEMO_HD index_t out_count() const { return out[0] * out[1] * out[2]; }
};

template <class T, class A>
struct pool {
    const T* x;
    T* y;
    window w;
    bool max;
    MEMO_HD void operator()(index_t i) const {
        const index_t plane = i / w.out_count(), at = i % w.out_count();
        const index_t o0 = at / (w.out[1] * w.out[2]), o1 = at / w.out[2] % w.out[1], o2 = at % w.out[2];
        const T* p = x + plane * w.in_count();
        A best = 0, sum = 0;
        index_t count = 0;
        for (index_t a = 0; a < w.k[0]; ++a)
            for (index_t b = 0; b < w.k[1]; ++b)
                for (index_t c = 0; c < w.k[2]; ++c) {
                    const index_t i0 = o0 * w.stride[0] - w.pad[0] + a, i1 = o1 * w.stride[1] - w.pad[1] + b, i2 = o2 * w.stride[2] - w.pad[2] + c;
                    if (i0 < 0 || i0 >= w.in[0] || i1 < 0 || i1 >= w.in[1] || i2 < 0 || i2 >= w.in[2]) continue;
                    const A v = static_cast<A>(p[(i0 * w.in[1] + i1) * w.in[2] + i2]);
                    if (count == 0 || v > best || v != v) best = best != best ? best : v;  // NaN wins
                    sum += v;
                    ++count;
                }
        y[i] = static_cast<T>(max ? best : (count ? sum / A(count) : A(0)));
    }
};

/// What long sums (a plane's, a row's statistics) accumulate in: double for every dtype, so that
/// a sum over tens of thousands of float32 values, added one after the other by one thread, stays
/// as close as the other libraries' tree reductions (the reference sums float32 in double too).
using sum_t = double;

/// Reduction of each (b, c) plane of a channels-first tensor to one value (global pooling).
template <class T, class A>
struct plane_reduce {
    const T* x;
    T* y;
    index_t plane;
    bool max;
    MEMO_HD void operator()(index_t i) const {
        const T* p = x + i * plane;
        A best = static_cast<A>(p[0]);
        sum_t sum = 0;
        for (index_t k = 0; k < plane; ++k) {
            const A v = static_cast<A>(p[k]);
            if (v > best || v != v) best = best != best ? best : v;
            sum += static_cast<sum_t>(v);
        }
        y[i] = static_cast<T>(max ? best : static_cast<A>(sum / static_cast<sum_t>(plane)));
    }
};

/// A convolution of a channels-first tensor (B, C, s...) with a kernel (M, C / groups, k...), as
/// cuDNN defines it (cross-correlation, symmetric zero padding `pad` per axis): the host's stand-in
/// for cuDNN's, so that the plan around it is tested where there is no GPU.
template <class T, class A>
struct conv {
    const T* x;
    const T* k;
    T* y;
    window w;
    index_t channels, filters, groups;
    MEMO_HD void operator()(index_t i) const {
        const index_t at = i % w.out_count(), m = i / w.out_count() % filters, b = i / (w.out_count() * filters);
        const index_t o0 = at / (w.out[1] * w.out[2]), o1 = at / w.out[2] % w.out[1], o2 = at % w.out[2];
        const index_t per_group = channels / groups, g = m / (filters / groups);
        A sum = 0;
        for (index_t cc = 0; cc < per_group; ++cc) {
            const index_t c = g * per_group + cc;
            const T* p = x + (b * channels + c) * w.in_count();
            const T* q = k + (m * per_group + cc) * w.k[0] * w.k[1] * w.k[2];
            for (index_t a0 = 0; a0 < w.k[0]; ++a0)
                for (index_t a1 = 0; a1 < w.k[1]; ++a1)
                    for (index_t a2 = 0; a2 < w.k[2]; ++a2) {
                        const index_t i0 = o0 * w.stride[0] - w.pad[0] + a0 * w.dilation[0], i1 = o1 * w.stride[1] - w.pad[1] + a1 * w.dilation[1],
                                      i2 = o2 * w.stride[2] - w.pad[2] + a2 * w.dilation[2];
                        if (i0 < 0 || i0 >= w.in[0] || i1 < 0 || i1 >= w.in[1] || i2 < 0 || i2 >= w.in[2]) continue;
                        sum += static_cast<A>(p[(i0 * w.in[1] + i1) * w.in[2] + i2]) * static_cast<A>(q[(a0 * w.k[1] + a1) * w.k[2] + a2]);
                    }
        }
        y[i] = static_cast<T>(sum);
    }
};

/// A transposed convolution of a channels-first tensor (B, C, s...) with a kernel (C, M, k...):
/// input element i, tap j lands on output i * stride + j * dilation (the full output, no
/// cropping), as cuDNN's backward-data convolution computes it; the host's stand-in for cuDNN's.
template <class T, class A>
struct conv_transpose {
    const T* x;
    const T* k;
    T* y;
    window w;  // in: the input's spatial dims, out: the full output's
    index_t channels, filters;
    MEMO_HD void operator()(index_t i) const {
        const index_t at = i % w.out_count(), m = i / w.out_count() % filters, b = i / (w.out_count() * filters);
        const index_t o[3] = {at / (w.out[1] * w.out[2]), at / w.out[2] % w.out[1], at % w.out[2]};
        A sum = 0;
        for (index_t c = 0; c < channels; ++c) {
            const T* p = x + (b * channels + c) * w.in_count();
            const T* q = k + (c * filters + m) * w.k[0] * w.k[1] * w.k[2];
            for (index_t a0 = 0; a0 < w.k[0]; ++a0)
                for (index_t a1 = 0; a1 < w.k[1]; ++a1)
                    for (index_t a2 = 0; a2 < w.k[2]; ++a2) {
                        const index_t a[3] = {a0, a1, a2};
                        index_t src[3];
                        bool inside = true;
                        for (int d = 0; d < 3 && inside; ++d) {
                            const index_t r = o[d] - a[d] * w.dilation[d];
                            inside = r >= 0 && r % w.stride[d] == 0 && r / w.stride[d] < w.in[d];
                            src[d] = inside ? r / w.stride[d] : 0;
                        }
                        if (inside)
                            sum += static_cast<A>(p[(src[0] * w.in[1] + src[1]) * w.in[2] + src[2]]) * static_cast<A>(q[(a0 * w.k[1] + a1) * w.k[2] + a2]);
                    }
        }
        y[i] = static_cast<T>(sum);
    }
};

/// Statistics along an axis of length `len` with `inner` elements after it: one row per
/// (outer, inner) pair, its elements `inner` apart.
struct rows {
    index_t len = 1, inner = 1;
    MEMO_HD index_t base(index_t row) const { return row / inner * len * inner + row % inner; }
};

/// Softmax along the axis: the host's stand-in for cuDNN's (and the reference's formula).
template <class T, class A>
struct softmax {
    const T* x;
    T* y;
    rows r;
    MEMO_HD void operator()(index_t row) const {
        const index_t b = r.base(row);
        A top = static_cast<A>(x[b]);
        for (index_t k = 1; k < r.len; ++k) top = top > static_cast<A>(x[b + k * r.inner]) ? top : static_cast<A>(x[b + k * r.inner]);
        A sum = 0;
        for (index_t k = 0; k < r.len; ++k) sum += exp(static_cast<A>(x[b + k * r.inner]) - top);
        for (index_t k = 0; k < r.len; ++k) y[b + k * r.inner] = static_cast<T>(exp(static_cast<A>(x[b + k * r.inner]) - top) / sum);
    }
};

/// Inference batch normalisation along the axis: (x - mean) / sqrt(var + eps) * gamma + beta,
/// each statistic optional (null: 0 for mean and beta, 1 for var and gamma).
template <class T, class A>
struct batch_norm {
    const T* x;
    T* y;
    const T *gamma, *beta, *mean, *var;
    index_t len, inner;
    A eps;
    MEMO_HD void operator()(index_t i) const {
        const index_t c = i / inner % len;
        const A m = mean ? static_cast<A>(mean[c]) : A(0), v = var ? static_cast<A>(var[c]) : A(1);
        const A g = gamma ? static_cast<A>(gamma[c]) : A(1), b = beta ? static_cast<A>(beta[c]) : A(0);
        y[i] = static_cast<T>((static_cast<A>(x[i]) - m) / sqrt(v + eps) * g + b);
    }
};

/// Layer normalisation of each row: (x - mean) / sqrt(var + eps) * gamma[k] + beta[k].
template <class T, class A>
struct layer_norm {
    const T* x;
    T* y;
    const T *gamma, *beta;
    rows r;
    A eps;
    MEMO_HD void operator()(index_t row) const {
        const index_t b = r.base(row);
        sum_t total = 0, squares = 0;
        for (index_t k = 0; k < r.len; ++k) total += static_cast<sum_t>(static_cast<A>(x[b + k * r.inner]));
        const A mean = static_cast<A>(total / static_cast<sum_t>(r.len));
        for (index_t k = 0; k < r.len; ++k) {
            const A d = static_cast<A>(x[b + k * r.inner]) - mean;
            squares += static_cast<sum_t>(d * d);
        }
        const A var = static_cast<A>(squares / static_cast<sum_t>(r.len));
        const A inv = A(1) / sqrt(var + eps);
        for (index_t k = 0; k < r.len; ++k) {
            const A g = gamma ? static_cast<A>(gamma[k]) : A(1), bb = beta ? static_cast<A>(beta[k]) : A(0);
            y[b + k * r.inner] = static_cast<T>((static_cast<A>(x[b + k * r.inner]) - mean) * inv * g + bb);
        }
    }
};

/// PReLU: relu(x) - alpha * relu(-x), alpha over a sample's elements (its shared axes of size 1).
template <class T, class A>
struct prelu {
    const T* x;
    T* y;
    const T* alpha;
    gather_map at;  // from an element of the batch to alpha's element
    MEMO_HD void operator()(index_t i) const {
        const A v = static_cast<A>(x[i]), a = static_cast<A>(alpha[at.source(i)]);
        y[i] = static_cast<T>(relu0(v) - a * relu0(-v));
    }
};

/// The product of row-major (M, K) and (K, N), or (N, K) transposed, over `batch` consecutive
/// matrices: the host's stand-in for cuBLAS.
template <class T, class A>
struct matmul {
    const T* a;
    const T* b;
    T* y;
    index_t m, k, n;
    bool b_transposed = false;
    MEMO_HD void operator()(index_t i) const {
        const index_t s = i / (m * n), r = i / n % m, c = i % n;
        const T* as = a + s * m * k;
        const T* bs = b + s * k * n;
        A sum = 0;
        for (index_t j = 0; j < k; ++j) sum += static_cast<A>(as[r * k + j]) * static_cast<A>(b_transposed ? bs[c * k + j] : bs[j * n + c]);
        y[i] = static_cast<T>(sum);
    }
};

/// Row `row` of `len` consecutive values over its L2 norm, the squared norm at least 1e-12 (Keras'
/// l2_normalize, as Dot's normalize calls it).
template <class T, class A>
struct l2_normalize {
    const T* x;
    T* y;
    index_t len;
    MEMO_HD void operator()(index_t row) const {
        const T* p = x + row * len;
        sum_t squares = 0;
        for (index_t j = 0; j < len; ++j) squares += static_cast<sum_t>(static_cast<A>(p[j]) * static_cast<A>(p[j]));
        const A sq = static_cast<A>(squares);
        const A inv = A(1) / sqrt(sq > A(1e-12) ? sq : A(1e-12));
        for (index_t j = 0; j < len; ++j) y[row * len + j] = static_cast<T>(static_cast<A>(p[j]) * inv);
    }
};

/// LocallyConnected (Keras' implementation 1): output position o of a valid window has a kernel
/// of its own, (positions, taps * channels, filters), its feature axis tap-major (channels_last)
/// or channel-major (channels_first). x is channels-last (B, in..., C), y (B, out..., filters).
template <class T, class A>
struct locally_connected {
    const T* x;
    const T* k;
    T* y;
    window w;
    index_t channels, filters;
    bool channel_major;
    MEMO_HD void operator()(index_t i) const {
        const index_t f = i % filters, o = i / filters % w.out_count(), b = i / (filters * w.out_count());
        const index_t o0 = o / (w.out[1] * w.out[2]), o1 = o / w.out[2] % w.out[1], o2 = o % w.out[2];
        const index_t taps = w.k[0] * w.k[1] * w.k[2];
        const T* ks = k + o * taps * channels * filters;
        A sum = 0;
        for (index_t a0 = 0; a0 < w.k[0]; ++a0)
            for (index_t a1 = 0; a1 < w.k[1]; ++a1)
                for (index_t a2 = 0; a2 < w.k[2]; ++a2) {
                    const index_t tap = (a0 * w.k[1] + a1) * w.k[2] + a2;
                    const index_t pos = ((o0 * w.stride[0] + a0) * w.in[1] + o1 * w.stride[1] + a1) * w.in[2] + o2 * w.stride[2] + a2;
                    const T* xs = x + (b * w.in_count() + pos) * channels;
                    for (index_t c = 0; c < channels; ++c)
                        sum += static_cast<A>(xs[c]) * static_cast<A>(ks[(channel_major ? c * taps + tap : tap * channels + c) * filters + f]);
                }
        y[i] = static_cast<T>(sum);
    }
};

/// One step of a ConvLSTM's cell (Keras' ConvLSTMCell), per element (b, f, p) of the channels-first
/// state (B, F, P): the gate sums of the input's and the state's convolutions (B, 4F, P, gates
/// i, f, c, o) and the bias, each rounded to T and activated, then c' = f c + i act(z_c) and
/// h' = o act(c'), rounded where the reference rounds. A null zh or c is a zero state (the first step).
template <class T, class A>
struct conv_lstm_cell {
    const T *zx, *zh, *bias, *c;
    T *h_out, *c_out;
    index_t filters, positions;
    unary_fn act, ract;
    A act_p, ract_p;  // elu's alpha (1) where the activation is elu
    MEMO_HD A gate(index_t b, index_t g, index_t f, index_t p) const {
        const index_t at = (b * 4 * filters + g * filters + f) * positions + p;
        A z = static_cast<A>(zx[at]) + (zh ? static_cast<A>(zh[at]) : A(0)) + (bias ? static_cast<A>(bias[g * filters + f]) : A(0));
        z = static_cast<A>(static_cast<T>(z));
        return g == 2 ? static_cast<A>(static_cast<T>(apply<A>(act, z, act_p, A(0), A(0))))
                      : static_cast<A>(static_cast<T>(apply<A>(ract, z, ract_p, A(0), A(0))));
    }
    MEMO_HD void operator()(index_t i) const {
        const index_t p = i % positions, f = i / positions % filters, b = i / (positions * filters);
        const A in = gate(b, 0, f, p), forget = gate(b, 1, f, p), cand = gate(b, 2, f, p), out = gate(b, 3, f, p);
        const T next = static_cast<T>(forget * (c ? static_cast<A>(c[i]) : A(0)) + in * cand);
        c_out[i] = next;
        h_out[i] = static_cast<T>(out * static_cast<A>(static_cast<T>(apply<A>(act, static_cast<A>(next), act_p, A(0), A(0)))));
    }
};

/// Where output coordinate `out` of a bilinear resize from `in_size` to `out_size` reads: TF2's
/// half-pixel centres, the two neighbours clamped to the input.
struct lerp_at {
    index_t lower, upper;
    double weight;
    MEMO_HD static lerp_at of(index_t out, index_t in_size, index_t out_size) {
        const double in = (static_cast<double>(out) + 0.5) * static_cast<double>(in_size) / static_cast<double>(out_size) - 0.5;
        const double lo = floor(in), hi = ceil(in);
        return {lo < 0 ? 0 : static_cast<index_t>(lo), static_cast<index_t>(hi) > in_size - 1 ? in_size - 1 : static_cast<index_t>(hi), in - lo};
    }
};

/// Bilinear resizing of axes `axis` and `axis + 1` (UpSampling2D's interpolation="bilinear").
template <class T, class A>
struct bilinear {
    const T* x;
    T* y;
    shape in, out;
    int axis;
    MEMO_HD void operator()(index_t i) const {
        index_t c[max_rank];
        out.coords(i, c);
        const lerp_at r = lerp_at::of(c[axis], in.dims[axis], out.dims[axis]), h = lerp_at::of(c[axis + 1], in.dims[axis + 1], out.dims[axis + 1]);
        index_t base = 0;
        for (int d = 0; d < in.rank; ++d) base += (d == axis || d == axis + 1 ? 0 : c[d]) * in.stride(d);
        const index_t sr = in.stride(axis), sc = in.stride(axis + 1);
        const A wx = static_cast<A>(h.weight), wy = static_cast<A>(r.weight);
        const A tl = static_cast<A>(x[base + r.lower * sr + h.lower * sc]), tr = static_cast<A>(x[base + r.lower * sr + h.upper * sc]);
        const A bl = static_cast<A>(x[base + r.upper * sr + h.lower * sc]), br = static_cast<A>(x[base + r.upper * sr + h.upper * sc]);
        const A top = tl + (tr - tl) * wx, bottom = bl + (br - bl) * wx;
        y[i] = static_cast<T>(top + (bottom - top) * wy);
    }
};

}  // namespace memo::cuda::kernels
