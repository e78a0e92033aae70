#pragma once
// Reference kernels: SimpleRNN, GRU, LSTM, Bidirectional(LSTM), TimeDistributed(ReLU) and
// ConvLSTM1D/2D/3D, with Keras' cell equations (gates i, f, c, o for LSTM; z, r, h for GRU) from a
// zero initial state. go_backwards reads the sequence reversed and returns outputs in processing
// order; return_state, stateful and unroll do not change the single output of one call.
#include <algorithm>
#include <cmath>
#include <functional>
#include <span>

#include "../../layers/common.hpp"
#include "../../layers/rnn.hpp"
#include "array.hpp"

namespace memo::reference {

/// One step of a recurrent layer, as the interpreter's state hook sees it (interpreter::set_state_hook).
struct state_step {
    int node = -1;              // the model node
    int part = 0;               // 1 for the backward layer of a Bidirectional, else 0
    std::int64_t sample = 0;    // index in the batch
    std::int64_t step = 0;      // time step, in processing order
    std::span<const double> h;  // the hidden state after the step (a ConvLSTM's whole frame)
    std::span<const double> c;  // the cell state (LSTM, ConvLSTM); empty for SimpleRNN and GRU
};
using state_hook = std::function<void(const state_step&)>;

namespace detail::rnn {

/// Who hears the steps of the kernel running now: the interpreter sets it around one node, so the
/// kernels' signature (shared with users' kernels) needs no extra argument. It keeps the largest
/// magnitude of the states (run_result::node_inner), and passes each step to the hook, if any.
struct observer {
    const state_hook* hook = nullptr;
    int node = -1, part = 0;
    std::vector<double> h, c;
    double largest = 0;  // of every state it heard; a NaN leaves it, an infinity is the largest

