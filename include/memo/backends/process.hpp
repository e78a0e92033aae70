#pragma once
// A worker process that speaks length-prefixed frames over two pipes (fd 3 in, fd 4 out in the
// worker), under a time limit per request and a resident-memory limit. A death (its signal and
// the last line it wrote to stderr), a time-out or a runaway memory use becomes a run result, and
// the next request starts a fresh worker. What runs in the worker is the caller's: a forked copy of
// the campaign serving a backend (isolate.hpp), or another program (the ONNX Runtime worker).
// Linux (fork, poll, memfd, /proc).
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backend.hpp"
#include "progress.hpp"

namespace memo {

struct isolation_limits {
    double timeout_ms = 10000;      // per run
    std::int64_t memory_mb = 4096;  // what the worker may add to its resident memory
    double startup_ms = 0;          // more time for the first run of a fresh worker (a Python library's imports)
    // The time a run may spend compiling, apart from timeout_ms, for a worker that tells its
    // phases (worker_process::phases); 0: compiling counts as running. A run still compiling past
    // it is declined ("compiles too long"), not a hang: a compiler's time grows with the model
    // (Keras' TimeDistributed unrolls its time axis into the program), a hung run's does not end.
    double compile_ms = 0;
};

namespace detail::isolate {

/// The byte a worker's heap is filled with, glibc's MALLOC_PERTURB_: memory a library allocates
/// holds ~fill, memory it frees fill. A kernel that reads memory it never wrote then answers wrong
/// at its first run and alike every run, not only once its heap holds an earlier run's values,
/// which a replay in a fresh worker would not meet (PyTorch's oneDNN conv3d, docs/findings.md).
/// Blocks of up to 1 KiB that glibc hands out from its thread cache stay as they were.
inline constexpr int heap_fill = 0xa5;

/// This process's environment with MALLOC_PERTURB_ set, for a worker that executes a program (a
/// forked worker sets its heap's fill with mallopt instead: its malloc has started already).
inline std::vector<std::string> worker_environment() {
    std::vector<std::string> env{"MALLOC_PERTURB_=" + std::to_string(heap_fill)};
    for (char** e = environ; *e; ++e)
        if (std::strncmp(*e, "MALLOC_PERTURB_=", 16) != 0) env.emplace_back(*e);
    return env;
}

/// Moves all `n` bytes by `io` (::read or ::write), however many calls it takes; false at an error
/// or the end of the stream.
template <class Byte, class Io>
bool transfer_all(int fd, Byte* p, std::size_t n, Io io) {
    while (n) {
        const ssize_t k = io(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k;
        n -= static_cast<std::size_t>(k);
    }
    return true;
}
inline bool write_all(int fd, const char* p, std::size_t n) {
    return transfer_all(fd, p, n, [](int f, const char* b, std::size_t c) { return ::write(f, b, c); });
}
inline bool read_all(int fd, char* p, std::size_t n) {
    return transfer_all(fd, p, n, [](int f, char* b, std::size_t c) { return ::read(f, b, c); });
}
inline bool send_frame(int fd, const std::string& s) {
    const std::uint64_t n = s.size();
    return write_all(fd, reinterpret_cast<const char*>(&n), sizeof n) && write_all(fd, s.data(), s.size());
}
inline bool recv_frame(int fd, std::string& s) {
    std::uint64_t n = 0;
    if (!read_all(fd, reinterpret_cast<char*>(&n), sizeof n)) return false;
    s.resize(n);
    return read_all(fd, s.data(), n);
}
/// Resident memory in KiB from an open /proc/<pid>/statm (read again from its start: the watch keeps
/// each worker's open, and reads it hundreds of times a second); 0 once the process is gone.
inline std::int64_t resident_kb_at(int statm_fd) {
    char text[128];
    const auto n = ::pread(statm_fd, text, sizeof text - 1, 0);
    if (n <= 0) return 0;
    text[n] = '\0';
    char* after_size = nullptr;
    (void)std::strtoll(text, &after_size, 10);  // the first field is the virtual size
    static const std::int64_t page_kb = ::sysconf(_SC_PAGESIZE) / 1024;
    return std::strtoll(after_size, nullptr, 10) * page_kb;
}
inline int open_statm(pid_t pid) { return ::open(("/proc/" + std::to_string(pid) + "/statm").c_str(), O_RDONLY | O_CLOEXEC); }
/// Resident memory of a process in KiB, from /proc/<pid>/statm.
inline std::int64_t resident_kb(pid_t pid) {
    const int fd = open_statm(pid);
    if (fd < 0) return 0;
    const auto kb = resident_kb_at(fd);
    ::close(fd);
    return kb;
}
/// CPU time (user and system, every thread) of a process in ms, from /proc/<pid>/stat: clock ticks.
/// Read twice a run for each worker: plain reads and strtoll, no streams.
inline double cpu_ms_of(pid_t pid) {
    const int fd = ::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char text[1024];
    const auto n = ::read(fd, text, sizeof text - 1);
    ::close(fd);
    if (n <= 0) return 0;
    text[n] = '\0';
    const char* at = std::strrchr(text, ')');  // the command name may hold spaces
    if (!at) return 0;
    ++at;
    // Fields 3 to 13 (state, ppid, ..., cmajflt), then 14 and 15: utime and stime.
    for (int k = 3; k <= 13; ++k) {
        while (*at == ' ') ++at;
        while (*at && *at != ' ') ++at;
    }
    char* end = nullptr;
    const auto utime = std::strtoll(at, &end, 10);
    const auto stime = std::strtoll(end, nullptr, 10);
    static const double tick_ms = 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
    return static_cast<double>(utime + stime) * tick_ms;
}
/// This process's own CPU time in ms, every thread's (CLOCK_PROCESS_CPUTIME_ID counts nanoseconds;
/// getrusage() may count whole clock ticks, far too coarse for runs of a few ms).
inline double own_cpu_ms() {
    timespec t{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1000.0 + static_cast<double>(t.tv_nsec) / 1e6;
}
/// This process's peak resident memory (VmHWM) in KiB.
inline std::int64_t peak_kb() {
    std::ifstream f("/proc/self/status");
    std::string key;
    std::int64_t v = 0;
    while (f >> key) {
        if (key == "VmHWM:") {
            f >> v;
            return v;
        }
        f.ignore(256, '\n');
    }
    return 0;
}
/// Resets VmHWM to the current resident size, so the next reading is this run's peak.
inline void reset_peak() {
    if (std::FILE* f = std::fopen("/proc/self/clear_refs", "w")) {
        std::fputs("5", f);
        std::fclose(f);
    }
}
inline std::string signal_text(int sig) {
    const char* d = ::strsignal(sig);
    return "worker killed by signal " + std::to_string(sig) + " (" + (d ? d : "?") + ")";
}

/// Watches every live worker's resident memory on its own clock, whatever the parent is doing
/// (waiting on another worker, judging, storing): a worker over its limit is killed there and then,
/// so a hog cannot grow while nobody looks. Its sample at the kill is kept for the verdict.
/// What counts is what the worker added to its resident size, above the lowest it was seen at: a
/// worker forked from a large campaign (libtorch loaded, or a sanitizer's shadow memory) starts
/// with the campaign's pages resident, which are not its own doing. A
/// kernel limit would be tighter, but RLIMIT_AS breaks the libraries under test (libtorch and ONNX
/// Runtime reserve large address ranges), and a cgroup cannot be made in most containers.
class memory_watch {
public:
    struct watched {
        pid_t pid = -1;
        std::int64_t limit_kb = 0;
        std::int64_t base_kb = 0;    // the lowest resident size seen (at the fork, then each sample)
        std::int64_t killed_kb = 0;  // the resident size it was killed at (0: not killed for memory)
    };
    static memory_watch& instance() {
        static auto* w = new memory_watch;  // never destroyed: a worker may end after main's statics
        return *w;
    }
    void watch(watched* w) {
        std::lock_guard lock(m_);
        list_.push_back({w, w->pid > 0 ? open_statm(w->pid) : -1});
        if (!started_) {
            std::thread([this] { loop(); }).detach();
            started_ = true;
        }
    }
    /// Stops watching w. Once it returns, w's process is never signalled by the watch: its pid may
    /// be reaped (and reused) safely.
    void forget(watched* w) {
        std::lock_guard lock(m_);
        std::erase_if(list_, [w](const entry& e) {
            if (e.w != w) return false;
            if (e.statm_fd >= 0) ::close(e.statm_fd);
            return true;
        });
    }
    void set_limit(watched* w, std::int64_t kb) {
        std::lock_guard lock(m_);
        w->limit_kb = kb;
    }
    /// w's state, read under the watch's lock.
    watched read(const watched* w) const {
        std::lock_guard lock(m_);
        return *w;
    }
    static constexpr auto period = std::chrono::milliseconds(4);

private:
    memory_watch() = default;
    void loop() {
        for (;;) {
            {
                std::lock_guard lock(m_);
                for (auto [w, statm_fd] : list_)
                    if (w->pid > 0 && w->killed_kb == 0) {
                        // A statm that could not be kept open (no descriptor left) is opened each time.
                        const auto rss = statm_fd >= 0 ? resident_kb_at(statm_fd) : resident_kb(w->pid);
                        if (rss <= 0) continue;  // gone already
                        w->base_kb = std::min(w->base_kb, rss);
                        if (rss - w->base_kb > w->limit_kb) {
                            ::kill(w->pid, SIGKILL);
                            w->killed_kb = rss;
                        }
                    }
            }
            std::this_thread::sleep_for(period);
        }
    }
    struct entry {
        watched* w;
        int statm_fd;  // its /proc/<pid>/statm, open while it is watched
    };
    mutable std::mutex m_;
    std::vector<entry> list_;
    bool started_ = false;
};

}  // namespace detail::isolate

/// One worker process at a time, started on demand.
class worker_process {
public:
    /// `body` runs in the forked child with its request pipe on fd 3, its result pipe on fd 4,
    /// stdout on /dev/null and stderr in a log the parent reads when the child dies. It should not
    /// return (exec or _exit); if it does, the child exits with status 0.
    worker_process(std::function<void()> body, isolation_limits lim) : body_(std::move(body)), lim_(lim) {
        ::signal(SIGPIPE, SIG_IGN);  // a dead worker must be a result, not the campaign's death
        // The word the worker's backend writes its running node to (backends/progress.hpp).
        if (void* p = ::mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0); p != MAP_FAILED)
            at_node_ = new (p) std::atomic<int>(-1);
    }
    ~worker_process() {
        stop();
        if (log_ >= 0) ::close(log_);
        if (at_node_) ::munmap(at_node_, sizeof(std::atomic<int>));
    }
    worker_process(const worker_process&) = delete;
    worker_process& operator=(const worker_process&) = delete;

    const isolation_limits& limits() const noexcept { return lim_; }
    void set_timeout_ms(double ms) noexcept { lim_.timeout_ms = ms; }
    void set_memory_mb(std::int64_t mb) {
        lim_.memory_mb = mb;
        detail::isolate::memory_watch::instance().set_limit(&watched_, mb * 1024);
    }
    std::uint64_t restarts() const noexcept { return restarts_; }
    pid_t pid() const noexcept { return pid_; }

    /// Sends one request, starting a worker first when none runs. False: the worker could not
    /// start or died before it read the request (receive() then says how).
    bool send(const std::string& frame) {
        pending_ = true;
        sent_ = false;
        started_ = true;
        const bool fresh = pid_ < 0;
        if (fresh && !start()) {
            started_ = false;
            return false;
        }
        grace_ms_ = fresh ? lim_.startup_ms : 0;
        if (at_node_) at_node_->store(-1);
        read_phases();  // what the last request told late is not this one's
        phase_ = {};
        start_ = std::chrono::steady_clock::now();
        sent_ = detail::isolate::send_frame(to_, frame);
        return sent_;
    }

    /// Whether receive() would return without waiting.
    bool ready() const {
        if (!pending_ || pid_ < 0 || !sent_) return true;
        pollfd p{from_, POLLIN, 0};
        return ::poll(&p, 1, 0) != 0 || std::chrono::steady_clock::now() > deadline();
    }

    /// The descriptor that becomes readable when the answer to the last request comes; -1 when
    /// none is awaited (ready() is true). Lets a caller wait on several workers at once.
    int awaited_fd() const noexcept { return pending_ && pid_ >= 0 && sent_ ? from_ : -1; }

    /// Waits for the answer to the last request: nothing (and `frame` holds it), or the run result
    /// that says why there is none (crash, timeout, memory).
    std::optional<run_result> receive(std::string& frame) {
        using namespace detail::isolate;
        if (!pending_) return run_result::failed(run_status::error, "receive() without send()");
        pending_ = false;
        if (!started_) return run_result::failed(run_status::crash, "worker could not start");
        if (!sent_) return died();
        for (;;) {
            // What is there is read first: an answer that came in time is not thrown away because
            // the parent came to collect it late (it was waiting on another lane or backend).
            const auto until = deadline();
            const double left = std::chrono::duration<double, std::milli>(until - std::chrono::steady_clock::now()).count();
            pollfd p{from_, POLLIN, 0};
            const int k = ::poll(&p, 1, left > 0 ? static_cast<int>(std::min(20.0, left + 1)) : 0);
            if (k > 0) break;
            if (k < 0 && errno != EINTR) return died();
            if (left <= 0) return overran(std::chrono::duration<double, std::milli>(until - start_).count());
        }
        if (!recv_frame(from_, frame)) return died();
        return std::nullopt;
    }

    /// An answer read after its deadline is judged by when the worker finished the run (its own
    /// wall time, which it stamps on the result), not by when the parent came to read it: a run
    /// the worker itself timed beyond the limit is a time-out (the worker lives on: it answered).
    /// With a limit for compiling, the worker's time less its compiling is held to the run's limit
    /// and its compiling to compiling's.
    void judge_late(run_result& r) const {
        const double took = r.ms, compiling = lim_.compile_ms > 0 ? r.compile_ms : 0.0;
        if (compiling > lim_.compile_ms) {
            r = run_result::failed(run_status::unsupported, "compiles too long: compiled for " + std::to_string(static_cast<long>(compiling)) +
                                                                " ms, over the limit of " + std::to_string(static_cast<long>(lim_.compile_ms)) +
                                                                " ms for compiling");
        } else if (took - compiling > lim_.timeout_ms) {
            r = run_result::failed(run_status::timeout,
                                   "answered after " + std::to_string(static_cast<long>(took)) + " ms" +
                                       (compiling > 0 ? " (" + std::to_string(static_cast<long>(compiling)) + " ms of it compiling)" : "") +
                                       ", over the limit of " + std::to_string(static_cast<long>(lim_.timeout_ms)) + " ms");
        } else {
            return;
        }
        r.ms = took;
        r.compile_ms = compiling;
    }

    /// Kills the worker after an unreadable answer; the result says so.
    run_result kill_worker(run_status s, std::string why) {
        ::kill(pid_, SIGKILL);
        auto r = died();
        r.status = s;
        r.message = std::move(why);
        r.signal = 0;
        return r;
    }

    /// Drops the request in flight, if any: the worker, busy with it, is killed (not counted as a
    /// restart: nothing went wrong); the next send() starts a fresh one.
    void abandon() {
        if (!pending_) return;
        pending_ = false;
        if (pid_ < 0) return;
        detail::isolate::memory_watch::instance().forget(&watched_);
        ::kill(pid_, SIGKILL);
        close_pipes();
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }

    /// Ends the worker: it sees end-of-file on its requests and should exit; killed if it lingers.
    void stop() {
        if (pid_ < 0) return;
        detail::isolate::memory_watch::instance().forget(&watched_);
        close_pipes();
        int status = 0;
        for (int i = 0; i < 100 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i) ::usleep(10000);
        if (::waitpid(pid_, &status, WNOHANG) == 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, &status, 0);
        }
        pid_ = -1;
    }

private:
    static constexpr int pipe_bytes = 1 << 20;  // each way: 12 MiB of kernel buffers for a campaign of six workers

