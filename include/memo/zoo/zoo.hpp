#pragma once
// The seed models: MEMO's ten seed architectures at their published sizes, built layer for layer
// as their Keras definitions build them (classes, parameter values and layer names), so that a
// model's nodes are Keras' model.layers (for the Sequential seeds, plus their input).
//
//   memo::model m = memo::zoo::build("resnet50-imagenet");   // 177 nodes, output (None, 1000)
//   std::int64_t w = memo::count_weights(m);             // 25,636,712
//
//   name                           Keras definition                   nodes  weights
//   lenet5-mnist                   LeNet-5 (Sequential)                   9       61,706
//   alexnet-cifar10                AlexNet for CIFAR-10 (Sequential)     18   21,592,330
//   densenet121-imagenet           keras.applications.DenseNet121       429    8,062,504
//   inception.resnet.v2-imagenet   keras.applications.InceptionResNetV2 782   55,873,736
//   inception.v3-imagenet          keras.applications.InceptionV3       313   23,851,784
//   mobilenet.v2-imagenet          keras.applications.MobileNetV2       156    3,538,984
//   resnet50-imagenet              keras.applications.ResNet50          177   25,636,712
//   xception-imagenet              keras.applications.Xception          134   22,910,480
//   lstm0-sinewave                 sine-wave LSTM (Sequential)            6       70,901
//   lstm2-price                    stock-price LSTM (Sequential)          4       26,626
//
// Every model has weight seed 0. See each architecture's header for its source.
#include <array>
#include <span>
#include <string>
#include <string_view>

#include "../core/builder.hpp"
#include "../engine/error.hpp"
#include "../layers/all.hpp"
#include "../layers/weights.hpp"
#include "densenet.hpp"
#include "inception.hpp"
#include "mobilenet.hpp"
#include "resnet.hpp"
#include "small.hpp"
#include "xception.hpp"

namespace memo::zoo {

namespace detail {
inline constexpr std::array<std::string_view, 10> seed_names{"lenet5-mnist",          "alexnet-cifar10",
                                                             "densenet121-imagenet",  "inception.resnet.v2-imagenet",
                                                             "inception.v3-imagenet", "mobilenet.v2-imagenet",
                                                             "resnet50-imagenet",     "xception-imagenet",
                                                             "lstm0-sinewave",        "lstm2-price"};
using seed_fn = model (*)(const registry&);
inline constexpr std::array<seed_fn, 10> seed_builders{&zoo::lenet5_mnist,  &zoo::alexnet_cifar10, &zoo::densenet121, &zoo::inception_resnet_v2,
                                                       &zoo::inception_v3,  &zoo::mobilenet_v2,    &zoo::resnet50,    &zoo::xception,
                                                       &zoo::lstm_sinewave, &zoo::lstm_price};
}  // namespace detail

/// The names of the ten seed models, in MEMO's order.
inline std::span<const std::string_view> names() { return detail::seed_names; }

/// The seed model called `name`, over the registry `reg` (which must hold the Keras classes the
/// model uses). Throws memo::error for an unknown name, listing the known ones.
inline model build(std::string_view name, const registry& reg = default_registry()) {
    for (std::size_t i = 0; i < detail::seed_names.size(); ++i)
        if (detail::seed_names[i] == name) return detail::seed_builders[i](reg);
    std::string known;
    for (auto n : detail::seed_names) known += (known.empty() ? "" : ", ") + std::string(n);
    throw error("unknown seed model '" + std::string(name) + "'; the zoo has: " + known);
}

}  // namespace memo::zoo
