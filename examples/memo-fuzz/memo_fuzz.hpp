#pragma once
// What memo-fuzz adds to memo::fuzz's commands, from the translation units that include the
// libraries (each is compiled only when memo-fuzz is built with that library).
#include <string>

#include <memo/backends/python.hpp>
#include <memo/fuzz/backends.hpp>

namespace memo_fuzz {

/// The Python that runs the Python workers: $MEMO_PYTHON, or the checkout's .venv/ (scripts/setup.sh).
inline std::string python() { return memo::python::interpreter(MEMO_SOURCE_DIR "/.venv/bin/python"); }

/// The time a run may spend compiling, apart from its own limit: twelve times it (two minutes at
/// the default 10 s). Inductor took 135 s to compile a model with a GRU on a loaded machine, Keras'
/// TimeDistributed over 1,917 steps minutes in XLA: a compile past it is declined as too long.
inline double compile_limit(const memo::isolation_limits& lim) { return 12 * lim.timeout_ms; }

/// An NVIDIA GPU as the backend "cuda", or "cuda-tf32" with TF32 maths allowed: its runs go to
/// memo-cuda-worker, started by exec from beside memo-fuzz or at $MEMO_CUDA_WORKER
/// (cuda/cuda_backend.cpp; the worker is cuda/cuda_worker.cpp and cuda/cuda_device.cu).
memo::fuzz::backend_kind cuda_backend(const std::string& name);

/// The libraries that run memo's ONNX export as backends (ONNX Runtime's npm release: "ort",
/// "ort-opt"; its PyPI release, OpenVINO and TVM: "ort-py", "openvino", "tvm", ...), .onnx model
/// files, model.onnx in each bug's directory, and the export-onnx and import-onnx commands
/// (onnx/onnx_support.cpp).
void add_onnx(memo::fuzz::toolkit& t);

}  // namespace memo_fuzz