    bool start() {
        // A fresh, empty stderr file per worker (in memory: nothing is left on disk).
        if (log_ >= 0) ::close(log_);
        log_ = ::memfd_create("memo-worker-stderr", 0);
        int down[2], up[2], told[2];
        if (::pipe(down) != 0) return false;
        if (::pipe(up) != 0) {
            ::close(down[0]);
            ::close(down[1]);
            return false;
        }
        if (::pipe2(told, O_NONBLOCK) != 0) {
            for (int fd : {down[0], down[1], up[0], up[1]}) ::close(fd);
            return false;
        }
        // A request carries its model's costly weights, an answer every node's outputs: at the
        // default 64 KiB the campaign's thread blocked in each write until the worker had read
        // most of it, instead of starting the next library's run. A larger buffer where the
        // system allows it (up to /proc/sys/fs/pipe-max-size); where not, the default.
        for (int fd : {down[1], up[1]}) ::fcntl(fd, F_SETPIPE_SZ, pipe_bytes);
        std::fflush(nullptr);
        const pid_t pid = ::fork();
        if (pid < 0) {
            for (int fd : {down[0], down[1], up[0], up[1], told[0], told[1]}) ::close(fd);
            return false;
        }
        if (pid == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the campaign killed: its workers go too
            if (at_node_) progress::word() = at_node_;
            // Keep only our three pipe ends (as fds 3, 4 and 5: requests, answers, phases) and the
            // log (as stderr): another worker's pipe held open here would hide that worker's
            // end-of-file from it. They move above 5 first, so that placing one never overwrites
            // another. The phases' end blocks again: a worker's write of 9 bytes is whole.
            const int in = ::fcntl(down[0], F_DUPFD, 10), out = ::fcntl(up[1], F_DUPFD, 10), phases = ::fcntl(told[1], F_DUPFD, 10);
            const int log = log_ >= 0 ? ::fcntl(log_, F_DUPFD, 10) : -1;
            ::dup2(in, 3);
            ::dup2(out, 4);
            ::dup2(phases, 5);
            ::fcntl(5, F_SETFL, 0);
            if (int devnull = ::open("/dev/null", O_WRONLY); devnull >= 0) ::dup2(devnull, 1);
            if (log >= 0) ::dup2(log, 2);  // the library's own chatter, read when the worker dies
            ::close_range(6, ~0U, 0);
            ::mallopt(M_PERTURB, detail::isolate::heap_fill);
            body_();
            ::_exit(0);
        }
        ::close(down[0]);
        ::close(up[1]);
        ::close(told[1]);
        pid_ = pid;
        to_ = down[1];
        from_ = up[0];
        phases_ = told[0];
        watched_ = {pid, lim_.memory_mb * 1024, detail::isolate::resident_kb(::getpid()), 0};  // the child starts as a copy of us
        detail::isolate::memory_watch::instance().watch(&watched_);
        return true;
    }

