#pragma once
// ONNX import: LSTM, GRU and RNN as Keras recurrent layers.
#include "selections.hpp"

namespace memo::onnx::detail {

/// Recurrent operators (one or two directions, their states unused or initial zeros).
class recurrent_ops : public select_ops {
public:
    using select_ops::select_ops;

protected:
    static std::string keras_activation(const std::string& onnx) {
        static const std::pair<std::string_view, std::string_view> names[] = {
            {"Sigmoid", "sigmoid"},   {"Tanh", "tanh"},         {"Relu", "relu"}, {"HardSigmoid", "hard_sigmoid"},
            {"Softsign", "softsign"}, {"Softplus", "softplus"}, {"Elu", "elu"}};
        for (const auto& [o, k] : names)
            if (o == onnx) return std::string(k);
        return {};
    }

    /// Keras' kernel (in, gates * units), recurrent kernel (units, gates * units) and bias per
    /// direction from ONNX's W (dirs, gates * units, in), R (dirs, gates * units, units) and B
    /// (dirs, 2 * gates * units: W's bias, then R's). ONNX orders an LSTM's gates i, o, f, c and
    /// Keras i, f, c, o; GRU's are z, r, h in both. Keras adds the two biases, except a GRU with
    /// reset_after, whose bias is (2, gates * units).
    std::vector<given_weights::one> cell_weights(i64 gates, i64 units, i64 in, i64 dirs, bool lstm, bool reset_after, bool bias) {
        static constexpr int lstm_gate[] = {0, 2, 3, 1};  // Keras' gate g is ONNX's lstm_gate[g]
        const auto W = weight_in(1, "W"), R = weight_in(2, "R");
        const auto B = has_input(3) ? weight_in(3, "B") : std::vector<double>(static_cast<std::size_t>(dirs * 2 * gates * units), 0.0);
        const auto gu = static_cast<std::size_t>(gates * units), u = static_cast<std::size_t>(units);
        auto onnx_row = [&](std::size_t col) {  // the ONNX row of Keras' column col
            const std::size_t g = col / u;
            return (lstm ? static_cast<std::size_t>(lstm_gate[g]) : g) * u + col % u;
        };
        std::vector<given_weights::one> ws;
        for (i64 d = 0; d < dirs; ++d) {
            const auto D = static_cast<std::size_t>(d);
            for (const auto* M : {&W, &R}) {
                const auto cols = static_cast<std::size_t>(M == &W ? in : units);
                std::vector<double> k(cols * gu);
                for (std::size_t i = 0; i < cols; ++i)
                    for (std::size_t c = 0; c < gu; ++c) k[i * gu + c] = (*M)[(D * gu + onnx_row(c)) * cols + i];
                ws.push_back({{static_cast<i64>(cols), gates * units}, std::move(k)});
            }
            if (!bias) continue;
            std::vector<double> b(reset_after ? 2 * gu : gu);
            for (std::size_t c = 0; c < gu; ++c) {
                const double wb = B[D * 2 * gu + onnx_row(c)], rb = B[D * 2 * gu + gu + onnx_row(c)];
                if (reset_after) b[c] = wb, b[gu + c] = rb;
                else b[c] = wb + rb;
            }
            ws.push_back({reset_after ? dims_t{2, gates * units} : dims_t{gates * units}, std::move(b)});
        }
        return ws;
    }

    /// The inputs and attributes of an ONNX recurrence memo's layers have no counterpart of: an
    /// error, or an inexact import (initial states other than zeros).
    void refuse_what_memo_lacks() {
        if (has_input(4)) fail("input sequence_lens is not supported (memo's sequences all have the full length)");
        for (int k = 5; k < n_->input_size(); ++k)
            if (has_input(k)) {
                if (k == 7) fail("input P (peepholes) is not supported");
                // memo's recurrent layers start from zeros, as exporters write initial states.
                const auto v = weight_in(k, k == 5 ? "initial_h" : "initial_c");
                if (std::any_of(v.begin(), v.end(), [](double e) { return e != 0; }))
                    inexact(input_label(k) + " is an initial state other than zeros: memo's starts from zeros");
            }
        if (attr("clip")) fail("attribute clip is not supported");
        if (attr("activation_alpha") || attr("activation_beta")) fail("attributes activation_alpha and activation_beta are not supported");
        if (const i64 f = attr_int("input_forget", 0); f != 0) fail("attribute input_forget=" + std::to_string(f) + " is not supported");
    }

