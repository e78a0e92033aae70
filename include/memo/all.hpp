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
#include "campaign/execute.hpp"
#include "campaign/generate.hpp"
#include "campaign/seeds.hpp"
#include "cluster/communicator.hpp"
#include "cluster/exchange.hpp"
#include "coverage/checkpoint.hpp"
#include "coverage/input_range.hpp"
#include "io/background_writer.hpp"
#include "io/json.hpp"
#include "io/keras.hpp"
#include "metamorphic/relations.hpp"
#include "oracle/differential.hpp"
#include "oracle/metamorphic.hpp"
#include "oracle/oracle.hpp"
#include "oracle/resources.hpp"
#include "oracle/tester.hpp"
#include "report/report.hpp"
#include "rnn_state/input_fuzz.hpp"
#include "rnn_state/rnn_coverage.hpp"
#include "store/bugs.hpp"
#include "store/replay.hpp"
#include "store/store.hpp"
#include "tensors/budget.hpp"
#include "tensors/digest.hpp"
#include "tensors/inputs.hpp"
#include "tensors/tensor.hpp"
#include "tensors/values.hpp"
#include "tensors/weights.hpp"
