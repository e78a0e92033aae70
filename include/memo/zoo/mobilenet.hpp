#pragma once
// MobileNetV2 as keras.applications.MobileNetV2 builds it (keras/applications/mobilenet_v2.py,
// Keras 2.8), alpha 1.0, include_top=True, 224x224x3: 156 layers with the input, 3,538,984
// weights. Its ReLU(6.) layers are our ReLU with max_value 6.0; BatchNormalization has epsilon
// 1e-3 and momentum 0.999; the stride-2 blocks pad with imagenet_utils.correct_pad, which is
// ((0, 1), (0, 1)) on the even sizes 112, 56, 28 and 14 of a 224 input.
#include <algorithm>

#include "blocks.hpp"

namespace memo::zoo {

namespace detail::mobilenet {

using namespace blocks;

/// _make_divisible(v, 8): v rounded to the nearest multiple of 8, never below 90% of v.
inline std::int64_t make_divisible(double v, std::int64_t divisor = 8) {
    std::int64_t r = std::max<std::int64_t>(divisor, (static_cast<std::int64_t>(v + static_cast<double>(divisor) / 2) / divisor) * divisor);
    if (static_cast<double>(r) < 0.9 * v) r += divisor;
    return r;
}

inline int bn(keras_builder& b, int x, std::string name) { return batch_norm(b, x, 1e-3, std::move(name), true, 0.999); }

/// imagenet_utils.correct_pad for a 3x3 kernel: ((1 - h % 2 ... )) as (top, bottom, left, right).
inline int correct_pad(keras_builder& b, int x, std::string name) {
    const shape& s = b.shape_of(x);
    const std::int64_t adjust_h = 1 - s[1] % 2, adjust_w = 1 - s[2] % 2;
    return zero_pad(b, x, 1 - adjust_h, 1, 1 - adjust_w, 1, std::move(name));
}

/// _inverted_res_block: 1x1 expansion (not in block 0), 3x3 depthwise, 1x1 projection, and the
/// residual Add when the block keeps its shape.
inline int inverted_res_block(keras_builder& b, int inputs, std::int64_t expansion, std::int64_t stride, double alpha, std::int64_t filters, int block_id) {
    const std::int64_t in_channels = b.channels(inputs);
    const std::int64_t pointwise_filters = make_divisible(static_cast<double>(static_cast<std::int64_t>(static_cast<double>(filters) * alpha)));
    int x = inputs;
    std::string prefix = "block_" + std::to_string(block_id) + "_";
    if (block_id) {
        x = conv2d(b, x, expansion * in_channels, {1, 1}, {1, 1}, "same", false, prefix + "expand");
        x = bn(b, x, prefix + "expand_BN");
        x = relu(b, x, 6.0, prefix + "expand_relu");
    } else {
        prefix = "expanded_conv_";
    }
    if (stride == 2) x = correct_pad(b, x, prefix + "pad");
    x = depthwise_conv2d(b, x, {3, 3}, {stride, stride}, stride == 1 ? "same" : "valid", false, prefix + "depthwise");
    x = bn(b, x, prefix + "depthwise_BN");
    x = relu(b, x, 6.0, prefix + "depthwise_relu");
    x = conv2d(b, x, pointwise_filters, {1, 1}, {1, 1}, "same", false, prefix + "project");
    x = bn(b, x, prefix + "project_BN");
    if (in_channels == pointwise_filters && stride == 1) return add(b, {inputs, x}, prefix + "add");
    return x;
}

}  // namespace detail::mobilenet

/// keras.applications.MobileNetV2(alpha=1.0, include_top=True, weights=None), input 224x224x3.
inline model mobilenet_v2(const registry& reg = default_registry()) {
    using namespace detail::mobilenet;
    constexpr double alpha = 1.0;
    keras_builder b(reg);
    int x = b.input({224, 224, 3});
    x = conv2d(b, x, make_divisible(32 * alpha), {3, 3}, {2, 2}, "same", false, "Conv1");
    x = bn(b, x, "bn_Conv1");
    x = relu(b, x, 6.0, "Conv1_relu");

    struct stage {
        std::int64_t filters, stride, expansion;
    };
    // (filters, stride, expansion) of blocks 0..16
    constexpr stage stages[17] = {{16, 1, 1}, {24, 2, 6}, {24, 1, 6}, {32, 2, 6}, {32, 1, 6},  {32, 1, 6},  {64, 2, 6},  {64, 1, 6}, {64, 1, 6},
                                  {64, 1, 6}, {96, 1, 6}, {96, 1, 6}, {96, 1, 6}, {160, 2, 6}, {160, 1, 6}, {160, 1, 6}, {320, 1, 6}};
    for (int i = 0; i < 17; ++i) x = inverted_res_block(b, x, stages[i].expansion, stages[i].stride, alpha, stages[i].filters, i);

    const std::int64_t last_block_filters = alpha > 1.0 ? make_divisible(1280 * alpha) : 1280;
    x = conv2d(b, x, last_block_filters, {1, 1}, {1, 1}, "valid", false, "Conv_1");
    x = bn(b, x, "Conv_1_bn");
    x = relu(b, x, 6.0, "out_relu");
    return b.finish(imagenet_top(b, x, {}));
}

}  // namespace memo::zoo
