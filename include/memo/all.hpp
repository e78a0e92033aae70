#pragma once
// Everything memo::memo and memo::campaign hold: model generation (<memo/memo.hpp>), model files
// (memo's JSON, Keras'), execution (tensors, weights, inputs, the reference interpreter, worker
// processes), the oracles, campaigns and their store, one campaign over several processes, and
// reports. Needs Eigen and nlohmann/json (header-only), SQLite and {fmt} (link memo::campaign),
// and Linux for the worker processes. Backends with heavy dependencies (libtorch, ONNX, MPI) have
// headers of their own: <memo/backends/torch/backend.hpp>, <memo/onnx/...>, <memo/cluster/mpi.hpp>.
#include "memo.hpp"

#include "backends/backend.hpp"
#include "backends/executor.hpp"
#include "backends/isolate.hpp"
#include "backends/reference/interpreter.hpp"
#include "campaign/bugs.hpp"
#include "campaign/execute.hpp"
#include "campaign/generate.hpp"
#include "campaign/seeds.hpp"
#include "cluster/communicator.hpp"
#include "cluster/exchange.hpp"
#include "coverage/checkpoint.hpp"
#include "coverage/input_range.hpp"
#include "exec/budget.hpp"
#include "exec/digest.hpp"
#include "exec/inputs.hpp"
#include "exec/tensor.hpp"
#include "exec/values.hpp"
#include "exec/weights.hpp"
#include "io/json.hpp"
#include "io/keras.hpp"
#include "metamorphic/relations.hpp"
#include "oracle/differential.hpp"
#include "oracle/metamorphic.hpp"
#include "oracle/oracle.hpp"
#include "oracle/resources.hpp"
#include "oracle/tester.hpp"
#include "report/report.hpp"
#include "state/input_fuzz.hpp"
#include "state/rnn_coverage.hpp"
#include "store/replay.hpp"
#include "store/store.hpp"
