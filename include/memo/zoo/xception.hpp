#pragma once
// Xception as keras.applications.Xception builds it (keras/applications/xception.py, Keras 2.8),
// include_top=True, 299x299x3: 134 layers with the input (132 without the top), 22,910,480
// weights. Convolutions have no bias; BatchNormalization is at the default epsilon 1e-3. The
// residual 1x1 convolutions, their BatchNormalizations and the Adds are unnamed in the source,
// so they carry Keras' automatic names (conv2d, batch_normalization, add, ...).
#include "blocks.hpp"

namespace memo::zoo {

namespace detail::xception {

using namespace blocks;

inline int sepconv_bn(keras_builder& b, int x, std::int64_t filters, const std::string& name) {
    x = separable_conv2d(b, x, filters, {3, 3}, {1, 1}, "same", false, name);
    return batch_norm(b, x, 1e-3, name + "_bn");
}

/// A strided 1x1 conv + BN shortcut (created before the main path, as in the source).
inline int residual(keras_builder& b, int x, std::int64_t filters) {
    const int r = conv2d(b, x, filters, {1, 1}, {2, 2}, "same", false);
    return batch_norm(b, r, 1e-3);
}

}  // namespace detail::xception

/// keras.applications.Xception(include_top=True, weights=None), input 299x299x3.
inline model xception(const registry& reg = default_registry()) {
    using namespace detail::xception;
    keras_builder b(reg);
    int x = b.input({299, 299, 3});
    x = conv2d(b, x, 32, {3, 3}, {2, 2}, "valid", false, "block1_conv1");
    x = batch_norm(b, x, 1e-3, "block1_conv1_bn");
    x = activation(b, x, "relu", "block1_conv1_act");
    x = conv2d(b, x, 64, {3, 3}, {1, 1}, "valid", false, "block1_conv2");
    x = batch_norm(b, x, 1e-3, "block1_conv2_bn");
    x = activation(b, x, "relu", "block1_conv2_act");

    // block 2: no activation before the first separable conv
    int r = residual(b, x, 128);
    x = sepconv_bn(b, x, 128, "block2_sepconv1");
    x = activation(b, x, "relu", "block2_sepconv2_act");
    x = sepconv_bn(b, x, 128, "block2_sepconv2");
    x = max_pool(b, x, {3, 3}, {2, 2}, "same", "block2_pool");
    x = add(b, {x, r});

    // blocks 3 and 4
    const std::int64_t widths[2] = {256, 728};
    for (int i = 0; i < 2; ++i) {
        const std::string prefix = "block" + std::to_string(3 + i);
        r = residual(b, x, widths[i]);
        x = activation(b, x, "relu", prefix + "_sepconv1_act");
        x = sepconv_bn(b, x, widths[i], prefix + "_sepconv1");
        x = activation(b, x, "relu", prefix + "_sepconv2_act");
        x = sepconv_bn(b, x, widths[i], prefix + "_sepconv2");
        x = max_pool(b, x, {3, 3}, {2, 2}, "same", prefix + "_pool");
        x = add(b, {x, r});
    }

    // middle flow: blocks 5 to 12, identity shortcuts
    for (int i = 0; i < 8; ++i) {
        const std::string prefix = "block" + std::to_string(i + 5);
        r = x;
        for (int k = 1; k <= 3; ++k) {
            x = activation(b, x, "relu", prefix + "_sepconv" + std::to_string(k) + "_act");
            x = sepconv_bn(b, x, 728, prefix + "_sepconv" + std::to_string(k));
        }
        x = add(b, {x, r});
    }

    // block 13
    r = residual(b, x, 1024);
    x = activation(b, x, "relu", "block13_sepconv1_act");
    x = sepconv_bn(b, x, 728, "block13_sepconv1");
    x = activation(b, x, "relu", "block13_sepconv2_act");
    x = sepconv_bn(b, x, 1024, "block13_sepconv2");
    x = max_pool(b, x, {3, 3}, {2, 2}, "same", "block13_pool");
    x = add(b, {x, r});

    // block 14: activations after the batch normalizations
    x = sepconv_bn(b, x, 1536, "block14_sepconv1");
    x = activation(b, x, "relu", "block14_sepconv1_act");
    x = sepconv_bn(b, x, 2048, "block14_sepconv2");
    x = activation(b, x, "relu", "block14_sepconv2_act");
    return b.finish(imagenet_top(b, x));
}

}  // namespace memo::zoo
