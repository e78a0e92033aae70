#pragma once
// memo: coverage-guided generation of diverse, valid deep-learning models for testing DL
// libraries. This header is model generation: the model graph and its builder, the Keras layer
// registry, MEMO's coverage criteria, MEMO's and LEMON's mutation operators, the search
// (Algorithm 2), the zoo's seed models and their reduction. It needs the standard library alone.
//
// Running and judging models, model files and campaigns are in <memo/all.hpp> (which needs
// Eigen and nlohmann/json, and SQLite and {fmt} for campaigns: the memo::campaign target).
// Backends with heavy dependencies have headers of their own: <memo/backends/torch/backend.hpp>,
// <memo/onnx/...>, <memo/cluster/mpi.hpp>.
#include "core/builder.hpp"
#include "core/domain.hpp"
#include "core/dtype.hpp"
#include "core/hash.hpp"
#include "core/layer.hpp"
#include "core/model.hpp"
#include "core/shape.hpp"
#include "core/value.hpp"
#include "coverage/coverage.hpp"
#include "coverage/param_pairs.hpp"
#include "coverage/universe.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "layers/all.hpp"
#include "layers/cost.hpp"
#include "layers/weights.hpp"
#include "mutation/operators.hpp"
#include "reduce/reduce.hpp"
#include "search/search.hpp"
#include "zoo/zoo.hpp"
