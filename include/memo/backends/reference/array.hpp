#pragma once
// What every reference kernel shares: a typed row-major array, the node's parameters by name,
// Keras' activations, and the kernel table the interpreter runs from.
//
// Kernels are templates over the element type T (Eigen::half, Eigen::bfloat16, float, double).
// Arithmetic on T goes through ADL (`using std::exp; exp(x)`), which finds Eigen's overloads for
// its half types. Sums and element-wise functions work in acc_t<T> (float for the 16-bit types, as
// DL libraries do on CPU; double for float, so that a float32 run differs from the exact result
// only by each node's rounding of its inputs and output) and round to T once.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <Eigen/Core>

#include "../../core/model.hpp"
#include "../../engine/error.hpp"
#include "../../engine/rng.hpp"
#include "../../layers/common.hpp"
#include "../../tensors/tensor.hpp"
#include "../../tensors/weights.hpp"
#include "../backend.hpp"

namespace memo::reference {

using std::int64_t;

/// The accumulator type of T.
template <class T>
using acc_t = std::conditional_t<(sizeof(T) < 4), float, double>;
/// The type element-wise functions (exp, tanh, ...) compute in: float for float, so that they
/// overflow where a float32 library's do.
template <class T>
using fn_t = std::conditional_t<(sizeof(T) <= 4), float, double>;

/// A row-major array of T with concrete dimensions (batch included).
template <class T>
struct array {
    std::vector<int64_t> dims;
    std::vector<T> data;

    array() = default;
    explicit array(std::vector<int64_t> d) : dims(std::move(d)), data(static_cast<std::size_t>(tensor::count(dims)), T(0)) {}

    int rank() const noexcept { return static_cast<int>(dims.size()); }
    int64_t size() const noexcept { return static_cast<int64_t>(data.size()); }
    int64_t dim(int i) const noexcept { return dims[static_cast<std::size_t>(i < 0 ? i + rank() : i)]; }
    T& operator[](int64_t i) noexcept { return data[static_cast<std::size_t>(i)]; }
    const T& operator[](int64_t i) const noexcept { return data[static_cast<std::size_t>(i)]; }
    /// Row-major strides.
    std::vector<int64_t> strides() const {
        std::vector<int64_t> s(dims.size(), 1);
        for (int i = rank() - 2; i >= 0; --i) s[static_cast<std::size_t>(i)] = s[static_cast<std::size_t>(i + 1)] * dims[static_cast<std::size_t>(i + 1)];
        return s;
    }
};

template <class T>
array<T> from_tensor(const tensor& t) {
    array<T> a;
    a.dims = t.dims;
    a.data.resize(t.data.size());
    for (std::size_t i = 0; i < t.data.size(); ++i) a.data[i] = static_cast<T>(static_cast<acc_t<T>>(t.data[i]));
    return a;
}
template <class T>
tensor to_tensor(const array<T>& a, dtype type) {
    tensor t;
    t.dims = a.dims;
    t.type = type;
    t.data.resize(a.data.size());
    for (std::size_t i = 0; i < a.data.size(); ++i) t.data[i] = static_cast<double>(static_cast<acc_t<T>>(a.data[i]));
    return t;
}

/// A node's parameters by name (core/model.hpp).
using params = node_params;

namespace detail {
/// What activate() adds to each result while a run asks for it (interpreter::run_shaken):
/// `amount` times the magnitude the activation's formula rounds against, with a random sign. The
/// interpreter points `shaking` at one around each node, so kernels need no extra argument.
struct activation_shake {
    rng draws;
    double amount = 0;
    std::uint64_t state_signs = 0;  // shake_state's sign per state value, drawn at its first step
};
inline thread_local activation_shake* shaking = nullptr;

/// What the node being computed held inside (run_result::node_inner), for the oracle's range
/// rule: the kernels that divide by a value they computed (an L2 norm's sum of squares) note it
/// with divides_by. The interpreter points `held` at the node's around each, so kernels need no
/// extra argument.
inline thread_local inner_range* held = nullptr;
inline void divides_by(double v) {
    if (!held) return;
    held->least_divisor = std::min(held->least_divisor, std::abs(v));
    held->largest = std::max(held->largest, std::abs(v));
}

/// While a run shakes, moves each value of a recurrence's state after a step by `amount` of its
/// own magnitude: every library keeps the state in the node's dtype and so rounds it at each step.
/// The sign is the same at every step (one per state value, bit j of state_signs): a saturated
/// gate's rounding (softsign(z) = 1 - 1/|z| near 1) leans one way step after step, and a bias adds
/// up as steps do, where random signs only add up as their square root. A chaotic LSTM whose
/// float32 state parts from float64 over 500 steps then parts in this float64 run too.
template <class T>
void shake_state(std::vector<T>& state) {
    auto* s = shaking;
    if (!s) return;
    if (!s->state_signs) s->state_signs = s->draws() | 1;
    for (std::size_t j = 0; j < state.size(); ++j)
        state[j] = static_cast<T>(static_cast<double>(state[j]) * (1.0 + s->amount * ((s->state_signs >> (j % 64)) & 1 ? 1.0 : -1.0)));
}

/// While a run shakes, moves each of a recurrence's gate values by `amount` of its own magnitude
/// (random signs): every library rounds a gate to the node's dtype before the gate meets the
/// state, and a saturated gate's complement is that rounding alone. A GRU with softsign gates
/// whose pre-activations reach 1.7e7 has z = 1 - 6e-8, so (1 - z) * relu(...) = 1 in float64 and 0
/// once z rounds to 1 in bfloat16: the output is the rounding of z times a candidate of 1.7e7.
template <class T>
void shake_gate(std::span<T> gate) {
    auto* s = shaking;
    if (!s) return;
    for (auto& x : gate) x = static_cast<T>(static_cast<double>(x) * (1.0 + s->amount * (s->draws.chance(0.5) ? 1.0 : -1.0)));
}
}  // namespace detail

/// Keras' activation `name` applied to x, element-wise (softmax is done by apply_activation).
template <class T>
T activate(std::string_view name, T x) {
    using std::exp, std::expm1, std::log, std::tanh, std::abs, std::log1p;
    using A = fn_t<T>;
    const A v = static_cast<A>(x);
    A r = v;
    if (name == "relu") r = v < A(0) ? A(0) : v;  // NaN passes through, as in TensorFlow
    else if (name == "tanh") r = tanh(v);
    else if (name == "sigmoid") r = A(1) / (A(1) + exp(-v));
    else if (name == "hard_sigmoid") r = std::clamp(A(0.2) * v + A(0.5), A(0), A(1));
    else if (name == "elu") r = v > A(0) ? v : expm1(v);  // exp(v) - 1 would cancel near 0
    else if (name == "selu") r = A(1.0507009873554805) * (v > A(0) ? v : A(1.6732632423543772) * expm1(v));
    else if (name == "softplus") r = v > A(0) ? v + log1p(exp(-v)) : log1p(exp(v));
    else if (name == "softsign") r = v / (abs(v) + A(1));
    else if (name == "exponential") r = exp(v);
    if (auto* s = detail::shaking) r += static_cast<A>(s->amount * layers::activation_rounds_at(name) * (s->draws.chance(0.5) ? 1.0 : -1.0));
    return static_cast<T>(r);  // linear and unknown names: identity
}

/// Softmax over `axis` (Keras' default: the last).
template <class T>
void softmax(array<T>& a, int axis = -1) {
    using std::exp;
    using F = fn_t<T>;
    using A = acc_t<T>;
    if (axis < 0) axis += a.rank();
    const int64_t len = a.dim(axis);
    const int64_t inner = a.strides()[static_cast<std::size_t>(axis)];
    const int64_t outer = a.size() / std::max<int64_t>(1, len * inner);
    std::vector<F> e(static_cast<std::size_t>(len));
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t in = 0; in < inner; ++in) {
            const int64_t base = o * len * inner + in;
            F mx = static_cast<F>(a[base]);
            for (int64_t k = 1; k < len; ++k) mx = std::max(mx, static_cast<F>(a[base + k * inner]));
            A sum = 0;  // exponentials in the element type, their sum in the accumulator
            for (int64_t k = 0; k < len; ++k) sum += e[static_cast<std::size_t>(k)] = exp(static_cast<F>(a[base + k * inner]) - mx);
            for (int64_t k = 0; k < len; ++k) a[base + k * inner] = static_cast<T>(static_cast<A>(e[static_cast<std::size_t>(k)]) / sum);
        }
}

