#pragma once
// MEMO's and LEMON's operator sets (engine/operators.hpp: what an operator set is).
#include "../engine/operators.hpp"
#include "graph_ops.hpp"
#include "lemon_ops.hpp"
#include "memo_ops.hpp"

namespace memo::mutation {

/// MEMO's operators: the paper's seven and its code's MDims and MDtype; and memo's GPair, which
/// places a producer before a consumer of a graph pair not yet covered (graph_ops.hpp).
using memo_operators = operator_set<nla, lresh, lmerge, lconn, cshape, cmode, nan_input, mdims, mdtype, gpair>;
/// LEMON's operators (the ablation MEMO_o).
using lemon_operators = operator_set<layer_removal, layer_switch, layer_duplication, layer_addition, activation_removal, activation_replacement,
                                     gaussian_fuzzing, neuron_effect_block, neuron_activation_inverse, neuron_switch>;

}  // namespace memo::mutation