    template <class T>
    void emit(std::int64_t sample, std::int64_t step, const std::vector<T>& hs, const std::vector<T>* cs) {
        for (const auto& x : hs) largest = std::max(largest, std::abs(static_cast<double>(x)));
        if (cs)
            for (const auto& x : *cs) largest = std::max(largest, std::abs(static_cast<double>(x)));
        if (!hook || !*hook) return;
        h.assign(hs.size(), 0.0);
        for (std::size_t j = 0; j < hs.size(); ++j) h[j] = static_cast<double>(hs[j]);
        c.clear();
        if (cs)
            for (const auto& x : *cs) c.push_back(static_cast<double>(x));
        (*hook)(state_step{node, part, sample, step, h, c});
    }
};
inline thread_local observer* observing = nullptr;

/// An activation parameter, None read as linear (LSTM accepts None).
inline std::string_view act_of(const params& p, std::string_view name) { return p.none(name) ? "linear" : p.str(name); }

/// Keras' activation on one gate tensor, viewed as (outer, len, inner): softmax runs over `len`,
/// the axis Keras' softmax(axis=-1) sees; every other activation is element-wise.
template <class T>
void activate_gate(std::string_view name, std::span<T> v, int64_t len, int64_t inner) {
    if (name != "softmax") {
        for (auto& x : v) x = activate(name, x);
    } else {
        array<T> a;
        a.dims = {static_cast<int64_t>(v.size()) / (len * inner), len, inner};
        a.data.assign(v.begin(), v.end());
        softmax(a, 1);
        std::copy(a.data.begin(), a.data.end(), v.begin());
    }
    shake_gate(v);
}

/// z[j] += sum_k v[k] * w[k, col0 + j] over the rows of the row-major matrix w.
template <class T>
void add_product(std::vector<acc_t<T>>& z, const T* v, int64_t rows, const array<T>& w, int64_t col0 = 0) {
    using A = acc_t<T>;
    const int64_t cols = w.dim(-1);
    for (int64_t k = 0; k < rows; ++k) {
        const A x = static_cast<A>(v[k]);
        const T* row = &w.data[static_cast<std::size_t>(k * cols + col0)];
        for (std::size_t j = 0; j < z.size(); ++j) z[j] += x * static_cast<A>(row[j]);
    }
}

/// z[j] += b[offset + j].
template <class T>
void add_bias(std::vector<acc_t<T>>& z, const array<T>& b, int64_t offset = 0) {
    for (std::size_t j = 0; j < z.size(); ++j) z[j] += static_cast<acc_t<T>>(b[offset + static_cast<int64_t>(j)]);
}

/// The accumulated values rounded to T, once.
template <class T>
std::vector<T> rounded(const std::vector<acc_t<T>>& z) {
    std::vector<T> out(z.size());
    for (std::size_t j = 0; j < z.size(); ++j) out[j] = static_cast<T>(z[j]);
    return out;
}

/// One LSTM update from pre-activations z (gate-major: i, f, c, o blocks of h.size()).
/// `len`/`inner` place softmax's axis inside a block (see activate_gate).
template <class T>
void lstm_update(std::vector<T> z, std::vector<T>& h, std::vector<T>& c, std::string_view act, std::string_view ract, int64_t len, int64_t inner) {
    using A = acc_t<T>;
    const std::size_t n = h.size();
    auto block = [&](std::size_t g) { return std::span<T>(z).subspan(g * n, n); };
    activate_gate(ract, block(0), len, inner);
    activate_gate(ract, block(1), len, inner);
    activate_gate(act, block(2), len, inner);
    activate_gate(ract, block(3), len, inner);
    for (std::size_t j = 0; j < n; ++j)
        c[j] = static_cast<T>(static_cast<A>(z[n + j]) * static_cast<A>(c[j]) + static_cast<A>(z[j]) * static_cast<A>(z[2 * n + j]));
    std::vector<T> ac = c;
    activate_gate(act, std::span<T>(ac), len, inner);
    for (std::size_t j = 0; j < n; ++j) h[j] = static_cast<T>(static_cast<A>(z[3 * n + j]) * static_cast<A>(ac[j]));
}

/// Runs a cell over x (batch, time, features) from zero state. `step(x_t, h, c)` updates the state
/// of one sample; the output is h per step (processing order) or the last h.
/// `cell`: whether c is a state of its own (LSTM), which an observer then sees.
template <class T, class Step>
array<T> unroll(const array<T>& x, int64_t units, bool backwards, bool sequences, bool cell, Step&& step) {
    const int64_t batch = x.dim(0), steps = x.dim(1), features = x.dim(2);
    array<T> out(sequences ? std::vector<int64_t>{batch, steps, units} : std::vector<int64_t>{batch, units});
    for (int64_t b = 0; b < batch; ++b) {
        std::vector<T> h(static_cast<std::size_t>(units), T(0)), c = h;
        for (int64_t s = 0; s < steps; ++s) {
            const int64_t t = backwards ? steps - 1 - s : s;
            step(&x[(b * steps + t) * features], h, c);
            shake_state(h);
            if (cell) shake_state(c);
            if (observing) observing->emit(b, s, h, cell ? &c : nullptr);
            if (sequences) std::copy(h.begin(), h.end(), out.data.begin() + (b * steps + s) * units);
        }
        if (!sequences) std::copy(h.begin(), h.end(), out.data.begin() + b * units);
    }
    return out;
}

/// LSTM over x with weights w[0] kernel (in, 4u), w[1] recurrent (u, 4u), w[2] bias (4u) when present.
template <class T>
array<T> lstm(const array<T>& x, std::span<const array<T>> w, int64_t units, std::string_view act, std::string_view ract, bool backwards, bool sequences) {
    const int64_t features = x.dim(2);
    return unroll(x, units, backwards, sequences, true, [&](const T* xt, std::vector<T>& h, std::vector<T>& c) {
        std::vector<acc_t<T>> z(static_cast<std::size_t>(4 * units), acc_t<T>(0));
        if (w.size() > 2) add_bias(z, w[2]);
        add_product(z, xt, features, w[0]);
        add_product(z, h.data(), units, w[1]);
        lstm_update(rounded<T>(z), h, c, act, ract, units, 1);
    });
}

template <class T>
expected<array<T>> simple_rnn(const node& n, std::span<const array<T>> in, std::span<const array<T>> w) {
    params p{n};
    const int64_t units = p.integer("units"), features = in[0].dim(2);
    const auto act = act_of(p, "activation");
    return unroll(in[0], units, p.flag("go_backwards"), p.flag("return_sequences"), false, [&](const T* xt, std::vector<T>& h, std::vector<T>&) {
        std::vector<acc_t<T>> z(static_cast<std::size_t>(units), acc_t<T>(0));
        if (w.size() > 2) add_bias(z, w[2]);
        add_product(z, xt, features, w[0]);
        add_product(z, h.data(), units, w[1]);
        h = rounded<T>(z);
        activate_gate(act, std::span<T>(h), units, 1);
    });
}

/// GRU, Keras' implementation 2. reset_after: bias (2, 3u), rows input and recurrent, and
/// h~ = act(x W_h + b_h + r * (h U_h + rb_h)); otherwise bias (3u) and h~ = act(x W_h + (r * h) U_h + b_h).
/// Then h = z * h + (1 - z) * h~.
template <class T>
expected<array<T>> gru(const node& n, std::span<const array<T>> in, std::span<const array<T>> w) {
    using A = acc_t<T>;
    params p{n};
    const int64_t units = p.integer("units"), features = in[0].dim(2);
    const auto act = act_of(p, "activation"), ract = act_of(p, "recurrent_activation");
    const bool after = p.flag("reset_after"), bias = w.size() > 2;
    const auto u = static_cast<std::size_t>(units);
    return unroll(in[0], units, p.flag("go_backwards"), p.flag("return_sequences"), false, [&](const T* xt, std::vector<T>& h, std::vector<T>&) {
        std::vector<A> zx(3 * u, A(0)), zh(after ? 3 * u : 2 * u, A(0));
        if (bias) add_bias(zx, w[2]);
        if (bias && after) add_bias(zh, w[2], 3 * units);
        add_product(zx, xt, features, w[0]);
        add_product(zh, h.data(), units, w[1]);
        std::vector<T> z(u), r(u), hh(u);
        for (std::size_t j = 0; j < u; ++j) {
            z[j] = static_cast<T>(zx[j] + zh[j]);
            r[j] = static_cast<T>(zx[u + j] + zh[u + j]);
        }
        activate_gate(ract, std::span<T>(z), units, 1);
        activate_gate(ract, std::span<T>(r), units, 1);
        if (after) {
            for (std::size_t j = 0; j < u; ++j) hh[j] = static_cast<T>(zx[2 * u + j] + static_cast<A>(r[j]) * static_cast<A>(static_cast<T>(zh[2 * u + j])));
        } else {
            std::vector<T> rh(u);
            for (std::size_t j = 0; j < u; ++j) rh[j] = static_cast<T>(static_cast<A>(r[j]) * static_cast<A>(h[j]));
            std::vector<A> rec(u, A(0));
            add_product(rec, rh.data(), units, w[1], 2 * units);
            for (std::size_t j = 0; j < u; ++j) hh[j] = static_cast<T>(zx[2 * u + j] + static_cast<A>(static_cast<T>(rec[j])));
        }
        activate_gate(act, std::span<T>(hh), units, 1);
        for (std::size_t j = 0; j < u; ++j) {
            const A zj = static_cast<A>(z[j]);
            h[j] = static_cast<T>(zj * static_cast<A>(h[j]) + (A(1) - zj) * static_cast<A>(hh[j]));
        }
    });
}

/// Bidirectional(LSTM) with Keras' defaults (tanh, sigmoid, bias). The backward LSTM reads the
/// reversed sequence; with return_sequences its outputs are reversed back to input time order.
template <class T>
expected<array<T>> bidirectional(const node& n, std::span<const array<T>> in, std::span<const array<T>> w) {
    using A = acc_t<T>;
    params p{n};
    const int64_t units = p.integer("units");
    const bool sequences = p.flag("return_sequences");
    array<T> fwd = lstm(in[0], w.subspan(0, 3), units, "tanh", "sigmoid", false, sequences);
    if (p.none("merge_mode")) return fwd;
    if (observing) observing->part = 1;
    array<T> bwd = lstm(in[0], w.subspan(3, 3), units, "tanh", "sigmoid", true, sequences);
    if (observing) observing->part = 0;
    const int64_t batch = in[0].dim(0), steps = sequences ? in[0].dim(1) : 1;
    if (sequences)  // row (b, s) of bwd belongs to time steps - 1 - s
        for (int64_t b = 0; b < batch; ++b)
            for (int64_t s = 0; s < steps / 2; ++s)
                std::swap_ranges(bwd.data.begin() + (b * steps + s) * units, bwd.data.begin() + (b * steps + s + 1) * units,
                                 bwd.data.begin() + (b * steps + steps - 1 - s) * units);
    const auto mode = p.str("merge_mode");
    if (mode == "concat") {
        auto dims = fwd.dims;
        dims.back() = 2 * units;
        array<T> out(dims);
        for (int64_t r = 0; r < batch * steps; ++r) {
            std::copy_n(fwd.data.begin() + r * units, units, out.data.begin() + r * 2 * units);
            std::copy_n(bwd.data.begin() + r * units, units, out.data.begin() + r * 2 * units + units);
        }
        return out;
    }
    for (int64_t i = 0; i < fwd.size(); ++i) {
        const A a = static_cast<A>(fwd[i]), b = static_cast<A>(bwd[i]);
        fwd[i] = static_cast<T>(mode == "sum" ? a + b : mode == "mul" ? a * b : (a + b) / A(2));
    }
    return fwd;
}

/// The geometry of one N-d convolution over channels-last frames.
struct grid {
    std::vector<int64_t> in, out, kernel, stride, dilation, pad_before;
    static int64_t volume(const std::vector<int64_t>& d) { return tensor::count(d); }
};

/// z (out positions, cout) += conv(x (in positions, cin), w (kernel..., cin, cout)), cross-correlation
/// with zero padding, as TF computes it.
template <class T>
void add_conv(std::vector<acc_t<T>>& z, const T* x, int64_t cin, const array<T>& w, const grid& g) {
    using A = acc_t<T>;
    const int64_t cout = w.dim(-1), positions = grid::volume(g.out), taps = grid::volume(g.kernel);
    const std::size_t N = g.in.size();
    std::vector<int64_t> o(N), k(N);
    for (int64_t pos = 0; pos < positions; ++pos) {
        int64_t rest = pos;
        for (std::size_t d = N; d-- > 0;) {
            o[d] = rest % g.out[d];
            rest /= g.out[d];
        }
        A* zp = &z[static_cast<std::size_t>(pos * cout)];
        for (int64_t tap = 0; tap < taps; ++tap) {
            int64_t rem = tap, src = 0;
            bool inside = true;
            for (std::size_t d = N; d-- > 0;) {
                k[d] = rem % g.kernel[d];
                rem /= g.kernel[d];
            }
            for (std::size_t d = 0; d < N && inside; ++d) {
                const int64_t i = o[d] * g.stride[d] + k[d] * g.dilation[d] - g.pad_before[d];
                inside = i >= 0 && i < g.in[d];
                src = src * g.in[d] + i;
            }
            if (!inside) continue;
            const T* xp = x + src * cin;
            const T* wp = &w.data[static_cast<std::size_t>(tap * cin * cout)];
            for (int64_t ci = 0; ci < cin; ++ci) {
                const A xv = static_cast<A>(xp[ci]);
                for (int64_t co = 0; co < cout; ++co) zp[co] += xv * static_cast<A>(wp[ci * cout + co]);
            }
        }
    }
}

/// ConvLSTM{1,2,3}D (Keras' ConvLSTMCell): the input conv has the layer's strides, padding and
/// dilation; the recurrent conv has stride 1 and "same" padding. Frames are gathered channels-last;
/// channels_first only changes the layout, and the axis softmax sees (the last spatial one).
template <class T>
expected<array<T>> conv_lstm(const node& n, std::span<const array<T>> in, std::span<const array<T>> w) {
    params p{n};
    const array<T>& x = in[0];
    const int N = x.rank() - 3;
    const bool first = p.channels_first(), sequences = p.flag("return_sequences"), backwards = p.flag("go_backwards");
    const int64_t batch = x.dim(0), steps = x.dim(1), channels = first ? x.dim(2) : x.dim(-1), filters = p.integer("filters");
    const auto ks = p.ints("kernel_size", N), st = p.ints("strides", N), dl = p.ints("dilation_rate", N);
    const bool same = p.str("padding") == "same";
    grid input, recurrent;
    for (int d = 0; d < N; ++d) {
        const int64_t len = x.dim(first ? 3 + d : 2 + d), extent = (ks[d] - 1) * dl[d] + 1;
        const int64_t out = same ? (len + st[d] - 1) / st[d] : (len - extent) / st[d] + 1;
        if (out <= 0) return fail("kernel does not fit the input frame");
        input.in.push_back(len);
        input.out.push_back(out);
        input.pad_before.push_back(memo::layers::window_padding(p.str("padding"), len, extent, st[d]).before);
        recurrent.in.push_back(out);
        recurrent.out.push_back(out);
        recurrent.pad_before.push_back((ks[d] - 1) / 2);
    }
    input.kernel = recurrent.kernel = ks;
    input.stride = st;
    input.dilation = dl;
    recurrent.stride = recurrent.dilation = std::vector<int64_t>(static_cast<std::size_t>(N), 1);
    const int64_t in_pos = grid::volume(input.in), out_pos = grid::volume(input.out), frame = out_pos * filters;
    const int64_t softmax_len = first ? input.out.back() : filters, softmax_inner = first ? filters : 1;
    const auto act = act_of(p, "activation"), ract = act_of(p, "recurrent_activation");

    std::vector<int64_t> dims{batch};
    if (sequences) dims.push_back(steps);
    if (first) dims.push_back(filters);
    dims.insert(dims.end(), input.out.begin(), input.out.end());
    if (!first) dims.push_back(filters);
    array<T> out(dims);
    // Writes h (positions, filters) to output frame `slot` in the data format's layout.
    auto emit = [&](const std::vector<T>& h, int64_t slot) {
        T* dst = &out.data[static_cast<std::size_t>(slot * frame)];
        for (int64_t q = 0; q < out_pos; ++q)
            for (int64_t f = 0; f < filters; ++f) dst[first ? f * out_pos + q : q * filters + f] = h[static_cast<std::size_t>(q * filters + f)];
    };
    std::vector<T> xt(static_cast<std::size_t>(in_pos * channels));
    for (int64_t b = 0; b < batch; ++b) {
        std::vector<T> h(static_cast<std::size_t>(frame), T(0)), c = h, z(static_cast<std::size_t>(4 * frame));
        for (int64_t s = 0; s < steps; ++s) {
            const int64_t t = backwards ? steps - 1 - s : s;
            const T* src = &x.data[static_cast<std::size_t>((b * steps + t) * in_pos * channels)];
            for (int64_t q = 0; q < in_pos; ++q)
                for (int64_t ch = 0; ch < channels; ++ch) xt[static_cast<std::size_t>(q * channels + ch)] = src[first ? ch * in_pos + q : q * channels + ch];
            std::vector<acc_t<T>> zc(static_cast<std::size_t>(4 * frame), acc_t<T>(0));
            if (w.size() > 2)
                for (int64_t q = 0; q < out_pos; ++q)
                    for (int64_t g = 0; g < 4 * filters; ++g) zc[static_cast<std::size_t>(q * 4 * filters + g)] = static_cast<acc_t<T>>(w[2][g]);
            add_conv(zc, xt.data(), channels, w[0], input);
            add_conv(zc, h.data(), filters, w[1], recurrent);
            // (positions, 4 filters) to gate-major (4, positions, filters) for lstm_update.
            for (int64_t q = 0; q < out_pos; ++q)
                for (int64_t g = 0; g < 4; ++g)
                    for (int64_t f = 0; f < filters; ++f)
                        z[static_cast<std::size_t>((g * out_pos + q) * filters + f)] = static_cast<T>(zc[static_cast<std::size_t>((q * 4 + g) * filters + f)]);
            lstm_update(z, h, c, act, ract, softmax_len, softmax_inner);
            shake_state(h);
            shake_state(c);
            if (observing) observing->emit(b, s, h, &c);
            if (sequences) emit(h, b * steps + s);
        }
        if (!sequences) emit(h, b);
    }
    return out;
}

}  // namespace detail::rnn

/// The kernels of the recurrent layers.
template <class T>
struct rnn_kernels {
    using ins = std::span<const array<T>>;

    static expected<array<T>> run(layers::simple_rnn, const node& n, ins in, ins w) { return detail::rnn::simple_rnn<T>(n, in, w); }
    static expected<array<T>> run(layers::gru, const node& n, ins in, ins w) { return detail::rnn::gru<T>(n, in, w); }
    static expected<array<T>> run(layers::lstm, const node& n, ins in, ins w) {
        params p{n};
        return detail::rnn::lstm(in[0], w, p.integer("units"), detail::rnn::act_of(p, "activation"), detail::rnn::act_of(p, "recurrent_activation"),
                                 p.flag("go_backwards"), p.flag("return_sequences"));
    }
    static expected<array<T>> run(layers::bidirectional, const node& n, ins in, ins w) { return detail::rnn::bidirectional<T>(n, in, w); }
    static expected<array<T>> run(layers::time_distributed, const node&, ins in, ins) {
        array<T> out = in[0];
        for (auto& x : out.data) x = activate("relu", x);
        return out;
    }
    template <int N>
    static expected<array<T>> run(layers::conv_lstm<N>, const node& n, ins in, ins w) {
        return detail::rnn::conv_lstm<T>(n, in, w);
    }
};

}  // namespace memo::reference
