#pragma once
// memo::reference: the embedded interpreter, Keras semantics for every layer of the registry, in
// float16, bfloat16 (Eigen's half types), float32 and float64. With precision = float64 it is the
// ground truth O of D_MAD. It also returns every node's output, and runs teacher-forced (each node
// on given inputs) so that a disagreement can be pinned on one node.
#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "../../core/kernels.hpp"
#include "../../layers/all.hpp"
#include "../backend.hpp"
#include "../progress.hpp"
#include "act.hpp"
#include "array.hpp"
#include "conv.hpp"
#include "core.hpp"
#include "elementwise.hpp"
#include "merge.hpp"
#include "norm.hpp"
#include "pool.hpp"
#include "reshape.hpp"
#include "rnn.hpp"

namespace memo::reference {

/// The built-in kernels of one element type, found by the layer's type (core/kernels.hpp): one
/// `run(L, node, in, weights)` per layer type, gathered from the families.
template <class T>
struct kernels : core_kernels<T>,
                 act_kernels<T>,
                 conv_kernels<T>,
                 pool_kernels<T>,
                 norm_kernels<T>,
                 reshape_kernels<T>,
                 merge_kernels<T>,
                 rnn_kernels<T>,
                 elementwise_kernels<T> {
    using core_kernels<T>::run;
    using act_kernels<T>::run;
    using conv_kernels<T>::run;
    using pool_kernels<T>::run;
    using norm_kernels<T>::run;
    using reshape_kernels<T>::run;
    using merge_kernels<T>::run;
    using rnn_kernels<T>::run;
    using elementwise_kernels<T>::run;
};

/// All kernels of one element type: the built-in ones, one for every layer of the default list
/// that takes inputs (a missing one is a compile error), then whatever the user adds.
template <class T>
kernel_table<T> builtin_kernels() {
    kernel_table<T> t;
    for (auto& [name, k] : memo::kernel_table<kernels<T>, kernel<T>, std::string_view>(default_layers{})) t.set(name, std::move(k));
    return t;
}

/// Points a kernel hook (a thread-local pointer the kernels read: detail::shaking,
/// detail::rnn::observing) at `at` for one scope, and back at what it held when the scope ends,
/// a kernel that throws included.
template <class T>
class point_for_scope {
public:
    point_for_scope(T*& slot, T* at) : slot_(slot), before_(std::exchange(slot, at)) {}
    ~point_for_scope() { slot_ = before_; }
    point_for_scope(const point_for_scope&) = delete;
    point_for_scope& operator=(const point_for_scope&) = delete;

private:
    T*& slot_;
    T* before_;
};

/// The reference interpreter as a backend.
class interpreter {
public:
    /// `precision`: compute every node in this dtype instead of the model's (float64: ground truth).
    explicit interpreter(std::optional<dtype> precision = std::nullopt, std::string name = {})
        : precision_(precision), name_(name.empty() ? (precision ? "reference-" + std::string(name_of(*precision)) : "reference") : std::move(name)) {}

    std::string_view name() const noexcept { return name_; }

    /// Tables a user extends with kernels of their own layers: `interp.kernels<float>().set(...)`.
    template <class T>
    kernel_table<T>& kernels() {
        if constexpr (std::is_same_v<T, Eigen::half>) return f16_;
        else if constexpr (std::is_same_v<T, Eigen::bfloat16>) return bf16_;
        else if constexpr (std::is_same_v<T, float>) return f32_;
        else return f64_;
    }

    /// The classes of `reg` (those with inputs) it has no float32 kernel for, in the registry's order.
    std::vector<std::string_view> lacks(const registry& reg) {
        std::vector<std::string_view> out;
        for (const auto& L : reg)
            if (L.arity.max != 0 && !kernels<float>().find(L.name)) out.push_back(L.name);
        return out;
    }

    /// Replaces the kernel of class `layer` in all four element types by a wrapper of it:
    ///   wrap(std::type_identity<T>{}, original, context, in, weights) -> expected<array<T>>
    /// (a generic lambda), called for every node of the class. How a faulty library is planted
    /// (memo-fuzz selftest) or a library call wrapped. False when the class has no kernel.
    template <class Wrap>
    bool wrap_kernel(std::string_view layer, Wrap wrap) {
        bool found = true;
        auto one = [&]<class T>(std::type_identity<T>) {
            auto& table = kernels<T>();
            const auto it = table.by_name.find(layer);
            if (it == table.by_name.end()) {
                found = false;
                return;
            }
            it->second = [wrap, original = it->second](const kernel_context& c, std::span<const array<T>> in,
                                                       std::span<const array<T>> w) -> expected<array<T>> {
                return wrap(std::type_identity<T>{}, original, c, in, w);
            };
        };
        one(std::type_identity<Eigen::half>{});
        one(std::type_identity<Eigen::bfloat16>{});
        one(std::type_identity<float>{});
        one(std::type_identity<double>{});
        return found;
    }

    expected<void> supports(const model& m) const {
        for (const auto& n : m.nodes)
            if (n.layer->arity.max != 0 && !f32_.find(n.layer->name)) return fail("no reference kernel for " + std::string(n.layer->name));
        return {};
    }

    /// Hears every step of every recurrent layer (SimpleRNN, GRU, LSTM, Bidirectional, ConvLSTM)
    /// of the runs that follow: its hidden state, and its cell state where it has one. An empty
    /// hook stops it. The values are those of the run's dtype, widened to double.
    void set_state_hook(state_hook h) { hook_ = std::move(h); }

    run_result run(const model& m, std::span<const tensor> inputs, const run_options& o = {}) { return run_shaken(m, inputs, o, 0); }

