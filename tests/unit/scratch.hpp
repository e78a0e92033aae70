#pragma once
// A test's files under the system's temporary directory, in one folder per test process that goes
// when the process ends: tests that write campaigns and stores leave nothing behind.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace test {

/// This process's scratch folder, made on first use and removed (with everything in it) at exit.
/// A child process forked by a test leaves it to its parent: it ends with _exit or a signal.
inline const std::filesystem::path& scratch_root() {
    struct folder {
        std::filesystem::path path = std::filesystem::temp_directory_path() / ("memo-unit-" + std::to_string(::getpid()));
        folder() { std::filesystem::create_directories(path); }
        ~folder() {
            std::error_code ignored;
            std::filesystem::remove_all(path, ignored);
        }
    };
    static const folder f;
    return f.path;
}

/// A fresh, empty folder `name` in the scratch folder.
inline std::filesystem::path scratch_dir(const std::string& name) {
    const auto d = scratch_root() / name;
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
}

}  // namespace test
