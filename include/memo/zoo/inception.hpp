#pragma once
// InceptionV3 and InceptionResNetV2 as keras.applications builds them (Keras 2.8:
// keras/applications/inception_v3.py and inception_resnet_v2.py), include_top=True, 299x299x3.
//
//   InceptionV3        313 layers with the input, 23,851,784 weights
//   InceptionResNetV2  782 layers with the input, 55,873,736 weights
//
// Both use a conv2d_bn helper: Conv2D without bias, BatchNormalization(scale=False) at the default
// epsilon 1e-3, then an Activation. InceptionResNetV2's residual scaling (a Lambda computing
// inputs[0] + inputs[1] * scale) is our CustomScaleLayer over (shortcut, branch).
#include "blocks.hpp"

namespace memo::zoo {

namespace detail::inception {

using namespace blocks;

/// inception_v3.conv2d_bn: Conv2D(use_bias=False) -> BatchNormalization(scale=False) ->
/// Activation('relu'); named name_conv, name_bn and name when a name is given.
inline int v3_conv_bn(keras_builder& b, int x, std::int64_t filters, std::int64_t rows, std::int64_t cols, std::string_view padding = "same",
                      std::int64_t stride = 1, const std::string& name = {}) {
    x = conv2d(b, x, filters, {rows, cols}, {stride, stride}, padding, false, name.empty() ? std::string{} : name + "_conv");
    x = batch_norm(b, x, 1e-3, name.empty() ? std::string{} : name + "_bn", false);
    return activation(b, x, "relu", name);
}

/// inception_resnet_v2.conv2d_bn: Conv2D(use_bias) -> BatchNormalization(scale=False) unless
/// use_bias -> Activation unless activation is empty; named name, name_bn, name_ac.
inline int v2_conv_bn(keras_builder& b, int x, std::int64_t filters, ints kernel, std::int64_t stride = 1, std::string_view padding = "same",
                      std::string_view act = "relu", bool use_bias = false, const std::string& name = {}) {
    x = conv2d(b, x, filters, kernel, {stride, stride}, padding, use_bias, name);
    if (!use_bias) x = batch_norm(b, x, 1e-3, name.empty() ? std::string{} : name + "_bn", false);
    if (!act.empty()) x = activation(b, x, act, name.empty() ? std::string{} : name + "_ac");
    return x;
}

/// inception_resnet_v2.inception_resnet_block: the branches, their concatenation, a 1x1 conv with
/// bias back to the input's channels, the scaled residual sum and (unless act is empty) an Activation.
inline int resnet_block(keras_builder& b, int x, double scale, std::string_view type, int idx, std::string_view act = "relu") {
    std::vector<int> branches;
    if (type == "block35") {
        const int b0 = v2_conv_bn(b, x, 32, {1, 1});
        int b1 = v2_conv_bn(b, x, 32, {1, 1});
        b1 = v2_conv_bn(b, b1, 32, {3, 3});
        int b2 = v2_conv_bn(b, x, 32, {1, 1});
        b2 = v2_conv_bn(b, b2, 48, {3, 3});
        b2 = v2_conv_bn(b, b2, 64, {3, 3});
        branches = {b0, b1, b2};
    } else if (type == "block17") {
        const int b0 = v2_conv_bn(b, x, 192, {1, 1});
        int b1 = v2_conv_bn(b, x, 128, {1, 1});
        b1 = v2_conv_bn(b, b1, 160, {1, 7});
        b1 = v2_conv_bn(b, b1, 192, {7, 1});
        branches = {b0, b1};
    } else {  // block8
        const int b0 = v2_conv_bn(b, x, 192, {1, 1});
        int b1 = v2_conv_bn(b, x, 192, {1, 1});
        b1 = v2_conv_bn(b, b1, 224, {1, 3});
        b1 = v2_conv_bn(b, b1, 256, {3, 1});
        branches = {b0, b1};
    }
    const std::string block = std::string(type) + "_" + std::to_string(idx);
    const int mixed = concat(b, std::move(branches), block + "_mixed");
    const int up = v2_conv_bn(b, mixed, b.channels(x), {1, 1}, 1, "same", "", true, block + "_conv");
    x = b.add("CustomScaleLayer", {x, up}, {{"scale", scale}}, block);
    if (!act.empty()) x = activation(b, x, act, block + "_ac");
    return x;
}

}  // namespace detail::inception

/// keras.applications.InceptionV3(include_top=True, weights=None), input 299x299x3.
inline model inception_v3(const registry& reg = default_registry()) {
    using namespace blocks;
    using detail::inception::v3_conv_bn;
    keras_builder b(reg);
    int x = b.input({299, 299, 3});
    x = v3_conv_bn(b, x, 32, 3, 3, "valid", 2);
    x = v3_conv_bn(b, x, 32, 3, 3, "valid");
    x = v3_conv_bn(b, x, 64, 3, 3);
    x = max_pool(b, x, {3, 3}, {2, 2});
    x = v3_conv_bn(b, x, 80, 1, 1, "valid");
    x = v3_conv_bn(b, x, 192, 3, 3, "valid");
    x = max_pool(b, x, {3, 3}, {2, 2});

    // mixed 0, 1, 2: 35 x 35 x 256 (the pool branch has 32 filters in mixed0, 64 after)
    for (int i = 0; i < 3; ++i) {
        const int b1x1 = v3_conv_bn(b, x, 64, 1, 1);
        int b5x5 = v3_conv_bn(b, x, 48, 1, 1);
        b5x5 = v3_conv_bn(b, b5x5, 64, 5, 5);
        int b3x3dbl = v3_conv_bn(b, x, 64, 1, 1);
        b3x3dbl = v3_conv_bn(b, b3x3dbl, 96, 3, 3);
        b3x3dbl = v3_conv_bn(b, b3x3dbl, 96, 3, 3);
        int pool = avg_pool(b, x, {3, 3}, {1, 1}, "same");
        pool = v3_conv_bn(b, pool, i == 0 ? 32 : 64, 1, 1);
        x = concat(b, {b1x1, b5x5, b3x3dbl, pool}, "mixed" + std::to_string(i));
    }

    // mixed 3: 17 x 17 x 768
    {
        const int b3x3 = v3_conv_bn(b, x, 384, 3, 3, "valid", 2);
        int b3x3dbl = v3_conv_bn(b, x, 64, 1, 1);
        b3x3dbl = v3_conv_bn(b, b3x3dbl, 96, 3, 3);
        b3x3dbl = v3_conv_bn(b, b3x3dbl, 96, 3, 3, "valid", 2);
        const int pool = max_pool(b, x, {3, 3}, {2, 2});
        x = concat(b, {b3x3, b3x3dbl, pool}, "mixed3");
    }

    // mixed 4 (128 filters in the 7x7 branches), 5, 6 (160), 7 (192): 17 x 17 x 768
    const std::int64_t widths[4] = {128, 160, 160, 192};
    for (int i = 0; i < 4; ++i) {
        const std::int64_t c = widths[i];
        const int b1x1 = v3_conv_bn(b, x, 192, 1, 1);
        int b7x7 = v3_conv_bn(b, x, c, 1, 1);
        b7x7 = v3_conv_bn(b, b7x7, c, 1, 7);
        b7x7 = v3_conv_bn(b, b7x7, 192, 7, 1);
        int b7x7dbl = v3_conv_bn(b, x, c, 1, 1);
        b7x7dbl = v3_conv_bn(b, b7x7dbl, c, 7, 1);
        b7x7dbl = v3_conv_bn(b, b7x7dbl, c, 1, 7);
        b7x7dbl = v3_conv_bn(b, b7x7dbl, c, 7, 1);
        b7x7dbl = v3_conv_bn(b, b7x7dbl, 192, 1, 7);
        int pool = avg_pool(b, x, {3, 3}, {1, 1}, "same");
        pool = v3_conv_bn(b, pool, 192, 1, 1);
        x = concat(b, {b1x1, b7x7, b7x7dbl, pool}, "mixed" + std::to_string(4 + i));
    }

    // mixed 8: 8 x 8 x 1280
    {
        int b3x3 = v3_conv_bn(b, x, 192, 1, 1);
        b3x3 = v3_conv_bn(b, b3x3, 320, 3, 3, "valid", 2);
        int b7x7x3 = v3_conv_bn(b, x, 192, 1, 1);
        b7x7x3 = v3_conv_bn(b, b7x7x3, 192, 1, 7);
        b7x7x3 = v3_conv_bn(b, b7x7x3, 192, 7, 1);
        b7x7x3 = v3_conv_bn(b, b7x7x3, 192, 3, 3, "valid", 2);
        const int pool = max_pool(b, x, {3, 3}, {2, 2});
        x = concat(b, {b3x3, b7x7x3, pool}, "mixed8");
    }

    // mixed 9, 10: 8 x 8 x 2048
    for (int i = 0; i < 2; ++i) {
        const int b1x1 = v3_conv_bn(b, x, 320, 1, 1);
        int b3x3 = v3_conv_bn(b, x, 384, 1, 1);
        const int b3x3_1 = v3_conv_bn(b, b3x3, 384, 1, 3);
        const int b3x3_2 = v3_conv_bn(b, b3x3, 384, 3, 1);
        b3x3 = concat(b, {b3x3_1, b3x3_2}, "mixed9_" + std::to_string(i));
        int b3x3dbl = v3_conv_bn(b, x, 448, 1, 1);
        b3x3dbl = v3_conv_bn(b, b3x3dbl, 384, 3, 3);
        const int b3x3dbl_1 = v3_conv_bn(b, b3x3dbl, 384, 1, 3);
        const int b3x3dbl_2 = v3_conv_bn(b, b3x3dbl, 384, 3, 1);
        b3x3dbl = concat(b, {b3x3dbl_1, b3x3dbl_2});
        int pool = avg_pool(b, x, {3, 3}, {1, 1}, "same");
        pool = v3_conv_bn(b, pool, 192, 1, 1);
        x = concat(b, {b1x1, b3x3, b3x3dbl, pool}, "mixed" + std::to_string(9 + i));
    }
    return b.finish(imagenet_top(b, x));
}

/// keras.applications.InceptionResNetV2(include_top=True, weights=None), input 299x299x3.
inline model inception_resnet_v2(const registry& reg = default_registry()) {
    using namespace blocks;
    using detail::inception::resnet_block;
    using detail::inception::v2_conv_bn;
    keras_builder b(reg);
    int x = b.input({299, 299, 3});

    // Stem block: 35 x 35 x 192
    x = v2_conv_bn(b, x, 32, {3, 3}, 2, "valid");
    x = v2_conv_bn(b, x, 32, {3, 3}, 1, "valid");
    x = v2_conv_bn(b, x, 64, {3, 3});
    x = max_pool(b, x, {3, 3}, {2, 2});
    x = v2_conv_bn(b, x, 80, {1, 1}, 1, "valid");
    x = v2_conv_bn(b, x, 192, {3, 3}, 1, "valid");
    x = max_pool(b, x, {3, 3}, {2, 2});

    // Mixed 5b (Inception-A block): 35 x 35 x 320
    {
        const int b0 = v2_conv_bn(b, x, 96, {1, 1});
        int b1 = v2_conv_bn(b, x, 48, {1, 1});
        b1 = v2_conv_bn(b, b1, 64, {5, 5});
        int b2 = v2_conv_bn(b, x, 64, {1, 1});
        b2 = v2_conv_bn(b, b2, 96, {3, 3});
        b2 = v2_conv_bn(b, b2, 96, {3, 3});
        int pool = avg_pool(b, x, {3, 3}, {1, 1}, "same");
        pool = v2_conv_bn(b, pool, 64, {1, 1});
        x = concat(b, {b0, b1, b2, pool}, "mixed_5b");
    }

    // 10x block35 (Inception-ResNet-A block): 35 x 35 x 320
    for (int i = 1; i <= 10; ++i) x = resnet_block(b, x, 0.17, "block35", i);

    // Mixed 6a (Reduction-A block): 17 x 17 x 1088
    {
        const int b0 = v2_conv_bn(b, x, 384, {3, 3}, 2, "valid");
        int b1 = v2_conv_bn(b, x, 256, {1, 1});
        b1 = v2_conv_bn(b, b1, 256, {3, 3});
        b1 = v2_conv_bn(b, b1, 384, {3, 3}, 2, "valid");
        const int pool = max_pool(b, x, {3, 3}, {2, 2}, "valid");
        x = concat(b, {b0, b1, pool}, "mixed_6a");
    }

    // 20x block17 (Inception-ResNet-B block): 17 x 17 x 1088
    for (int i = 1; i <= 20; ++i) x = resnet_block(b, x, 0.1, "block17", i);

    // Mixed 7a (Reduction-B block): 8 x 8 x 2080
    {
        int b0 = v2_conv_bn(b, x, 256, {1, 1});
        b0 = v2_conv_bn(b, b0, 384, {3, 3}, 2, "valid");
        int b1 = v2_conv_bn(b, x, 256, {1, 1});
        b1 = v2_conv_bn(b, b1, 288, {3, 3}, 2, "valid");
        int b2 = v2_conv_bn(b, x, 256, {1, 1});
        b2 = v2_conv_bn(b, b2, 288, {3, 3});
        b2 = v2_conv_bn(b, b2, 320, {3, 3}, 2, "valid");
        const int pool = max_pool(b, x, {3, 3}, {2, 2}, "valid");
        x = concat(b, {b0, b1, b2, pool}, "mixed_7a");
    }

    // 10x block8 (Inception-ResNet-C block): 8 x 8 x 2080, the last without activation
    for (int i = 1; i <= 9; ++i) x = resnet_block(b, x, 0.2, "block8", i);
    x = resnet_block(b, x, 1.0, "block8", 10, "");

    // Final convolution block: 8 x 8 x 1536
    x = v2_conv_bn(b, x, 1536, {1, 1}, 1, "same", "relu", false, "conv_7b");
    return b.finish(imagenet_top(b, x));
}

}  // namespace memo::zoo