    /// The worker is gone: reap it and say how it ended.
    run_result died() {
        auto& watch = detail::isolate::memory_watch::instance();
        watch.forget(&watched_);  // before the reap
        const auto seen = watch.read(&watched_);
        const auto killed_kb = seen.killed_kb;
        int status = 0;
        read_phases();  // how far it got: compiling or running
        close_pipes();
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        ++restarts_;
        auto r = run_result::failed(run_status::crash, "");
        if (killed_kb > 0) {
            r.status = run_status::memory;
            r.message = "grew by " + std::to_string((killed_kb - seen.base_kb) / 1024) + " MiB (to " + std::to_string(killed_kb / 1024) +
                        " MiB resident), over the limit of " + std::to_string(lim_.memory_mb) + " MiB";
            r.peak_kb = killed_kb;
            r.start_kb = seen.base_kb;
        } else if (WIFSIGNALED(status)) {
            r.signal = WTERMSIG(status);
            r.message = detail::isolate::signal_text(r.signal);
        } else {
            r.message = "worker exited with status " + std::to_string(WEXITSTATUS(status));
        }
        if (const auto tail = log_tail(); !tail.empty() && killed_kb == 0) r.message += ": " + tail;
        if (at_node_) r.node = at_node_->load();  // where it was when it hung, blew up or died
        r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
        return r;
    }

