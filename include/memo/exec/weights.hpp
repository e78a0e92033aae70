#pragma once
// Weights as pure functions of (model seed, node, slot): every backend materialises the same
// numbers, in Keras' layouts (Conv2D kernel (kh, kw, in, filters), Dense kernel (in, units), LSTM
// gates i, f, c, o; GRU z, r, h), drawn by each weight's Keras initializer with Keras' fan
// arithmetic, then edited by the model's LEMON weight edits.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "../core/model.hpp"
#include "../core/rng.hpp"
#include "../layers/common.hpp"
#include "tensor.hpp"

namespace memo {

/// One weight of a node: its Keras name ("kernel", "bias", "forward_kernel", ...) and values.
struct weight {
    std::string name;
    tensor value;
};

/// What a weight is before it is drawn: its name, its dimensions in Keras' layout, its
/// initializer, and (an LSTM bias with unit_forget_bias) how many forget-gate units start at one.
struct weight_spec {
    std::string name;
    std::vector<std::int64_t> dims;
    std::string_view initializer;
    std::int64_t forget_bias_units = 0;
};

namespace detail::init {

/// Keras' _compute_fans.
inline void fans(const std::vector<std::int64_t>& d, double& fan_in, double& fan_out) {
    if (d.empty()) { fan_in = fan_out = 1; return; }
    if (d.size() == 1) { fan_in = fan_out = static_cast<double>(d[0]); return; }
    if (d.size() == 2) { fan_in = static_cast<double>(d[0]); fan_out = static_cast<double>(d[1]); return; }
    double receptive = 1;
    for (std::size_t i = 0; i + 2 < d.size(); ++i) receptive *= static_cast<double>(d[i]);
    fan_in = static_cast<double>(d[d.size() - 2]) * receptive;
    fan_out = static_cast<double>(d.back()) * receptive;
}

inline double normal(rng& r) {
    // Box-Muller on two uniform draws; deterministic across platforms (no std::normal_distribution).
    const double u1 = 1.0 - r.unit(), u2 = r.unit();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}
inline double truncated(rng& r) {
    for (;;)
        if (const double z = normal(r); std::abs(z) <= 2.0) return z;
}

/// Orthogonal: Q of the QR decomposition of a normal matrix (rows = prod(d[:-1]), cols = d[-1]),
/// signs fixed by R's diagonal as Keras does; Gram-Schmidt on the smaller side.
inline void orthogonal(rng& r, tensor& t) {
    const std::int64_t cols = t.dims.empty() ? 1 : t.dims.back();
    const std::int64_t rows = cols ? t.size() / cols : 0;
    const bool tall = rows >= cols;
    const std::int64_t n = tall ? rows : cols, k = tall ? cols : rows;  // k orthonormal vectors of length n
    std::vector<double> v(static_cast<std::size_t>(n * k));
    for (auto& x : v) x = normal(r);
    for (std::int64_t j = 0; j < k; ++j) {
        double* vj = &v[static_cast<std::size_t>(j * n)];
        for (std::int64_t i = 0; i < j; ++i) {
            const double* vi = &v[static_cast<std::size_t>(i * n)];
            double dot = 0;
            for (std::int64_t e = 0; e < n; ++e) dot += vi[e] * vj[e];
            for (std::int64_t e = 0; e < n; ++e) vj[e] -= dot * vi[e];
        }
        double norm = 0;
        for (std::int64_t e = 0; e < n; ++e) norm += vj[e] * vj[e];
        norm = std::sqrt(norm);
        for (std::int64_t e = 0; e < n; ++e) vj[e] = norm > 0 ? vj[e] / norm : 0.0;
    }
    for (std::int64_t a = 0; a < rows; ++a)
        for (std::int64_t b = 0; b < cols; ++b)
            t[a * cols + b] = tall ? v[static_cast<std::size_t>(b * n + a)] : v[static_cast<std::size_t>(a * n + b)];
}

}  // namespace detail::init

/// Fills `t` by the Keras initializer `name` (its default arguments), drawing from `r`.
inline void initialize(std::string_view name, tensor& t, rng& r) {
    using namespace detail::init;
    double fi = 1, fo = 1;
    fans(t.dims, fi, fo);
    auto each = [&](auto draw) {
        for (auto& x : t.data) x = draw();
    };
    // Keras' truncated normal has std / 0.8796... so the truncated distribution keeps the variance.
    constexpr double trunc_fix = 0.87962566103423978;
    if (name == "Zeros" || name == "zeros" || name == "Constant") each([] { return 0.0; });  // Constant() is value=0
    else if (name == "Ones" || name == "ones") each([] { return 1.0; });
    else if (name == "RandomNormal") each([&] { return 0.05 * normal(r); });
    else if (name == "RandomUniform") each([&] { return r.uniform_real(-0.05, 0.05); });
    else if (name == "TruncatedNormal") each([&] { return 0.05 * truncated(r); });
    else if (name == "VarianceScaling") each([&] { return std::sqrt(1.0 / std::max(1.0, fi)) / trunc_fix * truncated(r); });
    else if (name == "glorot_normal") each([&] { return std::sqrt(2.0 / std::max(1.0, fi + fo)) / trunc_fix * truncated(r); });
    else if (name == "he_normal") each([&] { return std::sqrt(2.0 / std::max(1.0, fi)) / trunc_fix * truncated(r); });
    else if (name == "lecun_normal") each([&] { return std::sqrt(1.0 / std::max(1.0, fi)) / trunc_fix * truncated(r); });
    else if (name == "he_uniform") { const double l = std::sqrt(6.0 / std::max(1.0, fi)); each([&] { return r.uniform_real(-l, l); }); }
    else if (name == "lecun_uniform") { const double l = std::sqrt(3.0 / std::max(1.0, fi)); each([&] { return r.uniform_real(-l, l); }); }
    else if (name == "Orthogonal") orthogonal(r, t);
    else if (name == "Identity") {
        // Keras' Identity takes 2-D shapes; higher ranks are viewed as (prod(d[:-1]), d[-1]).
        const std::int64_t cols = t.dims.empty() ? 1 : t.dims.back();
        for (std::int64_t i = 0; i < t.size(); ++i) t[i] = (i / cols) == (i % cols) ? 1.0 : 0.0;
    } else {  // glorot_uniform, Keras' default
        const double l = std::sqrt(6.0 / std::max(1.0, fi + fo));
        each([&] { return r.uniform_real(-l, l); });
    }
}

namespace detail::weights {

inline std::uint64_t stream(std::uint64_t seed, std::uint64_t node, std::uint64_t slot) {
    std::uint64_t x = seed ^ (0x9e3779b97f4a7c15ULL * (node + 1)) ^ (0xc2b2ae3d27d4eb4fULL * (slot + 1));
    splitmix64(x);
    return splitmix64(x);
}

struct maker {
    const model& m;
    int index;
    std::vector<weight_spec> out;

