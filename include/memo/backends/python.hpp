#pragma once
// The Python environment the Python workers run in (Keras 3's, PyTorch's, the ONNX worker's):
// which Python, which release of a package it holds, and why a worker cannot start there. Read
// from the environment's files, without starting Python.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace memo::python {

/// $MEMO_PYTHON where set, else `fallback` (a checkout's .venv/bin/python, which scripts/setup.sh
/// makes).
inline std::string interpreter(std::string fallback) {
    if (const char* env = std::getenv("MEMO_PYTHON"); env && *env) return env;
    return fallback;
}

/// The version of a package installed in the Python environment of `python` (from its
/// site-packages' dist-info folder), or empty.
inline std::string package_version(const std::string& python, std::string_view package) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path lib = fs::path(python).parent_path().parent_path() / "lib";
    if (!fs::is_directory(lib, ec)) return {};
    const std::string prefix = std::string(package) + "-";
    for (const auto& py : fs::directory_iterator(lib, ec)) {
        const fs::path site = py.path() / "site-packages";
        if (!fs::is_directory(site, ec)) continue;
        for (const auto& e : fs::directory_iterator(site, ec)) {
            const auto f = e.path().filename().string();
            if (f.starts_with(prefix) && f.ends_with(".dist-info")) return f.substr(prefix.size(), f.size() - prefix.size() - 10);
        }
    }
    return {};
}

/// Why a worker needing `package` (`library`, in words) cannot run under `python`; empty when it can.
inline std::string missing(const std::string& python, std::string_view package, std::string_view library) {
    std::error_code ec;
    if (!std::filesystem::exists(python, ec)) return "no Python at " + python + " (run scripts/setup.sh, or set MEMO_PYTHON)";
    if (package_version(python, package).empty()) return std::string(library) + " is not installed for " + python + " (run scripts/setup.sh)";
    return {};
}

}  // namespace memo::python