    void close_pipes() {
        for (int* fd : {&to_, &from_, &phases_})
            if (*fd >= 0) ::close(std::exchange(*fd, -1));
    }

    /// Where the worker's time for the request in flight went, from what it told on fd 5: each a
    /// u8 (1 compiling, 0 running) and the f64 milliseconds since it read the request
    /// (tools/frames.py, CompileTime). Its own clock, so that what is read late counts as told.
    struct phases {
        bool compiling = false;
        double since_ms = 0;     // when the phase it is in began
        double compiled_ms = 0;  // compiling's time before that
    };
    void read_phases() const {
        if (phases_ < 0) return;
        // Each record is written whole (9 bytes, under PIPE_BUF) and the buffer holds whole
        // records, so a read never ends inside one.
        char buf[9 * 64];
        for (ssize_t n; (n = ::read(phases_, buf, sizeof buf)) > 0;)
            for (ssize_t at = 0; at + 9 <= n; at += 9) {
                const bool compiling = buf[at] != 0;
                double ms = 0;
                std::memcpy(&ms, buf + at + 1, sizeof ms);
                if (compiling == phase_.compiling) continue;
                if (phase_.compiling) phase_.compiled_ms += ms - phase_.since_ms;
                phase_ = {compiling, ms, phase_.compiled_ms};
            }
    }

