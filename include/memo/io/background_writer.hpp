#pragma once
// Files written on a thread of their own, in the order given. A campaign writes a file for every
// model that raises coverage (queue/), hundreds a second at first; each costs a new directory
// entry and inode, which the campaign's thread, the one that feeds the libraries, need not wait
// for. flush() waits until everything handed over is on disk and rethrows the first failure (the
// file's name and the cause), as write_file would have thrown it.
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "json.hpp"

namespace memo::io {

class background_writer {
public:
    background_writer() : thread_([this] { loop(); }) {}
    background_writer(const background_writer&) = delete;
    background_writer& operator=(const background_writer&) = delete;

    /// Writes everything still waiting; a failure that nobody flushed for is reported on stderr.
    ~background_writer() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        thread_.join();
        if (failure_) try {
                std::rethrow_exception(failure_);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "memo: %s\n", e.what());
            }
    }

    /// Hands `text` over to be written to `path` (as write_file: whole, or not at all). A failure
    /// of an earlier write is thrown here, or by flush().
    void write(std::string path, std::string text) {
        {
            std::lock_guard lock(mutex_);
            rethrow_failure();
            waiting_.emplace_back(std::move(path), std::move(text));
        }
        wake_.notify_all();
    }

    /// Returns once every file handed over is written.
    void flush() {
        std::unique_lock lock(mutex_);
        done_.wait(lock, [&] { return waiting_.empty() && !busy_; });
        rethrow_failure();
    }

private:
    void rethrow_failure() {
        if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
    }

    void loop() {
        std::unique_lock lock(mutex_);
        for (;;) {
            wake_.wait(lock, [&] { return stopping_ || !waiting_.empty(); });
            if (waiting_.empty()) return;  // stopping, and nothing left
            auto [path, text] = std::move(waiting_.front());
            waiting_.pop_front();
            busy_ = true;
            lock.unlock();
            std::exception_ptr failed;
            try {
                write_file(path, text);
            } catch (...) {
                failed = std::current_exception();
            }
            lock.lock();
            busy_ = false;
            if (failed && !failure_) failure_ = failed;
            done_.notify_all();
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_, done_;
    std::deque<std::pair<std::string, std::string>> waiting_;
    std::exception_ptr failure_;
    bool busy_ = false, stopping_ = false;
    std::thread thread_;  // last: it starts once everything it uses is built
};

}  // namespace memo::io
