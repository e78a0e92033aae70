#pragma once
// The four small seed models LEMON trained and MEMO reused: LeNet-5 on MNIST, an AlexNet for
// CIFAR-10, and two LSTM regressors. All four are Keras Sequential models, whose `model.layers`
// leaves the input out: each has one node more here than Keras counts layers. Their inputs carry
// the name Keras gives a Sequential model's input (the first layer's name + "_input").
//
// Sources (the public repositories LEMON's README links as the seeds' origins), checked against
// the first layers that MEMO's reduced seeds (tests/data/memo/synthesized_models) keep:
//
//   lenet5-mnist     lucaaslb/lenet5-mnist, cnn/__init__.py (LeNet5.build(28, 28, 1, 10)):
//                    Conv2D(6, 5x5, same) -> MaxPooling2D(2x2) -> Conv2D(16, 5x5) -> MaxPooling2D ->
//                    Flatten -> Dense(120) -> Dense(84) -> Dense(10, softmax), ReLU after each
//                    hidden layer. MEMO's seed keeps the first Conv2D with activation='relu', so
//                    the activations are folded into their layers here (as in LEMON's .h5), not
//                    separate Activation layers: 8 Keras layers, 61,706 weights.
//   alexnet-cifar10  the AlexNet of toxtli/alexnet-cifar-10-keras-jupyter, after
//                    jkh911208/cswithjames 8_CIFAR10_alexnet.py, whose first layer MEMO's seed keeps
//                    (Conv2D(96, 3x3, strides 2, same, relu) on 32x32x3): 17 Keras layers,
//                    21,592,330 weights.
//   lstm0-sinewave   jaungiers/LSTM-Neural-Network-for-Time-Series-Prediction, core/model.py built
//                    from config_sinewave.json: LSTM(50, input (49, 1), return_sequences) ->
//                    Dropout(0.05) -> LSTM(100) -> Dropout(0.05) -> Dense(1, linear). The (49, 1)
//                    input and 50 units MEMO's seed keeps are this version's (the older lstm.py
//                    takes (50, 1) and ends in Dense + Activation('linear')): 5 Keras layers,
//                    70,901 weights.
//   lstm2-price      omerbsezer/LSTM_RNN_Tutorials_with_Demo, pricePredictionLSTM.py:
//                    LSTM(25, input (1, 240)) -> Dropout(0.1) -> Dense(1): 3 Keras layers, 26,626
//                    weights.
#include "blocks.hpp"

namespace memo::zoo {

/// LeNet-5 for MNIST (28x28x1, 10 classes).
inline model lenet5_mnist(const registry& reg = default_registry()) {
    using namespace blocks;
    keras_builder b(reg);
    int x = b.input({28, 28, 1}, "conv2d_input");
    x = conv2d(b, x, 6, {5, 5}, {1, 1}, "same", true, {}, "relu");
    x = max_pool(b, x, {2, 2}, {2, 2});
    x = conv2d(b, x, 16, {5, 5}, {1, 1}, "valid", true, {}, "relu");
    x = max_pool(b, x, {2, 2}, {2, 2});
    x = b.add("Flatten", {x}, {});
    x = dense(b, x, 120, "relu");
    x = dense(b, x, 84, "relu");
    return b.finish(dense(b, x, 10, "softmax"));
}

/// AlexNet for CIFAR-10 (32x32x3, 10 classes), BatchNormalization in place of local response
/// normalization.
inline model alexnet_cifar10(const registry& reg = default_registry()) {
    using namespace blocks;
    keras_builder b(reg);
    int x = b.input({32, 32, 3}, "conv2d_input");
    x = conv2d(b, x, 96, {3, 3}, {2, 2}, "same", true, {}, "relu");
    x = max_pool(b, x, {2, 2}, {2, 2});
    x = batch_norm(b, x);
    x = conv2d(b, x, 256, {5, 5}, {1, 1}, "same", true, {}, "relu");
    x = max_pool(b, x, {3, 3}, {2, 2});
    x = batch_norm(b, x);
    x = conv2d(b, x, 384, {3, 3}, {1, 1}, "same", true, {}, "relu");
    x = conv2d(b, x, 384, {3, 3}, {1, 1}, "same", true, {}, "relu");
    x = conv2d(b, x, 256, {3, 3}, {1, 1}, "same", true, {}, "relu");
    x = max_pool(b, x, {3, 3}, {2, 2});
    x = batch_norm(b, x);
    x = b.add("Flatten", {x}, {});
    x = dense(b, x, 4096, "tanh");
    x = b.add("Dropout", {x}, {{"rate", 0.5}});
    x = dense(b, x, 4096, "tanh");
    x = b.add("Dropout", {x}, {{"rate", 0.5}});
    return b.finish(dense(b, x, 10, "softmax"));
}

/// The sine-wave LSTM regressor: 49 steps of 1 feature in, the next value out.
inline model lstm_sinewave(const registry& reg = default_registry()) {
    blocks::keras_builder b(reg);
    int x = b.input({49, 1}, "lstm_input");
    x = b.add("LSTM", {x}, {{"units", std::int64_t{50}}, {"return_sequences", true}});
    x = b.add("Dropout", {x}, {{"rate", 0.05}});
    x = b.add("LSTM", {x}, {{"units", std::int64_t{100}}, {"return_sequences", false}});
    x = b.add("Dropout", {x}, {{"rate", 0.05}});
    return b.finish(blocks::dense(b, x, 1, "linear"));
}

/// The stock-price LSTM regressor: one step of the last 240 closing prices in, the next one out.
inline model lstm_price(const registry& reg = default_registry()) {
    blocks::keras_builder b(reg);
    int x = b.input({1, 240}, "lstm_input");
    x = b.add("LSTM", {x}, {{"units", std::int64_t{25}}});
    x = b.add("Dropout", {x}, {{"rate", 0.1}});
    return b.finish(blocks::dense(b, x, 1));
}

}  // namespace memo::zoo