    const node& n() const { return m[index]; }
    std::string_view init(std::string_view param, std::string_view fallback) const {
        const int i = n().layer->param_index(param);
        return i < 0 ? fallback : as_str(n().params[static_cast<std::size_t>(i)]);
    }
    void add(std::string name, std::vector<std::int64_t> dims, std::string_view initializer) {
        out.push_back({std::move(name), std::move(dims), initializer, 0});
    }
    /// LSTM's bias with unit_forget_bias: the forget gate's quarter is ones.
    void forget_bias_ones(std::int64_t units) { out.back().forget_bias_units = units; }
};

inline bool flag(const node& n, std::string_view p, bool fallback) {
    const int i = n.layer->param_index(p);
    return i < 0 ? fallback : as_bool(n.params[static_cast<std::size_t>(i)]);
}
inline std::int64_t integer(const node& n, std::string_view p, std::int64_t fallback) {
    const int i = n.layer->param_index(p);
    return i < 0 ? fallback : as_int(n.params[static_cast<std::size_t>(i)]);
}
inline std::vector<std::int64_t> kernel(const node& n, int N) {
    const auto k = as_ints(n.params[static_cast<std::size_t>(n.layer->param_index("kernel_size"))], N);
    return std::vector<std::int64_t>(k.begin(), k.end());
}
inline std::vector<std::int64_t> cat(std::vector<std::int64_t> a, std::initializer_list<std::int64_t> b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

/// A recurrent cell's kernel, recurrent kernel and bias, with `gates` gates.
inline void cell(maker& mk, std::string prefix, std::int64_t gates, std::int64_t in, std::int64_t units, bool bias,
                 bool forget_bias, bool reset_after) {
    mk.add(prefix + "kernel", {in, gates * units}, mk.init("kernel_initializer", "glorot_uniform"));
    mk.add(prefix + "recurrent_kernel", {units, gates * units}, mk.init("recurrent_initializer", "Orthogonal"));
    if (!bias) return;
    if (reset_after) mk.add(prefix + "bias", {2, gates * units}, mk.init("bias_initializer", "Zeros"));
    else mk.add(prefix + "bias", {gates * units}, mk.init("bias_initializer", "Zeros"));
    if (forget_bias) mk.forget_bias_ones(units);
}

/// Applies LEMON's weight edits to node `index`'s weights. A "neuron" is an output unit: the last
/// axis of every weight, so its kernel column and its bias move together.
inline void apply_edits(const model& m, int index, std::vector<weight>& ws) {
    for (const auto& e : m.weight_edits) {
        if (e.node != index || ws.empty()) continue;
        rng r(e.seed);
        const std::int64_t units = ws[0].value.dims.empty() ? 1 : ws[0].value.dims.back();
        auto pick = [&](double fraction) {
            std::vector<std::int64_t> chosen;
            for (std::int64_t u = 0; u < units; ++u)
                if (r.chance(fraction)) chosen.push_back(u);
            if (chosen.empty() && units > 0) chosen.push_back(r.uniform(0, units - 1));
            return chosen;
        };
        auto on_unit = [&](std::int64_t u, auto f) {
            for (auto& w : ws) {
                auto& t = w.value;
                const std::int64_t last = t.dims.empty() ? 1 : t.dims.back();
                if (last != units) continue;
                for (std::int64_t i = u; i < t.size(); i += last) f(t[i]);
            }
        };
        switch (e.what) {
            case weight_edit::kind::gaussian_fuzz:
                for (auto& w : ws) {
                    double sum = 0, sq = 0;
                    for (double x : w.value.data) sum += x, sq += x * x;
                    const double mean = sum / static_cast<double>(std::max<std::int64_t>(1, w.value.size()));
                    const double sd = std::sqrt(std::max(0.0, sq / static_cast<double>(std::max<std::int64_t>(1, w.value.size())) - mean * mean));
                    for (auto& x : w.value.data) x += e.amount * sd * detail::init::normal(r);
                }
                break;
            case weight_edit::kind::block_neurons:
                for (auto u : pick(e.amount)) on_unit(u, [](double& x) { x = 0; });
                break;
            case weight_edit::kind::invert_activation:
                for (auto u : pick(e.amount)) on_unit(u, [](double& x) { x = -x; });
                break;
            case weight_edit::kind::switch_neurons:
                if (units >= 2) {
                    const std::int64_t a = r.uniform(0, units - 1), b = (a + 1 + r.uniform(0, units - 2)) % units;
                    for (auto& w : ws) {
                        auto& t = w.value;
                        const std::int64_t last = t.dims.empty() ? 1 : t.dims.back();
                        if (last != units) continue;
                        for (std::int64_t i = 0; i < t.size(); i += last) std::swap(t[i + a], t[i + b]);
                    }
                }
                break;
        }
    }
}

}  // namespace detail::weights

/// The weights of node `index` of `m`, undrawn, in Keras' order and layouts; empty for weightless
/// layers. The node's input shapes must be inferred. Layouts, by class:
///   Conv{1,2,3}D         kernel (k..., in, filters), bias (filters)
///   Conv{2,3}DTranspose  kernel (k..., filters, in), bias (filters)
///   SeparableConv{1,2}D  depthwise_kernel (k..., in, dm), pointwise_kernel (1..., in*dm, filters), bias
///   DepthwiseConv{1,2}D  depthwise_kernel (k..., in, dm), bias (in*dm)
///   Dense                kernel (in, units), bias (units)
///   LocallyConnected1D   kernel (out_len, k*in, filters), bias (out_len, filters)
///   LocallyConnected2D   kernel (oh*ow, kh*kw*in, filters), bias (oh, ow, filters)
///   BatchNormalization   gamma, beta, moving_mean, moving_variance (c) (gamma/beta only if scale/center)
///   LayerNormalization   gamma, beta (c)
///   PReLU                alpha (input sample shape, shared axis set to 1)
///   SimpleRNN/GRU/LSTM   kernel (in, g*u), recurrent_kernel (u, g*u), bias (g*u) or (2, 3u) for GRU reset_after
///   Bidirectional        forward_ and backward_ LSTM weights (use_bias, unit_forget_bias, Keras' defaults)
///   ConvLSTM{1,2,3}D     kernel (k..., in, 4f), recurrent_kernel (k..., f, 4f), bias (4f)
inline std::vector<weight_spec> weight_specs(const model& m, int index) {
    using namespace detail::weights;
    const node& n = m[index];
    if (n.inputs.empty()) return {};
    maker mk{m, index, {}};
    const shape& in = m[n.inputs[0]].out;
    const std::string_view cls = n.layer->name;
    const bool bias = flag(n, "use_bias", true);
    const bool first = n.layer->param_index("data_format") >= 0 &&
                       as_str(n.params[static_cast<std::size_t>(n.layer->param_index("data_format"))]) == "channels_first";
    const std::int64_t channels = in.rank() >= 2 ? (first ? in[1] : in.back()) : 0;
    const std::int64_t filters = integer(n, "filters", 0);
    const std::string_view kinit = mk.init("kernel_initializer", "glorot_uniform"), binit = mk.init("bias_initializer", "Zeros");

    if (cls == "Dense") {
        const std::int64_t units = integer(n, "units", 1);
        mk.add("kernel", {in.back(), units}, kinit);
        if (bias) mk.add("bias", {units}, binit);
    } else if (cls == "Conv1D" || cls == "Conv2D" || cls == "Conv3D") {
        mk.add("kernel", cat(kernel(n, in.rank() - 2), {channels, filters}), kinit);
        if (bias) mk.add("bias", {filters}, binit);
    } else if (cls == "Conv2DTranspose" || cls == "Conv3DTranspose") {
        mk.add("kernel", cat(kernel(n, in.rank() - 2), {filters, channels}), kinit);
        if (bias) mk.add("bias", {filters}, binit);
    } else if (cls == "SeparableConv1D" || cls == "SeparableConv2D") {
        const int N = in.rank() - 2;
        const std::int64_t dm = integer(n, "depth_multiplier", 1);
        mk.add("depthwise_kernel", cat(kernel(n, N), {channels, dm}), mk.init("depthwise_initializer", "glorot_uniform"));
        mk.add("pointwise_kernel", cat(std::vector<std::int64_t>(static_cast<std::size_t>(N), 1), {channels * dm, filters}),
               mk.init("pointwise_initializer", "glorot_uniform"));
        if (bias) mk.add("bias", {filters}, binit);
    } else if (cls == "DepthwiseConv1D" || cls == "DepthwiseConv2D") {
        const std::int64_t dm = integer(n, "depth_multiplier", 1);
        mk.add("depthwise_kernel", cat(kernel(n, in.rank() - 2), {channels, dm}), mk.init("depthwise_initializer", "glorot_uniform"));
        if (bias) mk.add("bias", {channels * dm}, binit);
    } else if (cls == "LocallyConnected1D" || cls == "LocallyConnected2D") {
        const int N = in.rank() - 2;
        const auto out = layers::spatial::of(n.out, first ? "channels_first" : "channels_last");
        std::int64_t positions = 1, volume = 1;
        for (int k = 0; k < N; ++k) positions *= out.sizes[k];
        for (auto k : kernel(n, N)) volume *= k;
        mk.add("kernel", {positions, volume * channels, filters}, kinit);
        if (bias) {
            std::vector<std::int64_t> b;
            for (int k = 0; k < N; ++k) b.push_back(out.sizes[k]);
            b.push_back(filters);
            mk.add("bias", b, binit);
        }
    } else if (cls == "BatchNormalization" || cls == "LayerNormalization") {
        const int axis = layers::normal_axis(integer(n, "axis", -1), in.rank());
        const std::int64_t c = axis < 0 ? 1 : in[axis];
        if (flag(n, "scale", true)) mk.add("gamma", {c}, mk.init("gamma_initializer", "Ones"));
        if (flag(n, "center", true)) mk.add("beta", {c}, mk.init("beta_initializer", "Zeros"));
        if (cls == "BatchNormalization") {
            mk.add("moving_mean", {c}, mk.init("moving_mean_initializer", "Zeros"));
            mk.add("moving_variance", {c}, mk.init("moving_variance_initializer", "Ones"));
        }
    } else if (cls == "PReLU") {
        auto dims = std::vector<std::int64_t>(in.sample().begin(), in.sample().end());
        const int i = n.layer->param_index("shared_axes");
        if (i >= 0 && !is_none(n.params[static_cast<std::size_t>(i)])) {
            // Keras: param_shape[axis - 1] = 1, so shared_axes=-1 is the second-to-last sample axis.
            const auto a = static_cast<std::int64_t>(dims.size()) + as_int(n.params[static_cast<std::size_t>(i)]) - 1;
            if (a >= 0 && a < static_cast<std::int64_t>(dims.size())) dims[static_cast<std::size_t>(a)] = 1;
        }
        mk.add("alpha", dims, mk.init("alpha_initializer", "Zeros"));
    } else if (cls == "SimpleRNN") {
        cell(mk, "", 1, in.back(), integer(n, "units", 1), bias, false, false);
    } else if (cls == "GRU") {
        cell(mk, "", 3, in.back(), integer(n, "units", 1), bias, false, flag(n, "reset_after", true));
    } else if (cls == "LSTM") {
        cell(mk, "", 4, in.back(), integer(n, "units", 1), bias, flag(n, "unit_forget_bias", true), false);
    } else if (cls == "Bidirectional") {
        const std::int64_t u = integer(n, "units", 1);
        cell(mk, "forward_", 4, in.back(), u, true, true, false);
        cell(mk, "backward_", 4, in.back(), u, true, true, false);
    } else if (cls.starts_with("ConvLSTM")) {
        const int N = in.rank() - 3;
        const std::int64_t c = first ? in[2] : in.back();
        mk.add("kernel", cat(kernel(n, N), {c, 4 * filters}), kinit);
        mk.add("recurrent_kernel", cat(kernel(n, N), {filters, 4 * filters}), mk.init("recurrent_initializer", "Orthogonal"));
        if (bias) {
            mk.add("bias", {4 * filters}, binit);
            if (flag(n, "unit_forget_bias", true)) mk.forget_bias_ones(filters);
        }
    }
    return std::move(mk.out);
}

/// Drawn weights kept for reuse: a backend runs mutant after mutant that share most of their
/// parent's weights, and drawing one can cost milliseconds (an Orthogonal initializer's QR). Holds
/// what an initializer drew from one stream into one shape, up to `max_elements` values in all
/// (then it starts over).
class weight_cache {
public:
    explicit weight_cache(std::size_t max_elements = std::size_t{1} << 22) : max_(max_elements) {}

