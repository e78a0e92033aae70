#pragma once
// tiny_nn: a small float32 neural-network library standing in for "your DL library". It knows
// nothing of memo: its own tensor, its own weight layouts (PyTorch's: a dense weight is
// (out, in), a conv1d weight (out, in, kernel)), channels-last activations, explicit padding
// amounts, and errors as exceptions.
//
// It carries one deliberate bug, for the example to find: with options::fast_softmax, softmax
// takes a "fast path" whose sum skips the last element of every row (an off-by-one in a loop
// bound). Without that option tiny_nn is correct.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace tiny {

/// A dense row-major float tensor, batch first.
struct tensor {
    std::vector<long> shape;
    std::vector<float> data;

    tensor() = default;
    explicit tensor(std::vector<long> s, float fill = 0.0f) : shape(std::move(s)), data(count(shape), fill) {}

    static std::size_t count(const std::vector<long>& s) {
        std::size_t n = 1;
        for (long d : s) n *= static_cast<std::size_t>(d);
        return n;
    }
    int rank() const noexcept { return static_cast<int>(shape.size()); }
    long dim(int i) const { return shape.at(static_cast<std::size_t>(i < 0 ? i + rank() : i)); }
    std::size_t size() const noexcept { return data.size(); }
    /// Elements from axis `axis` (exclusive) to the end: the stride of that axis.
    std::size_t stride(int axis) const {
        std::size_t s = 1;
        for (int d = axis + 1; d < rank(); ++d) s *= static_cast<std::size_t>(shape[static_cast<std::size_t>(d)]);
        return s;
    }
};

struct options {
    /// The new softmax kernel: one pass fewer. Has the planted off-by-one bug (see softmax()).
    bool fast_softmax = false;
};

enum class activation { linear, relu, sigmoid, tanh, softmax };

namespace detail {
inline void check(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("tiny_nn: " + what);
}
}  // namespace detail

/// Leaky, clipped, thresholded ReLU: x > threshold ? min(x, max) : slope * (x - threshold).
inline tensor relu(tensor x, float slope = 0.0f, float threshold = 0.0f, float max = std::numeric_limits<float>::infinity()) {
    for (float& v : x.data) v = v > threshold ? std::min(v, max) : (slope != 0.0f ? slope * (v - threshold) : 0.0f);
    return x;
}

inline tensor sigmoid(tensor x) {
    for (float& v : x.data) v = 1.0f / (1.0f + std::exp(-v));
    return x;
}

inline tensor tanh(tensor x) {
    for (float& v : x.data) v = std::tanh(v);
    return x;
}

/// Softmax along `axis` (negative counts from the end).
inline tensor softmax(tensor x, int axis, const options& o = {}) {
    if (axis < 0) axis += x.rank();
    detail::check(axis >= 0 && axis < x.rank(), "softmax axis out of range");
    const std::size_t len = static_cast<std::size_t>(x.dim(axis)), inner = x.stride(axis);
    const std::size_t outer = x.size() / std::max<std::size_t>(1, len * inner);
    for (std::size_t a = 0; a < outer; ++a)
        for (std::size_t b = 0; b < inner; ++b) {
            float* row = &x.data[a * len * inner + b];
            float top = row[0];
            for (std::size_t k = 1; k < len; ++k) top = std::max(top, row[k * inner]);
            float sum = 0.0f;
            if (o.fast_softmax) {
                // PLANTED BUG: exponentiate and sum in one pass, but the bound should be k < len:
                // the last element is exponentiated below yet never added to the sum.
                for (std::size_t k = 0; k + 1 < len; ++k) sum += row[k * inner] = std::exp(row[k * inner] - top);
                row[(len - 1) * inner] = std::exp(row[(len - 1) * inner] - top);
            } else {
                for (std::size_t k = 0; k < len; ++k) sum += row[k * inner] = std::exp(row[k * inner] - top);
            }
            for (std::size_t k = 0; k < len; ++k) row[k * inner] /= sum;
        }
    return x;
}

inline tensor apply(tensor x, activation a, const options& o = {}) {
    switch (a) {
        case activation::linear: return x;
        case activation::relu: return relu(std::move(x));
        case activation::sigmoid: return sigmoid(std::move(x));
        case activation::tanh: return tanh(std::move(x));
        case activation::softmax: return softmax(std::move(x), -1, o);
    }
    return x;
}

