#pragma once
// memo::worker_executor: the part every executor shares whose library runs in a worker process of
// its own, started by exec (ONNX Runtime's and TensorFlow.js' Node.js workers): the limits and
// restarts of its worker_process, a run settled before anything is sent (a model declined up
// front), and the figures each result gets from the worker's /proc (memory when the run began,
// its peak, CPU time). A subclass sends its request in submit() (after begin()) and reads the
// answer frame in decode().
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "executor.hpp"
#include "process.hpp"

namespace memo {

class worker_executor : public executor {
public:
    std::uint64_t restarts() const override { return worker_.restarts(); }
    bool ready() const override { return result_.has_value() || worker_.ready(); }
    int awaited_fd() const override { return result_ ? -1 : worker_.awaited_fd(); }
    double time_limit() const override { return worker_.limits().timeout_ms; }
    void set_time_limit(double ms) override { worker_.set_timeout_ms(ms); }
    std::int64_t memory_limit_mb() const override { return worker_.limits().memory_mb; }
    void set_memory_limit_mb(std::int64_t mb) override { worker_.set_memory_mb(mb); }
    void abandon() override {
        if (result_) result_.reset();
        else worker_.abandon();
    }
    /// The worker's process id, or -1 when none runs (it starts with the first model).
    pid_t worker_pid() const noexcept { return worker_.pid(); }

    run_result collect() override {
        if (result_) {
            auto r = std::move(*result_);
            result_.reset();
            return r;
        }
        std::string frame;
        run_result r;
        if (auto failed = worker_.receive(frame)) {
            r = std::move(*failed);
        } else {
            try {
                r = decode(frame);
                worker_.judge_late(r);
            } catch (const std::exception& e) {
                r = worker_.kill_worker(run_status::crash, std::string("unreadable worker result: ") + e.what());
            }
        }
        if (r.peak_kb == 0 && worker_.pid() > 0) r.peak_kb = detail::isolate::resident_kb(worker_.pid());
        if (r.start_kb == 0) r.start_kb = start_kb_;
        if (r.cpu_ms == 0 && worker_.pid() > 0 && start_cpu_ms_ > 0) r.cpu_ms = detail::isolate::cpu_ms_of(worker_.pid()) - start_cpu_ms_;
        return r;
    }

protected:
    /// A worker that runs `argv` (argv[0] looked up on PATH), with the given limits.
    worker_executor(std::vector<std::string> argv, isolation_limits limits)
        : worker_(
              [argv = std::move(argv), env = detail::isolate::worker_environment()] {
                  std::vector<char*> args, vars;
                  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
                  for (const auto& v : env) vars.push_back(const_cast<char*>(v.c_str()));
                  args.push_back(nullptr);
                  vars.push_back(nullptr);
                  ::execvpe(args[0], args.data(), vars.data());
                  std::fprintf(stderr, "cannot start %s: %s\n", args[0], std::strerror(errno));
                  ::_exit(127);
              },
              limits) {}

    /// The result of the run begun last, from the worker's answer frame.
    virtual run_result decode(std::string_view frame) = 0;

    /// Starts a run: forgets the last one's result and notes the worker's figures.
    void begin() {
        result_.reset();
        start_ = std::chrono::steady_clock::now();
        start_kb_ = worker_.pid() > 0 ? detail::isolate::resident_kb(worker_.pid()) : 0;
        start_cpu_ms_ = worker_.pid() > 0 ? detail::isolate::cpu_ms_of(worker_.pid()) : 0;
    }
    /// Ends the run begun last without the worker: collect() returns r.
    void settle(run_result r) {
        r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
        result_ = std::move(r);
    }
    worker_process& worker() noexcept { return worker_; }

private:
    worker_process worker_;
    std::optional<run_result> result_;
    std::chrono::steady_clock::time_point start_{};
    std::int64_t start_kb_ = 0;  // the worker's resident memory when the run was sent
    double start_cpu_ms_ = 0;    // and its CPU time
};

}  // namespace memo
