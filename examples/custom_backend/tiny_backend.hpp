#pragma once
// tiny_nn wrapped as a memo backend: the whole of the glue between a DL library and memo.
//
//   name()       what verdicts and reports call it
//   supports(m)  whether tiny_nn can run model m; if not, why, naming the layer (memo then leaves
//                the model to the backends that take it, instead of reporting a crash)
//   run(m, in)   the model's outputs; every node's with run_options::every_node; teacher-forced
//                (each node fed given tensors) with run_options::forced, which the oracle uses to
//                pin a difference on one node
//
// Plus `tiny_layers`: the registry of layers tiny_nn can run, so that the search only generates
// models made of them.
#include <algorithm>
#include <exception>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <memo/all.hpp>

#include "tiny_nn.hpp"

namespace tiny_memo {

/// What the search may put in a model: the universe classes tiny_nn implements, Dense, Activation
/// and Input (seed material), and memo's adapters (the mutation operators insert them to repair
/// shapes and dtypes; the registry must hold them all, supports() declines the ones tiny_nn lacks).
using tiny_layers = memo::concat<memo::layer_list<memo::layers::relu, memo::layers::softmax, memo::layers::add, memo::layers::flatten, memo::layers::conv<1>,
                                                  memo::layers::dense, memo::layers::activation, memo::layers::input_layer>,
                                 memo::layers::adapter_layers>;

inline const memo::registry& registry() { return memo::registry_of<tiny_layers>(); }

class backend {
public:
    explicit backend(tiny::options o = {}, std::string name = "tiny") : o_(o), name_(std::move(name)) {}

    std::string_view name() const noexcept { return name_; }

    memo::expected<void> supports(const memo::model& m) const {
        for (const auto& n : m.nodes) {
            const std::string cls(n.layer->name);
            if (n.type != memo::dtype::float32) return memo::fail(cls + " in " + std::string(memo::name_of(n.type)) + ": tiny_nn computes in float32 only");
            if (cls == "Dense" || cls == "Conv1D" || cls == "Activation")
                if (!activation_of(n)) return memo::fail(cls + " with activation " + memo::to_string(n.param("activation")) + ": tiny_nn lacks it");
            if ((cls == "Conv1D" || cls == "Flatten") && memo::as_str(n.param("data_format")) != "channels_last")
                return memo::fail(cls + " with data_format 'channels_first': tiny_nn is channels-last only");
            if (!runs(cls)) return memo::fail(cls + ": tiny_nn has no such operation");
        }
        return {};
    }

    memo::run_result run(const memo::model& m, std::span<const memo::tensor> inputs, const memo::run_options& o) {
        if (o.precision && *o.precision != memo::dtype::float32)
            return memo::run_result::failed(memo::run_status::unsupported, "tiny_nn computes in float32 only");
        const bool forced = !o.forced.empty();
        std::vector<tiny::tensor> values(m.size());
        std::size_t next_input = 0;
        for (std::size_t i = 0; i < m.size(); ++i) {
            const memo::node& n = m.nodes[i];
            if (n.layer->arity.max == 0) {  // an Input node: the next of the given inputs
                if (next_input >= inputs.size()) return memo::run_result::failed(memo::run_status::error, "missing model input");
                values[i] = from_memo(inputs[next_input++]);
                continue;
            }
            // Forced: read the given tensors instead of our own producers' outputs.
            std::vector<tiny::tensor> fed;
            std::vector<const tiny::tensor*> in;
            for (int src : n.inputs) {
                const auto s = static_cast<std::size_t>(src);
                if (forced) fed.push_back(from_memo(o.forced[s]));
                else in.push_back(&values[s]);
            }
            for (const auto& t : fed) in.push_back(&t);
            try {
                values[i] = compute(m, static_cast<int>(i), in);
            } catch (const std::exception& e) {  // tiny_nn reports errors as exceptions
                auto r = memo::run_result::failed(memo::run_status::error, std::string(n.layer->name) + ": " + e.what());
                r.node = static_cast<int>(i);
                return r;
            }
            // tiny_nn computed its own output shape: a shape other than memo's is a shape verdict.
            const auto want = memo::concrete(n.out, values[i].shape.at(0));
            if (std::vector<std::int64_t>(values[i].shape.begin(), values[i].shape.end()) != want) {
                auto r = memo::run_result::failed(memo::run_status::invalid, std::string(n.layer->name) + ": tiny_nn's output shape differs from memo's");
                r.node = static_cast<int>(i);
                return r;
            }
        }
        memo::run_result r;
        if (forced || o.every_node)
            for (const auto& v : values) r.outputs.push_back(to_memo(v));
        else
            for (int out : m.outputs) r.outputs.push_back(to_memo(values[static_cast<std::size_t>(out)]));
        return r;
    }

private:
    static bool runs(std::string_view cls) {
        for (std::string_view known : {"InputLayer", "Dense", "Activation", "Conv1D", "ReLU", "Softmax", "Add", "Flatten", "Reshape", "CustomExpandLayer",
                                       "CustomDropDimLayer", "CustomPadLayer", "CustomCropLayer", "CustomCastLayer"})
            if (cls == known) return true;
        return false;  // CustomInjectLayer: tiny_nn cannot write NaN into a tensor
    }

