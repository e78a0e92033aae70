#pragma once
// memo-fuzz's ONNX commands: export-onnx and import-onnx (defined in onnx/onnx_support.cpp when
// memo-fuzz is built with ONNX; none otherwise).
#include <vector>

#include "cli.hpp"

namespace commands {

#ifdef MEMO_HAVE_ONNX
std::vector<cli::command> onnx_commands();
#else
inline std::vector<cli::command> onnx_commands() { return {}; }
#endif

}  // namespace commands
