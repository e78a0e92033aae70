#pragma once
// ResNet50 as keras.applications.ResNet50 builds it (keras/applications/resnet.py, Keras 2.8:
// ResNet(stack_fn, preact=False, use_bias=True), stack1/block1), include_top=True, 224x224x3:
// 177 layers with the input, 25,636,712 weights.
#include "blocks.hpp"

namespace memo::zoo {

namespace detail::resnet {

using namespace blocks;

/// block1: the bottleneck residual block, with a 1x1 conv shortcut or the identity.
inline int block1(keras_builder& b, int x, std::int64_t filters, std::int64_t stride, bool conv_shortcut, const std::string& name) {
    constexpr double eps = 1.001e-5;
    int shortcut = x;
    if (conv_shortcut) {
        shortcut = conv2d(b, x, 4 * filters, {1, 1}, {stride, stride}, "valid", true, name + "_0_conv");
        shortcut = batch_norm(b, shortcut, eps, name + "_0_bn");
    }
    x = conv2d(b, x, filters, {1, 1}, {stride, stride}, "valid", true, name + "_1_conv");
    x = batch_norm(b, x, eps, name + "_1_bn");
    x = activation(b, x, "relu", name + "_1_relu");
    x = conv2d(b, x, filters, {3, 3}, {1, 1}, "same", true, name + "_2_conv");
    x = batch_norm(b, x, eps, name + "_2_bn");
    x = activation(b, x, "relu", name + "_2_relu");
    x = conv2d(b, x, 4 * filters, {1, 1}, {1, 1}, "valid", true, name + "_3_conv");
    x = batch_norm(b, x, eps, name + "_3_bn");
    x = add(b, {shortcut, x}, name + "_add");
    return activation(b, x, "relu", name + "_out");
}

/// stack1: `count` blocks, the first with a conv shortcut and stride `stride1`.
inline int stack1(keras_builder& b, int x, std::int64_t filters, int count, std::int64_t stride1, const std::string& name) {
    x = block1(b, x, filters, stride1, true, name + "_block1");
    for (int i = 2; i <= count; ++i) x = block1(b, x, filters, 1, false, name + "_block" + std::to_string(i));
    return x;
}

}  // namespace detail::resnet

/// keras.applications.ResNet50(include_top=True, weights=None), input 224x224x3.
inline model resnet50(const registry& reg = default_registry()) {
    using namespace detail::resnet;
    keras_builder b(reg);
    int x = b.input({224, 224, 3});
    x = zero_pad(b, x, 3, 3, 3, 3, "conv1_pad");
    x = conv2d(b, x, 64, {7, 7}, {2, 2}, "valid", true, "conv1_conv");
    x = batch_norm(b, x, 1.001e-5, "conv1_bn");
    x = activation(b, x, "relu", "conv1_relu");
    x = zero_pad(b, x, 1, 1, 1, 1, "pool1_pad");
    x = max_pool(b, x, {3, 3}, {2, 2}, "valid", "pool1_pool");
    x = stack1(b, x, 64, 3, 1, "conv2");
    x = stack1(b, x, 128, 4, 2, "conv3");
    x = stack1(b, x, 256, 6, 2, "conv4");
    x = stack1(b, x, 512, 3, 2, "conv5");
    return b.finish(imagenet_top(b, x));
}

}  // namespace memo::zoo
