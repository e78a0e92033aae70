#pragma once
// What memo-fuzz adds to memo::fuzz's commands, from the translation units that include the
// libraries (each is compiled only when memo-fuzz is built with that library).
#include <memo/fuzz/backends.hpp>

namespace memo_fuzz {

/// An NVIDIA GPU as the backend "cuda", or "cuda-tf32" with TF32 maths allowed: its runs go to
/// memo-cuda-worker, started by exec from beside memo-fuzz or at $MEMO_CUDA_WORKER
/// (cuda/cuda_backend.cpp; the worker is cuda/cuda_worker.cpp and cuda/cuda_device.cu).
memo::fuzz::backend_kind cuda_backend(const std::string& name);

/// ONNX Runtime as the backends "ort" and "ort-opt", .onnx model files, model.onnx in each bug's
/// directory, and the export-onnx and import-onnx commands (onnx/onnx_support.cpp).
void add_onnx(memo::fuzz::toolkit& t);

}  // namespace memo_fuzz