    const tensor& draw(std::uint64_t stream, std::string_view initializer, const std::vector<std::int64_t>& dims) {
        key k{stream, std::string(initializer), dims};
        if (const auto it = kept_.find(k); it != kept_.end()) return it->second;
        tensor t(dims, dtype::float64);
        rng r(stream);
        initialize(initializer, t, r);
        if (elements_ + t.data.size() > max_) {
            kept_.clear();
            elements_ = 0;
        }
        elements_ += t.data.size();
        return kept_.emplace(std::move(k), std::move(t)).first->second;
    }

private:
    struct key {
        std::uint64_t stream;
        std::string initializer;
        std::vector<std::int64_t> dims;
        bool operator==(const key&) const = default;
    };
    struct key_hash {
        std::size_t operator()(const key& k) const noexcept {
            std::uint64_t h = k.stream ^ std::hash<std::string>{}(k.initializer);
            for (auto d : k.dims) h = (h ^ static_cast<std::uint64_t>(d)) * 0x100000001b3ULL;
            return static_cast<std::size_t>(h);
        }
    };
    std::unordered_map<key, tensor, key_hash> kept_;
    std::size_t max_, elements_ = 0;
};

/// The weights of node `index` of `m` (see weight_specs), each drawn by its initializer from the
/// stream of (model seed, node, slot), then edited by the model's weight edits. With a cache, a
/// weight drawn before is copied from it.
inline std::vector<weight> weights_of(const model& m, int index, weight_cache* cache = nullptr) {
    std::vector<weight> ws;
    for (auto& s : weight_specs(m, index)) {
        const auto stream = detail::weights::stream(m.seed, static_cast<std::uint64_t>(index), ws.size());
        weight w{std::move(s.name), {}};
        if (cache) {
            w.value = cache->draw(stream, s.initializer, s.dims);
        } else {
            w.value = tensor(std::move(s.dims), dtype::float64);
            rng r(stream);
            initialize(s.initializer, w.value, r);
        }
        for (std::int64_t i = s.forget_bias_units; i < 2 * s.forget_bias_units; ++i) w.value[i] = 1.0;
        ws.push_back(std::move(w));
    }
    detail::weights::apply_edits(m, index, ws);
    return ws;
}

}  // namespace memo