    static std::optional<tiny::activation> activation_of(const memo::node& n) {
        const auto a = memo::as_str(n.param("activation"));
        if (a == "linear") return tiny::activation::linear;
        if (a == "relu") return tiny::activation::relu;
        if (a == "sigmoid") return tiny::activation::sigmoid;
        if (a == "tanh") return tiny::activation::tanh;
        if (a == "softmax") return tiny::activation::softmax;
        return std::nullopt;
    }

    // memo hands tensors and weights over as doubles in Keras' layouts; tiny_nn wants floats.
    static tiny::tensor from_memo(const memo::tensor& t) {
        tiny::tensor r(std::vector<long>(t.dims.begin(), t.dims.end()));
        for (std::size_t e = 0; e < r.size(); ++e) r.data[e] = static_cast<float>(t.data[e]);
        return r;
    }
    static memo::tensor to_memo(const tiny::tensor& t) {
        memo::tensor r(std::vector<std::int64_t>(t.shape.begin(), t.shape.end()), memo::dtype::float32);
        for (std::size_t e = 0; e < t.size(); ++e) r.data[e] = t.data[e];
        return r;
    }
    /// A Keras Dense kernel (in, out) as tiny_nn's (out, in).
    static tiny::tensor transposed(const memo::tensor& w) {
        const std::size_t rows = static_cast<std::size_t>(w.dims[0]), cols = static_cast<std::size_t>(w.dims[1]);
        tiny::tensor r({static_cast<long>(cols), static_cast<long>(rows)});
        for (std::size_t a = 0; a < rows; ++a)
            for (std::size_t b = 0; b < cols; ++b) r.data[b * rows + a] = static_cast<float>(w.data[a * cols + b]);
        return r;
    }