/// Applies the activation `name` in place (softmax over the last axis).
template <class T>
void apply_activation(array<T>& a, std::string_view name) {
    if (name == "linear" || name.empty()) return;
    // While a run shakes, the pre-activations move first, each by `amount` of itself (random
    // signs): a layer computes them in its dtype, and two libraries that sum in other orders round
    // each apart. Softmax passes their differences on at any magnitude: three filters with equal
    // pre-activations of 1e6 give 1/3 each only while rounding leaves them equal.
    detail::shake_gate(std::span<T>(a.data));  // each value by `amount` of itself, as a gate's
    if (name == "softmax") return softmax(a);
    for (auto& x : a.data) x = activate(name, x);
}

/// A kernel computes one node from its inputs and its weights (in Keras' layouts, converted to T).
template <class T>
using kernel = std::function<expected<array<T>>(const node&, std::span<const array<T>> in, std::span<const array<T>> weights)>;

/// Where a kernel runs: the node, the model it is in and its index there (its producers are
/// m.nodes[index].inputs), and the dtype it computes in. A kernel that depends on more than its
/// node (a fault behind a producer, a wrapped library call that wants the graph) takes this; a
/// wrapper may hand the kernel it wraps another node (`n`) in the same place.
struct kernel_context {
    const node& n;
    const model& m;
    int index;
    dtype type;
};
template <class T>
using kernel_in_context = std::function<expected<array<T>>(const kernel_context&, std::span<const array<T>> in, std::span<const array<T>> weights)>;

/// Kernels by layer class name. builtin_kernels (interpreter.hpp) fills it with the families'
/// kernels, found by the layer's type; users add their own layers' kernels, of either form (a
/// kernel of the node alone, or one in context).
template <class T>
struct kernel_table {
    std::unordered_map<std::string_view, kernel_in_context<T>> by_name;
    void set(std::string_view name, kernel_in_context<T> k) { by_name[name] = std::move(k); }
    void set(std::string_view name, kernel<T> k) {
        by_name[name] = [k = std::move(k)](const kernel_context& c, std::span<const array<T>> in, std::span<const array<T>> w) { return k(c.n, in, w); };
    }
    const kernel_in_context<T>* find(std::string_view name) const {
        auto it = by_name.find(name);
        return it == by_name.end() ? nullptr : &it->second;
    }
};

}  // namespace memo::reference