/// y = x w^T + b over the last axis of x; w is (out, in), b is (out) or empty.
inline tensor dense(const tensor& x, const tensor& w, const tensor& b) {
    detail::check(w.rank() == 2 && x.dim(-1) == w.dim(1), "dense: input does not match the weight");
    const long in = w.dim(1), out = w.dim(0);
    const long rows = static_cast<long>(x.size()) / std::max(1L, in);
    auto shape = x.shape;
    shape.back() = out;
    tensor y(shape);
    for (long r = 0; r < rows; ++r)
        for (long u = 0; u < out; ++u) {
            float s = b.data.empty() ? 0.0f : b.data[static_cast<std::size_t>(u)];
            for (long k = 0; k < in; ++k) s += x.data[static_cast<std::size_t>(r * in + k)] * w.data[static_cast<std::size_t>(u * in + k)];
            y.data[static_cast<std::size_t>(r * out + u)] = s;
        }
    return y;
}

struct conv1d_options {
    long stride = 1, dilation = 1, pad_before = 0, pad_after = 0;  // zero padding, in elements
};

/// x (batch, length, in) channels last; w (out, in, kernel); b (out) or empty.
inline tensor conv1d(const tensor& x, const tensor& w, const tensor& b, conv1d_options o) {
    detail::check(x.rank() == 3 && w.rank() == 3 && x.dim(2) == w.dim(1), "conv1d: input does not match the weight");
    const long n = x.dim(0), len = x.dim(1), in = x.dim(2), out = w.dim(0), k = w.dim(2);
    const long reach = (k - 1) * o.dilation + 1;
    const long out_len = (len + o.pad_before + o.pad_after - reach) / o.stride + 1;
    detail::check(out_len > 0, "conv1d: the kernel is longer than the padded input");
    tensor y({n, out_len, out});
    for (long s = 0; s < n; ++s)
        for (long t = 0; t < out_len; ++t)
            for (long f = 0; f < out; ++f) {
                float acc = b.data.empty() ? 0.0f : b.data[static_cast<std::size_t>(f)];
                for (long tap = 0; tap < k; ++tap) {
                    const long pos = t * o.stride + tap * o.dilation - o.pad_before;
                    if (pos < 0 || pos >= len) continue;  // zero padding
                    for (long c = 0; c < in; ++c)
                        acc += x.data[static_cast<std::size_t>((s * len + pos) * in + c)] * w.data[static_cast<std::size_t>((f * in + c) * k + tap)];
                }
                y.data[static_cast<std::size_t>((s * out_len + t) * out + f)] = acc;
            }
    return y;
}

/// The element-wise sum of tensors of one shape.
inline tensor add(const std::vector<const tensor*>& xs) {
    detail::check(!xs.empty(), "add: no inputs");
    tensor y = *xs[0];
    for (std::size_t i = 1; i < xs.size(); ++i) {
        detail::check(xs[i]->shape == y.shape, "add: inputs have different shapes");
        for (std::size_t e = 0; e < y.size(); ++e) y.data[e] += xs[i]->data[e];
    }
    return y;
}

inline tensor reshape(tensor x, std::vector<long> shape) {
    detail::check(tensor::count(shape) == x.size(), "reshape: element counts differ");
    x.shape = std::move(shape);
    return x;
}

/// A window of x: out[i...] = x[i... + offset...], `value` where that falls outside x. A negative
/// offset pads, a positive one crops; `shape` is the window's shape.
inline tensor window(const tensor& x, const std::vector<long>& offset, std::vector<long> shape, float value = 0.0f) {
    detail::check(offset.size() == x.shape.size() && shape.size() == x.shape.size(), "window: rank mismatch");
    tensor y(std::move(shape), value);
    std::vector<long> idx(y.shape.size(), 0);
    for (std::size_t e = 0; e < y.size(); ++e) {
        std::size_t src = 0;
        bool inside = true;
        for (std::size_t d = 0; d < idx.size(); ++d) {
            const long i = idx[d] + offset[d];
            inside = inside && i >= 0 && i < x.shape[d];
            src = src * static_cast<std::size_t>(x.shape[d]) + static_cast<std::size_t>(std::max(0L, i));
        }
        if (inside) y.data[e] = x.data[src];
        for (std::size_t d = idx.size(); d-- > 0;) {  // next index, row-major
            if (++idx[d] < y.shape[d]) break;
            idx[d] = 0;
        }
    }
    return y;
}

}  // namespace tiny
