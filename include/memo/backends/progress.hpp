#pragma once
// Which node a backend is running, told to the parent of its worker. A backend that runs a model
// node by node (the reference interpreter, libtorch's) calls progress::at_node(i) before node i.
// In a worker (backends/process.hpp) the word lives in memory shared with the parent, so when the
// worker hangs, blows its memory limit or dies by a signal, the parent reads where: the verdict
// names that node's layer without re-running anything. Elsewhere the word is a local dummy.
#include <atomic>

namespace memo::progress {

/// Where at_node() writes: a local word, or the one a worker shares with its parent.
inline std::atomic<int>*& word() noexcept {
    static std::atomic<int> local{-1};
    static std::atomic<int>* w = &local;
    return w;
}

/// Node i is about to run (-1: no node is running).
inline void at_node(int i) noexcept { word()->store(i, std::memory_order_relaxed); }

}  // namespace memo::progress
