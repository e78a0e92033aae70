#pragma once
// What the zoo's architectures share: a builder that names layers the way Keras does, and one
// helper per Keras layer call the definitions make (Conv2D, BatchNormalization, ...), each taking
// the values the Keras source passes and leaving the rest at Keras' defaults.
//
// Keras' automatic names: a layer created without a name is called after its class in snake case
// (Conv2D -> conv2d, BatchNormalization -> batch_normalization, ReLU -> re_lu), the first one plain
// and later ones with _1, _2, ... (`backend.unique_object_name`, zero based); named layers do not
// count. A functional model's input is `input_1`; a Sequential model's is the first layer's name
// followed by `_input`. The names below are those of a fresh Keras session.
//
// Channel axes: Keras passes axis=3 (channels_last) to BatchNormalization and Concatenate in
// several applications; our registry spells the last axis -1, which is the same axis there.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../core/builder.hpp"
#include "../layers/all.hpp"

namespace memo::zoo {

namespace detail {

/// Keras' generic_utils.to_snake_case for class names: an underscore before an upper-case letter
/// that starts a lower-case run (not at the start) or follows a lower-case letter, then lower case.
inline std::string to_snake_case(std::string_view cls) {
    auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
    auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    std::string s;
    s.reserve(cls.size() + 4);
    for (std::size_t i = 0; i < cls.size(); ++i) {
        const char c = cls[i];
        if (upper(c) && i > 0) {
            const bool starts_word = i + 1 < cls.size() && (lower(cls[i + 1]) || digit(cls[i + 1]));
            if (starts_word || lower(cls[i - 1])) s += '_';
        }
        s += upper(c) ? static_cast<char>(c - 'A' + 'a') : c;
    }
    return s;
}

/// A memo::builder that names every layer: the name given, or Keras' automatic one.
class keras_builder {
public:
    explicit keras_builder(const registry& reg) : b_(reg) { counts_.reserve(16); }

    /// A functional model's input (named input_1, as Keras' first Input()).
    int input(std::initializer_list<std::int64_t> dims, std::string name = "input_1") {
        ints d;
        for (auto x : dims) d.push(x);
        return b_.add("InputLayer", {}, {{"shape", d}, {"dtype", std::string("float32")}}, std::move(name));
    }

    /// A layer of class `cls`; without a name it gets Keras' automatic one.
    int add(std::string_view cls, std::vector<int> inputs, std::initializer_list<std::pair<std::string_view, value>> params, std::string name = {}) {
        if (name.empty()) name = auto_name(cls);
        return b_.add(cls, std::move(inputs), params, std::move(name));
    }

    /// The automatic name the next unnamed layer of class `cls` gets (and counts it).
    std::string auto_name(std::string_view cls) {
        std::string base = to_snake_case(cls);
        int& k = counts_[base];
        std::string name = k == 0 ? base : base + "_" + std::to_string(k);
        ++k;
        return name;
    }

    const shape& shape_of(int node) const { return b_.shape_of(node); }
    std::int64_t channels(int node) const { return shape_of(node).back(); }