    /// When the request in flight is over its time: its run's limit past the time it spent
    /// compiling, or while it compiles, compiling's limit past the time it spent running.
    std::chrono::steady_clock::time_point deadline() const {
        read_phases();  // also when there is no limit for compiling: a full pipe would block the worker
        double ms = lim_.timeout_ms;
        if (lim_.compile_ms > 0) ms = phase_.compiling ? phase_.since_ms - phase_.compiled_ms + lim_.compile_ms : phase_.compiled_ms + lim_.timeout_ms;
        return start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double, std::milli>(grace_ms_ + ms));
    }

    /// The worker killed at its deadline, `ms` after the request: declined where it was compiling
    /// (its compiler is slow, not stuck), a time-out where it was running.
    run_result overran(double ms) {
        const bool compiling = lim_.compile_ms > 0 && phase_.compiling;
        const double compiled = phase_.compiled_ms + (compiling ? ms - grace_ms_ - phase_.since_ms : 0.0);
        auto r = compiling
                     ? kill_worker(run_status::unsupported,
                                   "compiles too long: still compiling after " + std::to_string(static_cast<long>(compiled)) + " ms, the limit for compiling")
                     : kill_worker(run_status::timeout, "no result within " + std::to_string(static_cast<long>(ms)) + " ms" +
                                                            (compiled > 0 ? " (" + std::to_string(static_cast<long>(compiled)) + " ms of it compiling)" : ""));
        r.ms = ms;
        r.compile_ms = compiled;
        return r;
    }

