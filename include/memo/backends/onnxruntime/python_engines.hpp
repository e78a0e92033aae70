#pragma once
// The libraries behind the Python worker of the libraries that take ONNX (tools/onnx-worker), each
// at the settings memo runs it: ONNX Runtime's PyPI release (to check a finding on its newest
// release), OpenVINO and Apache TVM, two settings each whose difference is the library's own
// optimisations. A runtime (backend.hpp) runs one with
// `.program = {python, "tools/onnx-worker/worker.py", "--engine", e.engine}, .optimize = e.setting,
// .rounding = e.rounding`.
#include <string>
#include <vector>

#include "../executor.hpp"

namespace memo::ort {

/// One library at one setting: the backend's name, the worker's engine, the engine's setting
/// (--optimize), the PyPI package it runs, the library in words, and how its arithmetic rounds
/// where that is coarser than the model's dtypes.
struct python_engine {
    std::string name, engine, setting, package, library;
    arithmetic rounding{};
};

/// OpenVINO computes float64 in float32 at either precision; bf16 computes float32 (and float16)
/// in bfloat16.
inline std::vector<python_engine> python_engines() {
    arithmetic f64_as_f32, bf16;
    f64_as_f32.like[static_cast<std::size_t>(dtype::float64)] = dtype::float32;
    for (dtype t : {dtype::float16, dtype::float32, dtype::float64}) bf16.like[static_cast<std::size_t>(t)] = dtype::bfloat16;
    return {
        {"ort-py", "ort", "disabled", "onnxruntime", "ONNX Runtime (onnxruntime from PyPI, graph optimisations off)"},
        {"ort-py-opt", "ort", "all", "onnxruntime", "ONNX Runtime (onnxruntime from PyPI, all graph optimisations)"},
        {"openvino", "openvino", "f32", "openvino", "OpenVINO (ONNX frontend, CPU plugin, inference precision f32)", f64_as_f32},
        {"openvino-bf16", "openvino", "bf16", "openvino", "OpenVINO (ONNX frontend, CPU plugin, inference precision bf16)", bf16},
        {"tvm", "tvm", "default", "apache_tvm", "Apache TVM (Relax's ONNX frontend, llvm, the default optimisation level)"},
        {"tvm-O0", "tvm", "O0", "apache_tvm", "Apache TVM (Relax's ONNX frontend, llvm, optimisation level 0)"},
    };
}

}  // namespace memo::ort
