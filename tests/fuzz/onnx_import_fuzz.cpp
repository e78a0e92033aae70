// libFuzzer harness for the ONNX importer (scripts/fuzz-onnx-import.sh builds and runs it): any
// bytes must give a valid model or a memo::error. Another exception escaping, a crash, a hang or
// a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "memo/layers/all.hpp"
#include "memo/onnx/import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const memo::model m = memo::onnx::from_onnx_bytes(std::string_view(reinterpret_cast<const char*>(data), size), memo::default_registry(), "fuzz");
        if (!memo::validate(m)) __builtin_trap();  // the importer promises a validated model
    } catch (const memo::error&) {}
    return 0;
}