    /// Keras' activation and recurrent_activation (empty for a SimpleRNN) of the activations ONNX
    /// names f, g (and h for LSTM) per direction.
    std::pair<std::string, std::string> recurrent_activations(bool lstm, bool gru, i64 dirs) {
        const std::size_t gates = lstm ? 4 : gru ? 3 : 1;
        const std::vector<std::string> defaults = lstm  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                                  : gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                        : std::vector<std::string>{"Tanh"};
        std::vector<std::string> acts = attr_strs("activations");
        if (acts.empty())
            for (int d = 0; d < dirs; ++d) acts.insert(acts.end(), defaults.begin(), defaults.end());
        if (acts.size() != defaults.size() * static_cast<std::size_t>(dirs))
            fail("attribute activations has " + std::to_string(acts.size()) + " entries, expected " +
                 std::to_string(defaults.size() * static_cast<std::size_t>(dirs)));
        if (lstm && acts[1] != acts[2]) fail("attribute activations is not supported (memo's LSTM takes one activation for g and h)");
        if (dirs == 2)
            for (std::size_t i = 0; i < acts.size(); ++i)
                if (acts[i] != defaults[i % defaults.size()]) fail("attribute activations is not supported (memo's Bidirectional takes the defaults only)");
        std::string act = keras_activation(gates == 1 ? acts[0] : acts[1]), rec = gates == 1 ? std::string() : keras_activation(acts[0]);
        if (act.empty() || (gates > 1 && rec.empty()))
            fail("attribute activations is not supported (activation " + (act.empty() ? acts[gates == 1 ? 0 : 1] : acts[0]) + ")");
        return {std::move(act), std::move(rec)};
    }

    void recurrent_op(const std::string& op) {
        const bool lstm = op == "LSTM", gru = op == "GRU";
        const i64 gates = lstm ? 4 : gru ? 3 : 1;
        const i64 layout = attr_int("layout", 0);
        if (layout != 0 && layout != 1) fail("attribute layout=" + std::to_string(layout) + " is not supported");
        const std::string direction = attr_str("direction", "forward");
        if (direction != "forward" && !(lstm && direction == "bidirectional"))
            fail("attribute direction='" + direction + "' is not supported (only 'forward', and 'bidirectional' for LSTM)");
        const i64 dirs = direction == "bidirectional" ? 2 : 1;
        const tval x0 = value_in(0);
        if (x0.onnx_rank() != 3) fail(input_label(0) + " has rank " + std::to_string(x0.onnx_rank()) + ", expected 3");
        const tval x = as_layout(input_name(0), x0, layout == 0 ? std::vector<int>{1, 0, 2} : identity_perm(3), op);
        const dims_t wd = const_dims(const_in(1, "W"), "the weight W");
        const_in(2, "R");
        if (wd.size() != 3 || wd[0] != dirs || wd[1] % gates != 0 || wd[1] == 0)
            fail("the weight W has shape " + list_str(wd) + ", expected (" + std::to_string(dirs) + ", " + std::to_string(gates) +
                 " * hidden_size, input_size)");
        const i64 units = wd[1] / gates;
        if (wd[2] != out_of(x).back()) fail("the weight W has shape " + list_str(wd) + " for " + std::to_string(out_of(x).back()) + " input features");
        if (const i64 h = attr_int("hidden_size", units); h != units)
            fail("attribute hidden_size=" + std::to_string(h) + " disagrees with W's shape " + list_str(wd));
        if (has_input(3)) const_in(3, "B");
        refuse_what_memo_lacks();
        const auto [act, rec] = recurrent_activations(lstm, gru, dirs);

        // memo's recurrent layers give one output: the sequence Y or the last state Y_h.
        const bool y = uses(0) > 0, yh = uses(1) > 0;
        if (lstm && uses(2) > 0) fail("output Y_c is used; memo's LSTM gives only Y or Y_h");
        if (y && yh) fail("outputs Y and Y_h are both used; memo's recurrent layers give one of them");
        int k;
        const bool reset_after = gru && attr_int("linear_before_reset", 0) != 0;
        if (dirs == 2) {
            k = emit("Bidirectional", {x.node}, {{"merge_mode", std::string("concat")}, {"units", units}, {"return_sequences", y}});
        } else {
            std::vector<kv> ps{{"units", units}, {"activation", act}, {"use_bias", has_input(3)}, {"return_sequences", y}};
            if (gates > 1) ps.push_back({"recurrent_activation", rec});
            if (gru) ps.push_back({"reset_after", reset_after});
            k = emit(lstm ? "LSTM" : gru ? "GRU" : "SimpleRNN", {x.node}, ps);
        }
        give(k, cell_weights(gates, units, wd[2], dirs, lstm, reset_after, dirs == 2 || has_input(3)));
        // Y is [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]), Y_h
        // [dirs, batch, hidden] ([batch, dirs, hidden]); memo's are (batch, seq, dirs * hidden)
        // and (batch, dirs * hidden).
        if (layout == 0) {
            set_out(0, tval{k, {2, 0, 3}, 1, dirs});
            set_out(1, tval{k, {1, 2}, 0, dirs});
        } else {
            set_out(0, tval{k, {0, 1, 3}, 2, dirs});
            set_out(1, tval{k, {0, 2}, 1, dirs});
        }
        if (n_->output_size() > 0 && !y && !n_->output(0).empty()) vals_.erase(n_->output(0));
        if (n_->output_size() > 1 && !yh && !n_->output(1).empty()) vals_.erase(n_->output(1));
    }
};

}  // namespace memo::onnx::detail