    /// The validated model with this output and weight seed 0.
    model finish(int output) {
        b_.output(output);
        b_.seed(0);
        return b_.finish();
    }

private:
    builder b_;
    std::unordered_map<std::string, int> counts_;
};

inline std::string str(std::string_view s) { return std::string(s); }

}  // namespace detail

namespace blocks {

using detail::keras_builder;

/// Conv2D(filters, kernel, strides=strides, padding=padding, use_bias=use_bias, activation=...).
inline int conv2d(keras_builder& b, int x, std::int64_t filters, ints kernel, ints strides = {1, 1}, std::string_view padding = "valid", bool use_bias = true,
                  std::string name = {}, std::string_view activation = "linear") {
    return b.add("Conv2D", {x},
                 {{"filters", filters},
                  {"kernel_size", kernel},
                  {"strides", strides},
                  {"padding", detail::str(padding)},
                  {"use_bias", use_bias},
                  {"activation", detail::str(activation)}},
                 std::move(name));
}

/// SeparableConv2D(filters, kernel, strides, padding, use_bias).
inline int separable_conv2d(keras_builder& b, int x, std::int64_t filters, ints kernel, ints strides = {1, 1}, std::string_view padding = "valid",
                            bool use_bias = true, std::string name = {}) {
    return b.add("SeparableConv2D", {x},
                 {{"filters", filters}, {"kernel_size", kernel}, {"strides", strides}, {"padding", detail::str(padding)}, {"use_bias", use_bias}},
                 std::move(name));
}

/// DepthwiseConv2D(kernel, strides, padding, use_bias), depth_multiplier 1.
inline int depthwise_conv2d(keras_builder& b, int x, ints kernel, ints strides, std::string_view padding, bool use_bias, std::string name = {}) {
    return b.add("DepthwiseConv2D", {x}, {{"kernel_size", kernel}, {"strides", strides}, {"padding", detail::str(padding)}, {"use_bias", use_bias}},
                 std::move(name));
}

/// BatchNormalization(axis=-1, epsilon, momentum, scale).
inline int batch_norm(keras_builder& b, int x, double epsilon = 1e-3, std::string name = {}, bool scale = true, double momentum = 0.99) {
    return b.add("BatchNormalization", {x}, {{"axis", std::int64_t{-1}}, {"epsilon", epsilon}, {"momentum", momentum}, {"scale", scale}}, std::move(name));
}

/// Activation(activation).
inline int activation(keras_builder& b, int x, std::string_view act, std::string name = {}) {
    return b.add("Activation", {x}, {{"activation", detail::str(act)}}, std::move(name));
}

/// ReLU(max_value) (MobileNetV2's ReLU(6.)).
inline int relu(keras_builder& b, int x, double max_value, std::string name = {}) { return b.add("ReLU", {x}, {{"max_value", max_value}}, std::move(name)); }

/// ZeroPadding2D(((top, bottom), (left, right))).
inline int zero_pad(keras_builder& b, int x, std::int64_t top, std::int64_t bottom, std::int64_t left, std::int64_t right, std::string name = {}) {
    return b.add("ZeroPadding2D", {x}, {{"padding", ints{top, bottom, left, right}}}, std::move(name));
}

/// MaxPooling2D(pool, strides, padding).
inline int max_pool(keras_builder& b, int x, ints pool, ints strides, std::string_view padding = "valid", std::string name = {}) {
    return b.add("MaxPooling2D", {x}, {{"pool_size", pool}, {"strides", strides}, {"padding", detail::str(padding)}}, std::move(name));
}

/// AveragePooling2D(pool, strides, padding).
inline int avg_pool(keras_builder& b, int x, ints pool, ints strides, std::string_view padding = "valid", std::string name = {}) {
    return b.add("AveragePooling2D", {x}, {{"pool_size", pool}, {"strides", strides}, {"padding", detail::str(padding)}}, std::move(name));
}

/// GlobalAveragePooling2D().
inline int global_avg_pool(keras_builder& b, int x, std::string name = {}) { return b.add("GlobalAveragePooling2D", {x}, {}, std::move(name)); }

/// Dense(units, activation).
inline int dense(keras_builder& b, int x, std::int64_t units, std::string_view act = "linear", std::string name = {}) {
    return b.add("Dense", {x}, {{"units", units}, {"activation", detail::str(act)}}, std::move(name));
}

/// Concatenate(axis=-1)(xs).
inline int concat(keras_builder& b, std::vector<int> xs, std::string name = {}) {
    return b.add("Concatenate", std::move(xs), {{"axis", std::int64_t{-1}}}, std::move(name));
}

/// Add()(xs).
inline int add(keras_builder& b, std::vector<int> xs, std::string name = {}) { return b.add("Add", std::move(xs), {}, std::move(name)); }

/// The ImageNet head of the Keras applications: GlobalAveragePooling2D, then Dense(1000, softmax)
/// named predictions.
inline int imagenet_top(keras_builder& b, int x, std::string pool_name = "avg_pool") {
    x = global_avg_pool(b, x, std::move(pool_name));
    return dense(b, x, 1000, "softmax", "predictions");
}

}  // namespace blocks

}  // namespace memo::zoo
