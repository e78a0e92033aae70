#pragma once
// memo::shared_executor: one executor that serves several lanes of a campaign, one run at a time.
// A library whose worker takes seconds to start (Keras and PyTorch import for seconds) or that
// learns from the models it ran (the Keras worker keeps the layers it built for the next models)
// does better with one worker for all lanes than with one each: the lanes queue their runs on it,
// it is never idle while a lane waits, and the campaign's cores go to running models rather than
// to importing the same library three times.
//
// Each lane holds an executor of its own (lane()): its submit() queues the run, its ready() and
// collect() move the queue along, and its figures (time, memory, CPU) are its own run's, taken
// from when the run reached the worker.
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "executor.hpp"

namespace memo {

class shared_executor {
public:
    explicit shared_executor(std::unique_ptr<executor> x) : x_(std::move(x)) {}
    shared_executor(const shared_executor&) = delete;
    shared_executor& operator=(const shared_executor&) = delete;

    /// A lane's executor over the shared one (which it keeps alive).
    static std::unique_ptr<executor> lane(std::shared_ptr<shared_executor> s);

    executor& shared() noexcept { return *x_; }

private:
    class lane_executor;

    /// A run waiting for the worker, with copies of what the lane's call only lent.
    struct request {
        lane_executor* owner = nullptr;
        model m;
        std::vector<tensor> inputs, forced;
        run_options o;
        double time_limit = 0;
        std::int64_t memory_mb = 0;
    };

    void enqueue(request r) {
        queue_.push_back(std::move(r));
        pump();
    }
    /// Hands the answer of the run in flight to its lane when it has come, and sends the next.
    void pump();
    /// Blocks until `owner`'s run has its answer.
    void wait_for(const lane_executor& owner);
    /// Drops `owner`'s run, queued or in flight (a worker in the middle of it is stopped).
    void drop(const lane_executor& owner);
    void send_next();
    void finish();

    std::unique_ptr<executor> x_;
    std::deque<request> queue_;
    lane_executor* in_flight_ = nullptr;
    std::uint64_t restarts_before_ = 0;
};

class shared_executor::lane_executor final : public executor {
public:
    explicit lane_executor(std::shared_ptr<shared_executor> s) : s_(std::move(s)) {
        set_traceable(s_->x_->traceable());
        set_rounding(s_->x_->rounding());
        set_rewrites_graph(s_->x_->rewrites_graph());
        time_limit_ = s_->x_->time_limit();
        memory_mb_ = s_->x_->memory_limit_mb();
    }
    ~lane_executor() override { s_->drop(*this); }

    std::string_view name() const override { return s_->x_->name(); }
    expected<void> supports(const model& m) const override { return s_->x_->supports(m); }
    bool writes_reproducers() const override { return s_->x_->writes_reproducers(); }

    void submit(const model& m, std::span<const tensor> inputs, const run_options& o) override {
        s_->drop(*this);  // a run not collected is forgotten, as a worker's own executor does
        result_.reset();
        request r{this,        m,         std::vector<tensor>(inputs.begin(), inputs.end()), std::vector<tensor>(o.forced.begin(), o.forced.end()), o,
                  time_limit_, memory_mb_};
        s_->enqueue(std::move(r));
    }
    run_result collect() override {
        s_->wait_for(*this);
        auto r = std::move(*result_);
        result_.reset();
        return r;
    }
    // The lanes' calls are what move the queue: asking whether this lane's answer has come hands
    // any answer that has to its lane and sends the next run (the shared executor is not const).
    bool ready() const override {
        s_->pump();
        return result_.has_value();
    }
    /// The worker's descriptor while any lane's run is in flight: its answer lets the queue move.
    int awaited_fd() const override { return result_ ? -1 : s_->x_->awaited_fd(); }
    std::uint64_t restarts() const override { return restarts_; }
    void abandon() override {
        s_->drop(*this);
        result_.reset();
    }
    double time_limit() const override { return time_limit_; }
    void set_time_limit(double ms) override { time_limit_ = ms; }
    std::int64_t memory_limit_mb() const override { return memory_mb_; }
    void set_memory_limit_mb(std::int64_t mb) override { memory_mb_ = mb; }

private:
    friend class shared_executor;
    std::shared_ptr<shared_executor> s_;
    std::optional<run_result> result_;
    std::uint64_t restarts_ = 0;  // of the worker during this lane's runs
    double time_limit_ = 0;
    std::int64_t memory_mb_ = 0;
};

inline std::unique_ptr<executor> shared_executor::lane(std::shared_ptr<shared_executor> s) { return std::make_unique<lane_executor>(std::move(s)); }

inline void shared_executor::send_next() {
    auto& r = queue_.front();
    in_flight_ = r.owner;
    restarts_before_ = x_->restarts();
    x_->set_time_limit(r.time_limit);
    x_->set_memory_limit_mb(r.memory_mb);
    r.o.forced = r.forced;
    x_->submit(r.m, r.inputs, r.o);
    queue_.pop_front();
}

inline void shared_executor::finish() {
    auto* owner = std::exchange(in_flight_, nullptr);
    owner->result_ = x_->collect();
    owner->restarts_ += x_->restarts() - restarts_before_;
}

inline void shared_executor::pump() {
    for (;;) {
        if (in_flight_) {
            if (!x_->ready()) return;
            finish();
        }
        if (queue_.empty()) return;
        send_next();
    }
}

inline void shared_executor::wait_for(const lane_executor& owner) {
    while (!owner.result_) {
        if (!in_flight_) {
            if (queue_.empty()) throw error("collect() without submit() on a shared worker's lane");
            send_next();
        }
        finish();  // waits for the answer of the run in flight, whichever lane's it is
    }
}

inline void shared_executor::drop(const lane_executor& owner) {
    std::erase_if(queue_, [&](const request& r) { return r.owner == &owner; });
    if (in_flight_ == &owner) {
        x_->abandon();
        in_flight_ = nullptr;
        pump();
    }
}

}  // namespace memo
