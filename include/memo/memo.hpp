#pragma once
// memo: coverage-guided generation of diverse, valid deep-learning models for testing DL
// libraries. The umbrella header: everything that needs only Eigen, fmt, range-v3 and
// nlohmann-json. Backends with heavy dependencies (libtorch, ONNX) have headers of their own.
#include "core/builder.hpp"
#include "core/domain.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/layer.hpp"
#include "core/model.hpp"
#include "core/rng.hpp"
#include "core/shape.hpp"
#include "core/value.hpp"
#include "coverage/coverage.hpp"
#include "coverage/universe.hpp"
#include "io/json.hpp"
#include "io/keras.hpp"
#include "layers/all.hpp"