    /// The last line the worker wrote to stderr before it died.
    std::string log_tail() const {
        if (log_ < 0) return {};
        char buf[2048];
        const off_t end = ::lseek(log_, 0, SEEK_END);
        const off_t from = end > static_cast<off_t>(sizeof buf) ? end - static_cast<off_t>(sizeof buf) : 0;
        const ssize_t n = ::pread(log_, buf, sizeof buf, from);
        if (n <= 0) return {};
        std::string s(buf, static_cast<std::size_t>(n));
        while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
        if (const auto nl = s.rfind('\n'); nl != std::string::npos) s = s.substr(nl + 1);
        return s;
    }

    std::function<void()> body_;
    isolation_limits lim_;
    pid_t pid_ = -1;
    int to_ = -1, from_ = -1, phases_ = -1, log_ = -1;
    mutable phases phase_{};  // the request in flight's, as far as read (reading it changes no state of the worker's)
    bool pending_ = false, sent_ = false, started_ = false;
    double grace_ms_ = 0;  // startup_ms for the first request of a fresh worker, else 0
    std::uint64_t restarts_ = 0;
    std::chrono::steady_clock::time_point start_{};
    detail::isolate::memory_watch::watched watched_{};  // registered with the watch while the worker lives
    std::atomic<int>* at_node_ = nullptr;               // shared with the worker: the node it runs
};

}  // namespace memo