    tiny::tensor compute(const memo::model& m, int i, const std::vector<const tiny::tensor*>& in) const {
        const memo::node& n = m[i];
        const std::string_view cls = n.layer->name;
        const tiny::tensor& x = *in.at(0);
        const auto batch = x.shape.at(0);
        const auto out_shape = [&] {
            const auto d = memo::concrete(n.out, batch);
            return std::vector<long>(d.begin(), d.end());
        };
        if (cls == "Dense" || cls == "Conv1D") {
            // Weights are pure functions of the model's seed: every backend draws the same ones.
            const auto ws = memo::weights_of(m, i);
            const tiny::tensor bias = ws.size() > 1 ? from_memo(ws[1].value) : tiny::tensor{};
            if (cls == "Dense") return tiny::apply(tiny::dense(x, transposed(ws[0].value), bias), *activation_of(n), o_);
            // Keras' kernel (k, in, out) -> tiny_nn's (out, in, k).
            const auto& kw = ws[0].value;
            const long k = static_cast<long>(kw.dims[0]), cin = static_cast<long>(kw.dims[1]), cout = static_cast<long>(kw.dims[2]);
            tiny::tensor w({cout, cin, k});
            for (long t = 0; t < k; ++t)
                for (long c = 0; c < cin; ++c)
                    for (long f = 0; f < cout; ++f)
                        w.data[static_cast<std::size_t>((f * cin + c) * k + t)] =
                            static_cast<float>(kw.data[static_cast<std::size_t>((t * cin + c) * cout + f)]);
            // Keras' padding names as explicit amounts: "same" pads the odd element after.
            tiny::conv1d_options co;
            co.stride = memo::as_int(n.param("strides"));
            co.dilation = memo::as_int(n.param("dilation_rate"));
            const long reach = (k - 1) * co.dilation + 1, len = x.dim(1);
            const auto padding = memo::as_str(n.param("padding"));
            if (padding == "causal") co.pad_before = reach - 1;
            if (padding == "same") {
                const long total = std::max(0L, ((len + co.stride - 1) / co.stride - 1) * co.stride + reach - len);
                co.pad_before = total / 2;
                co.pad_after = total - total / 2;
            }
            return tiny::apply(tiny::conv1d(x, w, bias, co), *activation_of(n), o_);
        }
        if (cls == "Activation") return tiny::apply(x, *activation_of(n), o_);
        if (cls == "ReLU") {
            const auto& max = n.param("max_value");
            return tiny::relu(x, static_cast<float>(memo::as_real(n.param("negative_slope"))), static_cast<float>(memo::as_real(n.param("threshold"))),
                              memo::is_none(max) ? std::numeric_limits<float>::infinity() : static_cast<float>(memo::as_real(max)));
        }
        if (cls == "Softmax") return tiny::softmax(x, static_cast<int>(memo::as_int(n.param("axis"))), o_);
        if (cls == "Add") return tiny::add(in);
        if (cls == "CustomCastLayer") return x;  // float32 to float32 (supports() declined the rest)
        // Layers that only move elements: a reshape, or a window of the input.
        if (cls == "Flatten" || cls == "Reshape" || cls == "CustomExpandLayer") return tiny::reshape(x, out_shape());
        std::vector<long> offset(x.shape.size(), 0);
        if (cls == "CustomDropDimLayer") {  // index 0 along `axis`: a window of size 1 there, then a reshape
            auto one = x.shape;
            one.at(static_cast<std::size_t>(memo::as_int(n.param("axis")))) = 1;
            return tiny::reshape(tiny::window(x, offset, one), out_shape());
        }
        if (cls == "CustomPadLayer" || cls == "CustomCropLayer") {  // (before, after) per sample axis
            const bool pad = cls == "CustomPadLayer";
            const auto& amounts = std::get<memo::ints>(n.param(pad ? "padding" : "cropping"));
            for (std::size_t d = 1; d < offset.size(); ++d) offset[d] = (pad ? -1 : 1) * amounts[2 * static_cast<int>(d - 1)];
            return tiny::window(x, offset, out_shape(), pad ? static_cast<float>(memo::as_real(n.param("constant_values"))) : 0.0f);
        }
        throw std::invalid_argument("no operation for " + std::string(cls));
    }

    tiny::options o_;
    std::string name_;
};

static_assert(memo::backend<backend>);

/// Seed models, built by hand from layers tiny_nn runs (memo's zoo holds layers it lacks). None
/// holds a Softmax: finding the bug is left to the search.
inline std::vector<memo::model> seeds(const memo::registry& reg) {
    std::vector<memo::model> out;
    {  // a multi-layer perceptron
        memo::builder b(reg);
        int x = b.input({16});
        x = b.add("Dense", {x}, {{"units", 24}, {"activation", "relu"}});
        b.add("Dense", {x}, {{"units", 8}, {"activation", "tanh"}});
        out.push_back(b.finish());
    }
    {  // a 1-D convolutional net
        memo::builder b(reg);
        int x = b.input({20, 3});
        x = b.add("Conv1D", {x}, {{"filters", 6}, {"kernel_size", memo::ints{3}}, {"padding", "same"}, {"activation", "relu"}});
        x = b.add("Flatten", {x});
        b.add("Dense", {x}, {{"units", 4}, {"activation", "sigmoid"}});
        out.push_back(b.finish());
    }
    {  // a residual block
        memo::builder b(reg);
        const int x = b.input({12});
        int y = b.add("Dense", {x}, {{"units", 12}});
        y = b.add("ReLU", {y}, {{"max_value", 6.0}});
        y = b.add("Add", {x, y});
        b.add("Dense", {y}, {{"units", 3}, {"activation", "sigmoid"}});
        out.push_back(b.finish());
    }
    return out;
}

}  // namespace tiny_memo