    /// run(), with the result of every activation function (Keras' activations, gates included)
    /// moved by `units` units of roundoff of its node's dtype times the magnitude the activation's
    /// usual formula rounds against (layers::activation_rounds_at), with random signs, and a
    /// layer's pre-activations before its activation by as many units of their own magnitude: a
    /// float64 run that shows how far a library's rounding of exp(x) - 1 or 1 / (1 + exp(-x)) can
    /// move a node, as a recurrence amplifies it step by step, or its own sums' rounding a fused
    /// softmax (the oracle's rounding measure, oracle/localise.hpp). 0: none, a plain run.
    run_result run_shaken(const model& m, std::span<const tensor> inputs, const run_options& o, double units) {
        const auto start = std::chrono::steady_clock::now();
        run_result r;
        try {
            r = evaluate(m, inputs, o, units);
        } catch (const std::exception& e) {
            r = run_result::failed(run_status::error, e.what());
        }
        r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        return r;
    }

private:
    run_result evaluate(const model& m, std::span<const tensor> inputs, const run_options& o, double shake_units) {
        const bool forced = !o.forced.empty();
        if (forced && o.forced.size() != m.size()) return run_result::failed(run_status::error, "forced run needs one tensor per node");
        const auto precision = o.precision ? o.precision : precision_;
        std::vector<tensor> values(m.size());
        std::vector<inner_range> inner(m.size());
        std::size_t next_input = 0;
        for (std::size_t i = 0; i < m.size(); ++i) {
            const node& n = m.nodes[i];
            const dtype t = precision.value_or(n.type);
            if (n.layer->arity.max == 0) {
                if (next_input >= inputs.size()) return run_result::failed(run_status::error, "missing input for node " + std::to_string(i));
                values[i] = inputs[next_input++];
                if (values[i].dims != concrete(n.out, values[i].dims.empty() ? 1 : values[i].dims[0]))
                    return run_result::failed(run_status::error,
                                              "input " + std::to_string(i) + " is " + values[i].dims_str() + ", the model expects " + n.out.str());
                values[i].type = t;
                for (auto& x : values[i].data) x = round_to(t, x);
                continue;
            }
            std::vector<const tensor*> in;
            for (int src : n.inputs) {
                const tensor* x = forced ? &o.forced[static_cast<std::size_t>(src)] : &values[static_cast<std::size_t>(src)];
                // Kernels trust the inferred shapes: a tensor of another shape is refused here.
                if (x->dims != concrete(m[src].out, x->dims.empty() ? 1 : x->dims[0]))
                    return run_result::failed(run_status::error,
                                              "node " + std::to_string(i) + " got a " + x->dims_str() + " input, expected " + m[src].out.str());
                in.push_back(x);
            }
            progress::at_node(static_cast<int>(i));
            // Each node's shake draws from a stream of its own: the same run shakes alike.
            std::optional<detail::activation_shake> shake;
            if (shake_units > 0) shake.emplace(detail::activation_shake{rng(m.seed ^ (0x9e3779b97f4a7c15ULL * (i + 1))), shake_units * unit_roundoff(n.type)});
            const point_for_scope shaking(detail::shaking, shake ? &*shake : nullptr);
            auto out = node_in(t, m, static_cast<int>(i), in, inner[i]);
            if (!out) {
                auto r = run_result::failed(run_status::error, std::string(n.layer->name) + ": " + out.reason());
                r.node = static_cast<int>(i);
                return r;
            }
            values[i] = std::move(*out);
        }
        progress::at_node(-1);
        run_result r;
        if (forced || o.every_node) {
            r.outputs = std::move(values);
            r.node_inner = std::move(inner);
        } else
            for (int out : m.outputs) r.outputs.push_back(values[static_cast<std::size_t>(out)]);
        return r;
    }

    /// Node i's output in dtype t; `inner` gets what it held inside (inner_range).
    expected<tensor> node_in(dtype t, const model& m, int i, const std::vector<const tensor*>& in, inner_range& inner) {
        switch (t) {
            case dtype::float16: return node_as<Eigen::half>(t, m, i, in, inner);
            case dtype::bfloat16: return node_as<Eigen::bfloat16>(t, m, i, in, inner);
            case dtype::float32: return node_as<float>(t, m, i, in, inner);
            case dtype::float64: return node_as<double>(t, m, i, in, inner);
        }
        return fail("unknown dtype");
    }

    template <class T>
    expected<tensor> node_as(dtype t, const model& m, int i, const std::vector<const tensor*>& in, inner_range& inner) {
        const node& n = m[i];
        const kernel_in_context<T>* k = kernels<T>().find(n.layer->name);
        if (!k) return fail("no reference kernel");
        std::vector<array<T>> xs, ws;
        for (const tensor* x : in) xs.push_back(from_tensor<T>(*x));
        for (auto& w : weights_of(m, i, &drawn_weights())) ws.push_back(from_tensor<T>(w.value));
        detail::rnn::observer heard{&hook_, i, 0, {}, {}};
        const point_for_scope observing(detail::rnn::observing, &heard);
        inner = {};
        const point_for_scope holding(detail::held, &inner);
        auto out = (*k)(kernel_context{n, m, i, t}, xs, ws);
        inner.largest = std::max(inner.largest, heard.largest);
        if (!out) return out.error();
        return to_tensor(*out, t);
    }

    std::optional<dtype> precision_;
    std::string name_;
    state_hook hook_;
    kernel_table<Eigen::half> f16_ = builtin_kernels<Eigen::half>();
    kernel_table<Eigen::bfloat16> bf16_ = builtin_kernels<Eigen::bfloat16>();
    kernel_table<float> f32_ = builtin_kernels<float>();
    kernel_table<double> f64_ = builtin_kernels<double>();
};

static_assert(backend<interpreter>);

}  // namespace memo::reference
