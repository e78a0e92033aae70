#pragma once
// Weights as pure functions of (model seed, node, slot): every backend materialises the same
// numbers, in Keras' layouts (layers/weights.hpp: Conv2D kernel (kh, kw, in, filters), Dense
// kernel (in, units), LSTM gates i, f, c, o; GRU z, r, h), drawn by each weight's Keras
// initializer with Keras' fan arithmetic, then edited by the model's LEMON weight edits.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "../core/model.hpp"
#include "../engine/rng.hpp"
#include "../layers/weights.hpp"
#include "tensor.hpp"

namespace memo {

/// One weight of a node: its Keras name ("kernel", "bias", "forward_kernel", ...) and values.
struct weight {
    std::string name;
    tensor value;
};

namespace detail::init {

/// Keras' _compute_fans.
inline void fans(const std::vector<std::int64_t>& d, double& fan_in, double& fan_out) {
    if (d.empty()) {
        fan_in = fan_out = 1;
        return;
    }
    if (d.size() == 1) {
        fan_in = fan_out = static_cast<double>(d[0]);
        return;
    }
    if (d.size() == 2) {
        fan_in = static_cast<double>(d[0]);
        fan_out = static_cast<double>(d[1]);
        return;
    }
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
        for (std::int64_t b = 0; b < cols; ++b) t[a * cols + b] = tall ? v[static_cast<std::size_t>(b * n + a)] : v[static_cast<std::size_t>(a * n + b)];
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
    else if (name == "he_uniform") {
        const double l = std::sqrt(6.0 / std::max(1.0, fi));
        each([&] { return r.uniform_real(-l, l); });
    } else if (name == "lecun_uniform") {
        const double l = std::sqrt(3.0 / std::max(1.0, fi));
        each([&] { return r.uniform_real(-l, l); });
    } else if (name == "Orthogonal") orthogonal(r, t);
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

/// Whether drawing by this initializer costs more than carrying its values from another process:
/// the normal family's Box-Muller (a log and a cos a value) and Orthogonal's QR. A uniform draw
/// costs less than copying its values through a pipe.
inline bool costly_to_draw(std::string_view initializer) {
    for (std::string_view n : {"RandomNormal", "TruncatedNormal", "VarianceScaling", "glorot_normal", "he_normal", "lecun_normal", "Orthogonal"})
        if (initializer == n) return true;
    return false;
}

/// Drawn weights kept for reuse: a model is drawn by several parts of one process (the ONNX export,
/// the float64 truth, a request to a worker), the same model runs again to localise a bug, and
/// drawing one weight can cost milliseconds (an Orthogonal initializer's QR). Holds what an
/// initializer drew from one stream into one shape, up to `max_elements` values in all (then it
/// starts over).
class weight_cache {
public:
    explicit weight_cache(std::size_t max_elements = std::size_t{1} << 22) : max_(max_elements) {}

    const tensor& draw(std::uint64_t stream, std::string_view initializer, const std::vector<std::int64_t>& dims) {
        key k{stream, std::string(initializer), dims};
        if (const auto it = kept_.find(k); it != kept_.end()) return it->second;
        tensor t(dims, dtype::float64);
        rng r(stream);
        initialize(initializer, t, r);
        return keep(std::move(k), std::move(t));
    }
    /// Keeps values another process drew for (stream, initializer, dims): what draw would make.
    void keep(std::uint64_t stream, std::string_view initializer, tensor drawn) {
        key k{stream, std::string(initializer), drawn.dims};
        if (!kept_.count(k)) keep(std::move(k), std::move(drawn));
    }

private:
    struct key;
    const tensor& keep(key k, tensor t) {
        if (elements_ + t.data.size() > max_) {
            kept_.clear();
            elements_ = 0;
        }
        elements_ += t.data.size();
        return kept_.emplace(std::move(k), std::move(t)).first->second;
    }
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

/// The cache of this thread's drawn weights, which every backend in it and the ONNX export share.
inline weight_cache& drawn_weights() {
    thread_local weight_cache kept;
    return kept;
}

namespace detail::weights {
/// Node index's given weight for slot k, when its dims still fit `dims`.
inline const given_weights::one* given_for(const model& m, int index, std::size_t k, const std::vector<std::int64_t>& dims) {
    const auto* given = m[index].weights.get();
    return given && k < given->weights.size() && given->weights[k].dims == dims ? &given->weights[k] : nullptr;
}
}  // namespace detail::weights

/// What weights_of(m, index) draws rather than takes as given: each weight's stream, initializer
/// and dims, in slot order.
struct weight_draw {
    std::uint64_t stream;
    std::string initializer;
    std::vector<std::int64_t> dims;
};
inline std::vector<weight_draw> draws_of(const model& m, int index) {
    std::vector<weight_draw> out;
    std::size_t k = 0;
    for (auto& s : weight_specs(m, index)) {
        if (!detail::weights::given_for(m, index, k, s.dims))
            out.push_back({detail::weights::stream(m.seed, static_cast<std::uint64_t>(index), k), std::string(s.initializer), std::move(s.dims)});
        ++k;
    }
    return out;
}

/// The weights of node `index` of `m` (see weight_specs): the node's given weights where their
/// dims still fit, else each drawn by its initializer from the stream of (model seed, node, slot);
/// then edited by the model's weight edits. With a cache, a weight drawn before is copied from it.
inline std::vector<weight> weights_of(const model& m, int index, weight_cache* cache = nullptr) {
    std::vector<weight> ws;
    for (auto& s : weight_specs(m, index)) {
        const auto stream = detail::weights::stream(m.seed, static_cast<std::uint64_t>(index), ws.size());
        weight w{std::move(s.name), {}};
        if (const auto* given = detail::weights::given_for(m, index, ws.size(), s.dims)) {
            w.value = tensor(std::move(s.dims), dtype::float64);
            w.value.data = given->values;
            ws.push_back(std::move(w));
            continue;
        }
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
