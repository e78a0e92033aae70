#pragma once
// Runs a plan's steps on an engine: the device's (device.cuh) or the host's (host.hpp). The
// kernels of our own are the same functors for both; what an engine adds is where memory lives,
// how a functor is applied to every element, and the library operations (convolution, softmax,
// matrix product, pooling where the library has it).
//
//   struct engine {
//       template <class F> void each(index_t n, const F& f);     // f(i) for i in [0, n)
//       void copy(T* y, const T* x, index_t n);
//       void conv(const conv_step&, const T* x, const T* k, T* y);
//       void conv_transpose(const conv_transpose_step&, const T* x, const T* k, T* y);
//       void rnn(const rnn_step&, const T* x, const T* weights, const T* biases, T* y);
//       void softmax(const softmax_step&, const T* x, T* y);
//       void matmul(const matmul_step&, const T* a, const T* b, T* y);
//       bool pool(const pool_step&, const T* x, T* y);           // false: use the kernel of ours
//       bool activation(const unary_step&, const unary<T, A>& f);  // likewise: cuDNN's activations
//       bool batch_norm(const batch_norm_step&, const batch_norm<T, A>& f);  // likewise: cuDNN's
//       void node_done(std::size_t node);                        // after a node's steps
//   };
#include <type_traits>

#include "steps.hpp"

namespace memo::cuda {

/// A parameter as a computation in T sees it (rounded to T, as TensorFlow converts a Python
/// float to the tensor's dtype), widened to A.
template <class T, class A>
A param(double x) {
    return static_cast<A>(static_cast<T>(x));
}

/// A value of T as a double (through A: the 16-bit types convert to float only).
template <class T, class A>
double widen(T v) {
    return static_cast<double>(static_cast<A>(v));
}

/// Runs every step of `p`; `at(slot)` is the slot's memory. Stops after node `last` (the plan's
/// last node by default).
template <class T, class A, class Engine, class At>
void execute(const plan& p, Engine& e, At at) {
    using namespace kernels;
    auto in = [&](int s) -> const T* { return s < 0 ? nullptr : at(s); };
    std::size_t node = 0;
    for (std::size_t i = 0; i < p.steps.size(); ++i) {
        while (node < p.node_end.size() && p.node_end[node] <= i) e.node_done(node++);
        std::visit(
            [&](const auto& s) {
                using S = std::decay_t<decltype(s)>;
                if constexpr (std::is_same_v<S, gather_step>) {
                    e.each(s.map.out.count(), gather<T>{in(s.x), at(s.y), s.map, s.fill});
                } else if constexpr (std::is_same_v<S, place_step>) {
                    e.each(s.in.count(), place<T>{in(s.x), at(s.y), s.in, s.out, s.axis, s.offset});
                } else if constexpr (std::is_same_v<S, copy_step>) {
                    e.copy(at(s.y), in(s.x), p.slots[static_cast<std::size_t>(s.y)].count);
                } else if constexpr (std::is_same_v<S, unary_step>) {
                    unary<T, A> f{in(s.x), at(s.y), s.f, param<T, A>(s.p0), param<T, A>(s.p1), param<T, A>(s.p2), in(s.bias), s.bias_len, s.bias_inner};
                    if (!e.activation(s, f)) e.each(p.slots[static_cast<std::size_t>(s.y)].count, f);
                } else if constexpr (std::is_same_v<S, binary_step>) {
                    e.each(p.slots[static_cast<std::size_t>(s.y)].count, binary<T, A>{in(s.a), in(s.b), at(s.y), s.f, param<T, A>(s.p)});
                } else if constexpr (std::is_same_v<S, inject_step>) {
                    e.each(p.slots[static_cast<std::size_t>(s.y)].count, inject<T>{at(s.y), s.stride, s.value});
                } else if constexpr (std::is_same_v<S, pool_step>) {
                    if (!e.pool(s, in(s.x), at(s.y))) e.each(s.planes * s.w.out_count(), pool<T, A>{in(s.x), at(s.y), s.w, s.max});
                } else if constexpr (std::is_same_v<S, reduce_step>) {
                    e.each(s.planes, plane_reduce<T, A>{in(s.x), at(s.y), s.plane, s.max});
                } else if constexpr (std::is_same_v<S, conv_step>) {
                    e.conv(s, in(s.x), in(s.kernel), at(s.y));
                } else if constexpr (std::is_same_v<S, conv_transpose_step>) {
                    e.conv_transpose(s, in(s.x), in(s.kernel), at(s.y));
                } else if constexpr (std::is_same_v<S, rnn_step>) {
                    e.rnn(s, in(s.x), in(s.weights), in(s.biases), at(s.y));
                } else if constexpr (std::is_same_v<S, softmax_step>) {
                    e.softmax(s, in(s.x), at(s.y));
                } else if constexpr (std::is_same_v<S, batch_norm_step>) {
                    batch_norm<T, A> f{in(s.x), at(s.y), in(s.gamma), in(s.beta), in(s.mean), in(s.var), s.len, s.inner, param<T, A>(s.eps)};
                    if (!e.batch_norm(s, f)) e.each(p.slots[static_cast<std::size_t>(s.y)].count, f);
                } else if constexpr (std::is_same_v<S, layer_norm_step>) {
                    e.each(s.count, layer_norm<T, A>{in(s.x), at(s.y), in(s.gamma), in(s.beta), s.r, param<T, A>(s.eps)});
                } else if constexpr (std::is_same_v<S, prelu_step>) {
                    e.each(p.slots[static_cast<std::size_t>(s.y)].count, kernels::prelu<T, A>{in(s.x), at(s.y), in(s.alpha), s.at});
                } else if constexpr (std::is_same_v<S, matmul_step>) {
                    e.matmul(s, in(s.a), in(s.b), at(s.y));
                } else if constexpr (std::is_same_v<S, l2_normalize_step>) {
                    e.each(s.count, l2_normalize<T, A>{in(s.x), at(s.y), s.len});
                } else if constexpr (std::is_same_v<S, local_step>) {
                    e.each(s.batch * s.w.out_count() * s.filters,
                           locally_connected<T, A>{in(s.x), in(s.kernel), at(s.y), s.w, s.channels, s.filters, s.channel_major});
                } else if constexpr (std::is_same_v<S, conv_lstm_step>) {
                    conv_lstm_cell<T, A> f{in(s.zx),  in(s.zh),    in(s.bias), in(s.c), at(s.h_out),          at(s.c_out),
                                           s.filters, s.positions, s.act,      s.ract,  param<T, A>(s.act_p), param<T, A>(s.ract_p)};
                    e.each(s.batch * s.filters * s.positions, f);
                } else if constexpr (std::is_same_v<S, bilinear_step>) {
                    e.each(s.out.count(), kernels::bilinear<T, A>{in(s.x), at(s.y), s.in, s.out, s.axis});
                }
            },
            p.steps[i]);
    }
    while (node < p.node_end.size()) e.node_done(node++);
}

}  // namespace memo::cuda
