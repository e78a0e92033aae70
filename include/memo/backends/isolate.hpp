#pragma once
// A backend in its own worker process. The worker is forked once and serves runs over two pipes
// until it dies; the campaign sees a death (its signal), a time-out or a runaway memory use as a
// run result, and forks a fresh worker for the next run (process.hpp). The worker's loop,
// serve_backend, is also the main loop of a worker program started by exec that serves the same
// frames (memo-fuzz's memo-cuda-worker).
#include <functional>
#include <memory>
#include <string>

#include "executor.hpp"
#include "process.hpp"
#include "wire.hpp"

namespace memo {

/// A worker's loop: reads a request frame from `in`, runs it on `b`, writes the result frame to
/// `out`, until the campaign closes its end (or stops reading). A request that cannot be decoded or
/// whose run throws is answered with an `error` result; the loop goes on. Each result carries the
/// worker's own figures for the run: its CPU time, its peak resident memory, and its resident
/// memory when the run began. What a forked worker runs (isolated<B> below), and the main loop of a
/// worker program started by exec (memo-cuda-worker), so both serve the same frames.
template <backend B>
void serve_backend(B& b, const registry& reg, int in = 3, int out = 4) {
    using namespace detail::isolate;
    std::string frame;
    while (recv_frame(in, frame)) {
        run_result r;
        try {
            auto q = wire::decode_request(frame, reg);
            q.keep_drawn();
            reset_peak();
            const auto start = resident_kb(::getpid());
            const double cpu = own_cpu_ms();
            r = b.run(q.m, q.inputs, q.options);
            r.cpu_ms = own_cpu_ms() - cpu;
            r.peak_kb = peak_kb();
            r.start_kb = start;
            if (q.options.digest_nodes && q.options.every_node && r.ok()) r.digest_nodes(q.m);
        } catch (const std::exception& e) {
            r = run_result::failed(run_status::error, e.what());
        }
        if (!send_frame(out, wire::encode_result(r))) break;
    }
}

/// `isolated<B>`: runs backend B in a worker process. `make` builds the worker's backend after the
/// fork (so a library's threads and state start in the worker); the campaign's own copy answers
/// name() and supports().
template <backend B>
class isolated final : public executor {
public:
    isolated(std::function<B()> make, const registry& reg, isolation_limits lim = {})
        : make_(std::move(make)), local_(make_()), reg_(&reg), worker_([this] { serve(); }, lim) {}

    std::string_view name() const override { return local_.name(); }
    expected<void> supports(const model& m) const override { return local_.supports(m); }
    std::uint64_t restarts() const override { return worker_.restarts(); }
    pid_t worker_pid() const noexcept { return worker_.pid(); }
    bool ready() const override { return worker_.ready(); }
    int awaited_fd() const override { return worker_.awaited_fd(); }
    void abandon() override { worker_.abandon(); }
    double time_limit() const override { return worker_.limits().timeout_ms; }
    void set_time_limit(double ms) override { worker_.set_timeout_ms(ms); }
    std::int64_t memory_limit_mb() const override { return worker_.limits().memory_mb; }
    void set_memory_limit_mb(std::int64_t mb) override { worker_.set_memory_mb(mb); }

    void submit(const model& m, std::span<const tensor> inputs, const run_options& o) override { worker_.send(wire::encode_request(m, inputs, o)); }

    run_result collect() override {
        std::string frame;
        if (auto failed = worker_.receive(frame)) return std::move(*failed);
        try {
            auto r = wire::decode_result(frame);
            worker_.judge_late(r);
            return r;
        } catch (const std::exception& e) {
            return worker_.kill_worker(run_status::crash, std::string("unreadable worker result: ") + e.what());
        }
    }

private:
    /// The worker: builds its backend and serves runs until the campaign closes the pipe.
    [[noreturn]] void serve() {
        int code = 0;
        try {
            B b = make_();
            serve_backend(b, *reg_);
        } catch (...) {
            code = 3;
        }
        ::_exit(code);
    }

    std::function<B()> make_;
    B local_;
    const registry* reg_;
    worker_process worker_;
};

template <backend B>
std::unique_ptr<executor> make_isolated(std::function<B()> make, const registry& reg, isolation_limits lim = {}) {
    return std::make_unique<isolated<B>>(std::move(make), reg, lim);
}

}  // namespace memo
