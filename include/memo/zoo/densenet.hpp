#pragma once
// DenseNet121 as keras.applications.DenseNet121 builds it (keras/applications/densenet.py, Keras
// 2.8: blocks [6, 12, 24, 16], growth rate 32, BatchNormalization epsilon 1.001e-5, convolutions
// without bias), include_top=True, 224x224x3: 429 layers with the input, 8,062,504 weights.
#include "blocks.hpp"

namespace memo::zoo {

namespace detail::densenet {

using namespace blocks;
inline constexpr double eps = 1.001e-5;

/// conv_block: BN -> relu -> 1x1 conv (4 x growth) -> BN -> relu -> 3x3 conv (growth), concatenated
/// onto the input.
inline int conv_block(keras_builder& b, int x, std::int64_t growth, const std::string& name) {
    int x1 = batch_norm(b, x, eps, name + "_0_bn");
    x1 = activation(b, x1, "relu", name + "_0_relu");
    x1 = conv2d(b, x1, 4 * growth, {1, 1}, {1, 1}, "valid", false, name + "_1_conv");
    x1 = batch_norm(b, x1, eps, name + "_1_bn");
    x1 = activation(b, x1, "relu", name + "_1_relu");
    x1 = conv2d(b, x1, growth, {3, 3}, {1, 1}, "same", false, name + "_2_conv");
    return concat(b, {x, x1}, name + "_concat");
}

inline int dense_block(keras_builder& b, int x, int count, const std::string& name) {
    for (int i = 0; i < count; ++i) x = conv_block(b, x, 32, name + "_block" + std::to_string(i + 1));
    return x;
}

/// transition_block: BN -> relu -> 1x1 conv to channels x reduction -> 2x2 average pooling.
inline int transition_block(keras_builder& b, int x, double reduction, const std::string& name) {
    x = batch_norm(b, x, eps, name + "_bn");
    x = activation(b, x, "relu", name + "_relu");
    const auto filters = static_cast<std::int64_t>(static_cast<double>(b.channels(x)) * reduction);
    x = conv2d(b, x, filters, {1, 1}, {1, 1}, "valid", false, name + "_conv");
    return avg_pool(b, x, {2, 2}, {2, 2}, "valid", name + "_pool");
}

}  // namespace detail::densenet

/// keras.applications.DenseNet121(include_top=True, weights=None), input 224x224x3.
inline model densenet121(const registry& reg = default_registry()) {
    using namespace detail::densenet;
    keras_builder b(reg);
    int x = b.input({224, 224, 3});
    x = zero_pad(b, x, 3, 3, 3, 3);
    x = conv2d(b, x, 64, {7, 7}, {2, 2}, "valid", false, "conv1/conv");
    x = batch_norm(b, x, eps, "conv1/bn");
    x = activation(b, x, "relu", "conv1/relu");
    x = zero_pad(b, x, 1, 1, 1, 1);
    x = max_pool(b, x, {3, 3}, {2, 2}, "valid", "pool1");
    x = dense_block(b, x, 6, "conv2");
    x = transition_block(b, x, 0.5, "pool2");
    x = dense_block(b, x, 12, "conv3");
    x = transition_block(b, x, 0.5, "pool3");
    x = dense_block(b, x, 24, "conv4");
    x = transition_block(b, x, 0.5, "pool4");
    x = dense_block(b, x, 16, "conv5");
    x = batch_norm(b, x, eps, "bn");
    x = activation(b, x, "relu", "relu");
    return b.finish(imagenet_top(b, x));
}

}  // namespace memo::zoo
