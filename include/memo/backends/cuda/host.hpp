#pragma once
// Runs a CUDA plan on the host: the backend's own kernels (kernels.hpp) in a loop, and stand-ins
// with cuDNN's and cuBLAS's definitions for their operations. It is how the plan and the kernels
// are tested against the reference interpreter on a machine with no GPU; the device runs the same
// plan (device.cuh), so what differs there is the libraries' work alone.
#include <algorithm>
#include <exception>
#include <span>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "execute.hpp"

namespace memo::cuda {

template <class T, class A>
struct host_engine {
    template <class F>
    void each(index_t n, const F& f) {
        for (index_t i = 0; i < n; ++i) f(i);
    }
    void copy(T* y, const T* x, index_t n) { std::copy(x, x + n, y); }
    void conv(const conv_step& s, const T* x, const T* k, T* y) {
        each(s.batch * s.filters * s.w.out_count(), kernels::conv<T, A>{x, k, y, s.w, s.channels, s.filters, s.groups});
    }
    void conv_transpose(const conv_transpose_step& s, const T* x, const T* k, T* y) {
        each(s.batch * s.filters * s.w.out_count(), kernels::conv_transpose<T, A>{x, k, y, s.w, s.channels, s.filters});
    }
    /// cuDNN's cells (steps.hpp), one sample and step at a time, each direction with its weights.
    void rnn(const rnn_step& s, const T* x, const T* weights, const T* biases, T* y) {
        using std::exp, std::tanh;
        const index_t u = s.units, f = s.features, g = rnn_gates(s.cell), dirs = s.bidirectional ? 2 : 1;
        auto sigmoid = [](A v) { return A(1) / (A(1) + exp(-v)); };
        for (index_t dir = 0; dir < dirs; ++dir) {
            const T* w = weights + dir * g * u * (f + u);
            const T* b = biases + dir * 2 * g * u;
            // Gate k's input product W_k x + bW_k, or recurrent product R_k h + bR_k.
            auto input = [&](index_t k, const T* xt, index_t r) {
                A sum = static_cast<A>(b[k * u + r]);
                for (index_t c = 0; c < f; ++c) sum += static_cast<A>(w[(k * u + r) * f + c]) * static_cast<A>(xt[c]);
                return sum;
            };
            auto recurrent = [&](index_t k, const std::vector<A>& h, index_t r) {
                A sum = static_cast<A>(b[(g + k) * u + r]);
                const T* m = w + g * u * f + k * u * u;
                for (index_t c = 0; c < u; ++c) sum += static_cast<A>(m[r * u + c]) * h[static_cast<std::size_t>(c)];
                return sum;
            };
            for (index_t n = 0; n < s.batch; ++n) {
                std::vector<A> h(static_cast<std::size_t>(u)), c(static_cast<std::size_t>(u)), next(static_cast<std::size_t>(u));
                for (index_t step = 0; step < s.steps; ++step) {
                    const index_t t = dir == 0 ? step : s.steps - 1 - step;
                    const T* xt = x + (n * s.steps + t) * f;
                    for (index_t r = 0; r < u; ++r) {
                        const auto ur = static_cast<std::size_t>(r);
                        switch (s.cell) {
                            case rnn_cell::lstm: {
                                const A i = sigmoid(input(0, xt, r) + recurrent(0, h, r)), fg = sigmoid(input(1, xt, r) + recurrent(1, h, r));
                                const A cand = tanh(input(2, xt, r) + recurrent(2, h, r)), o = sigmoid(input(3, xt, r) + recurrent(3, h, r));
                                c[ur] = fg * c[ur] + i * cand;
                                next[ur] = o * tanh(c[ur]);
                                break;
                            }
                            case rnn_cell::gru: {
                                const A rg = sigmoid(input(0, xt, r) + recurrent(0, h, r)), z = sigmoid(input(1, xt, r) + recurrent(1, h, r));
                                const A cand = tanh(input(2, xt, r) + rg * recurrent(2, h, r));
                                next[ur] = (A(1) - z) * cand + z * h[ur];
                                break;
                            }
                            case rnn_cell::rnn_tanh: next[ur] = tanh(input(0, xt, r) + recurrent(0, h, r)); break;
                            case rnn_cell::rnn_relu: next[ur] = kernels::relu0(input(0, xt, r) + recurrent(0, h, r)); break;
                        }
                    }
                    for (index_t r = 0; r < u; ++r) {  // the states are held in T between steps
                        const auto ur = static_cast<std::size_t>(r);
                        h[ur] = static_cast<A>(static_cast<T>(next[ur]));
                        c[ur] = static_cast<A>(static_cast<T>(c[ur]));
                    }
                    if (s.sequences || s.bidirectional)
                        for (index_t r = 0; r < u; ++r) y[((n * s.steps + t) * dirs + dir) * u + r] = static_cast<T>(h[static_cast<std::size_t>(r)]);
                }
                if (!s.sequences && !s.bidirectional)
                    for (index_t r = 0; r < u; ++r) y[n * u + r] = static_cast<T>(h[static_cast<std::size_t>(r)]);
            }
        }
    }
    void softmax(const softmax_step& s, const T* x, T* y) { each(s.count, kernels::softmax<T, A>{x, y, s.r}); }
    void matmul(const matmul_step& s, const T* a, const T* b, T* y) {
        each(s.batch * s.m * s.n, kernels::matmul<T, A>{a, b, y, s.m, s.k, s.n, s.b_transposed});
    }
    bool pool(const pool_step&, const T*, T*) { return false; }
    bool activation(const unary_step&, const kernels::unary<T, A>&) { return false; }
    bool batch_norm(const batch_norm_step&, const kernels::batch_norm<T, A>&) { return false; }
    void node_done(std::size_t) {}
};

namespace detail {

template <class T, class A>
outcome run_on_host_as(const plan& p, std::span<const std::vector<double>* const> inputs, std::span<const int> wanted) {
    std::vector<std::vector<T>> mem(p.slots.size());
    for (std::size_t s = 0; s < p.slots.size(); ++s) {
        const auto& sl = p.slots[s];
        mem[s].resize(static_cast<std::size_t>(sl.count));
        if (sl.is_constant) std::transform(sl.constant.begin(), sl.constant.end(), mem[s].begin(), [](double v) { return static_cast<T>(static_cast<A>(v)); });
    }
    outcome r;
    if (inputs.size() != p.input_slots.size()) {
        r.status = outcome::kind::error;
        r.message = "the plan takes " + std::to_string(p.input_slots.size()) + " inputs, the run gives " + std::to_string(inputs.size());
        return r;
    }
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        auto& m = mem[static_cast<std::size_t>(p.input_slots[k])];
        if (inputs[k]->size() != m.size()) {
            r.status = outcome::kind::error;
            r.message = "input " + std::to_string(k) + " has " + std::to_string(inputs[k]->size()) + " elements, the plan wants " + std::to_string(m.size());
            return r;
        }
        std::transform(inputs[k]->begin(), inputs[k]->end(), m.begin(), [](double v) { return static_cast<T>(static_cast<A>(v)); });
    }
    host_engine<T, A> e;
    execute<T, A>(p, e, [&](int s) { return mem[static_cast<std::size_t>(s)].data(); });
    for (int s : wanted) {
        auto& v = r.values.emplace_back();
        for (const T& x : mem[static_cast<std::size_t>(s)]) v.push_back(widen<T, A>(x));
    }
    return r;
}

}  // namespace detail

/// Runs a plan on the host in its element type (Eigen's half and bfloat16 for the 16-bit ones).
inline outcome run_on_host(const plan& p, std::span<const std::vector<double>* const> inputs, std::span<const int> wanted) {
    switch (p.type) {
        case element::float16: return detail::run_on_host_as<Eigen::half, float>(p, inputs, wanted);
        case element::bfloat16: return detail::run_on_host_as<Eigen::bfloat16, float>(p, inputs, wanted);
        case element::float32: return detail::run_on_host_as<float, float>(p, inputs, wanted);
        case element::float64: break;
    }
    return detail::run_on_host_as<double, double>(p, inputs, wanted);
}

}  // namespace memo::cuda
