#pragma once
// What every worker process must do, whatever library it runs (tests/tfjs, tests/onnx, tests/keras,
// tests/pytorch): killed while it holds a request, its run is a crash verdict with its signal, and
// the next run starts a fresh worker.
#include <signal.h>

#include <span>

#include <gtest/gtest.h>

#include <memo/all.hpp>

namespace test {

/// `r`, a fresh runtime, runs `m`; its worker is killed; the run submitted then is a crash with
/// SIGKILL, the one after it runs on a new worker.
template <class Runtime>
void killed_worker_is_a_crash_and_restarts(Runtime& r, const memo::model& m, std::span<const memo::tensor> in) {
    ASSERT_TRUE(r.run(m, in).ok());
    const pid_t first = r.worker_pid();
    ASSERT_GT(first, 0);
    // Killed before the request: once kill() returns the worker runs no more user code, so it
    // cannot answer first (killing after submit() raced a fast answer).
    ::kill(first, SIGKILL);
    r.submit(m, in, {});
    const auto dead = r.collect();
    EXPECT_EQ(dead.status, memo::run_status::crash) << dead.message;
    EXPECT_EQ(dead.signal, SIGKILL);
    EXPECT_EQ(r.restarts(), 1U);
    const auto again = r.run(m, in);
    EXPECT_TRUE(again.ok()) << again.message;
    EXPECT_NE(r.worker_pid(), first);
}

}  // namespace test
