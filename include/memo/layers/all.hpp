#pragma once
// The default registry: MEMO's 67 Keras classes, Dense and Input, the adapters, and the
// element-wise layers the metamorphic relations use.
#include "act.hpp"
#include "adapters.hpp"
#include "conv.hpp"
#include "core.hpp"
#include "elementwise.hpp"
#include "local.hpp"
#include "merge.hpp"
#include "norm.hpp"
#include "pool.hpp"
#include "reg.hpp"
#include "reshape.hpp"
#include "rnn.hpp"

namespace memo {

/// MEMO's layer universe: 67 Keras classes in 9 groups.
using keras_layers = concat<layers::conv_layers, layers::pool_layers, layers::rnn_layers, layers::norm_layers, layers::reg_layers, layers::act_layers,
                            layers::reshape_layers, layers::merge_layers, layers::local_layers>;
static_assert(keras_layers::size == 67, "MEMO's universe has 67 layer classes");

/// Everything a model may contain by default. Extend it with memo::concat<default_layers, ...>.
/// New classes go last, so that the classes before keep their indices.
using default_layers = concat<keras_layers, layers::core_layers, layers::adapter_layers, layers::elementwise_layers>;

/// The run-time registry of the default layers.
inline const registry& default_registry() { return registry_of<default_layers>(); }

}  // namespace memo
