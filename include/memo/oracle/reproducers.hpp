#pragma once
// A bug's reproducers in its libraries' own terms. The model is judged again by the differential
// oracle; then each culprit whose worker writes reproducers (executor::writes_reproducers) writes
// one into a folder (a script that imports only its library, with the model's data beside it) and
// says how to run it; memo runs it there, as a maintainer would, at once or beside a campaign
// (reproducer_process). What the script checks is what the oracle measured: the node where the
// fault shows, its float64 value and the most rounding explains there.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../io/json.hpp"
#include "differential.hpp"

namespace memo::oracle {

struct reproducer_written {
    std::string backend;
    std::string script;  // its path: .py from a Python worker, .js from a Node one
    std::string said;    // "shows the fault (exit 1): <the script's last line>", or why none was written
    bool written = false, shows = false;
    /// How its worker runs it (its own interpreter, under a harness that makes the script's own
    /// failure exit 2), from the script's folder, with these variables set; empty until written.
    std::vector<std::string> argv;
    std::map<std::string, std::string> env;
    bool run = false;  // said and shows tell how it ran (else it waits for a reproducer_process)

    /// Written with a command, not run yet: a reproducer_process is to run it.
    bool waits() const noexcept { return written && !run && !argv.empty(); }
};

/// A reproducer running as a maintainer would run it: its worker's command, in the script's folder,
/// all it prints kept beside it (STEM.out, for the bug's report). Exit 1: the fault shows; 0: it
/// does not; anything else (2: the script failed on its own, or a signal): it fails. At most ten
/// minutes; a process left running when the object goes is killed.
class reproducer_process {
public:
    static constexpr double limit_s = 600;

    explicit reproducer_process(const reproducer_written& w)
        : out_(std::filesystem::path(w.script).replace_extension(".out")), err_(std::filesystem::path(w.script).replace_extension(".err")) {
        namespace fs = std::filesystem;
        std::vector<std::string> env;
        for (const auto& [k, v] : w.env) env.push_back(k + "=" + v);
        std::fflush(nullptr);
        pid_ = ::fork();
        if (pid_ == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a campaign killed takes its reproducers with it
            ::setpgid(0, 0);                     // and a time-out kills what the script started too
            const int out = ::open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), e = ::open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            const int in = ::open("/dev/null", O_RDONLY);
            if (out < 0 || e < 0 || in < 0 || ::chdir(fs::path(w.script).parent_path().c_str()) != 0) ::_exit(127);
            ::dup2(in, 0), ::dup2(out, 1), ::dup2(e, 2);
            ::close_range(3, ~0U, 0);
            for (auto& kv : env) ::putenv(kv.data());
            std::vector<char*> args;
            for (const auto& a : w.argv) args.push_back(const_cast<char*>(a.c_str()));
            args.push_back(nullptr);
            ::execv(args[0], args.data());
            ::_exit(127);
        }
        if (pid_ < 0) said_ = "fails: cannot start it";
    }
    reproducer_process(const reproducer_process&) = delete;
    reproducer_process& operator=(const reproducer_process&) = delete;
    ~reproducer_process() {
        if (pid_ > 0) kill_now();
    }

    /// Whether it has finished (a look, no waiting); past its limit it is killed and has.
    bool done() {
        if (pid_ <= 0) return true;
        int status = 0;
        const pid_t r = ::waitpid(pid_, &status, WNOHANG);
        if (r == pid_) return settle(status, false);
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count() < limit_s) return false;
        return settle(kill_now(), true);
    }
    void wait() {
        while (!done()) ::usleep(20000);
    }
    /// "shows the fault (exit 1): <the last line it printed>", "does not show the fault (exit 0): ...",
    /// "fails (exit 2): ..." or "does not finish in 600 s"; once done().
    const std::string& said() const noexcept { return said_; }
    bool shows() const noexcept { return shows_; }

private:
    /// Kills it and what it started; its exit status.
    int kill_now() {
        int status = 0;
        ::kill(-pid_, SIGKILL);
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        return status;
    }

    bool settle(int status, bool timed_out) {
        namespace fs = std::filesystem;
        pid_ = -1;
        const auto read = [](const fs::path& p) {
            std::ifstream f(p);
            std::stringstream s;
            s << f.rdbuf();
            return s.str();
        };
        const std::string out = read(out_), errors = read(err_);
        std::error_code ec;
        fs::remove(err_, ec);
        std::ofstream(out_, std::ios::app) << errors;  // STEM.out: its output, then its errors
        if (timed_out) {
            said_ = "does not finish in " + std::to_string(static_cast<int>(limit_s)) + " s";
            return true;
        }
        // Its last line: of what it printed, else of its errors (a traceback's last line).
        const auto last_line = [](const std::string& text) {
            std::string last, line;
            std::istringstream lines(text);
            while (std::getline(lines, line))
                if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
            return last;
        };
        std::string last = last_line(out);
        if (last.empty()) last = last_line(errors);
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        const char* verdict = code == 1 ? "shows the fault" : code == 0 ? "does not show the fault" : "fails";
        said_ = std::string(verdict) + " (exit " + std::to_string(code) + "): " + last;
        shows_ = code == 1;
        return true;
    }

    std::filesystem::path out_, err_;  // what it prints; its errors, appended to out_ once it ends
    pid_t pid_ = -1;
    std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
    std::string said_;
    bool shows_ = false;
};

/// Takes a worker's answer to a reproducer request: {"script": path, "argv": [...], "env": {...}}.
/// False when it is not one (the answer is then what the worker said instead).
inline bool read_reproducer_command(const std::string& answer, reproducer_written& w) {
    const auto j = io::json::parse(answer, nullptr, false);
    if (!j.is_object() || !j.contains("script") || !j.contains("argv") || !j["argv"].is_array() || j["argv"].empty()) return false;
    w.script = j["script"].get<std::string>();
    w.argv = j["argv"].get<std::vector<std::string>>();
    if (j.contains("env")) w.env = j["env"].get<std::map<std::string, std::string>>();
    return true;
}

struct reproducers_written {
    verdict v;  // the verdict of the model judged again (none: the bug did not show)
    std::vector<reproducer_written> culprits;
};

/// Judges `m` again and has each culprit write its reproducer into `directory` (files named
/// repro_<backend>.*), and runs each (`run`; else the caller runs them, with reproducer_process).
/// A culprit whose worker writes none is listed with written false.
inline reproducers_written write_reproducers(differential& diff, const model& m, const std::string& directory, bool run = true) {
    namespace fs = std::filesystem;
    reproducers_written out;
    out.v = diff.check(m);
    const verdict& v = out.v;
    if (!v) return out;
    reproducer_request q;
    q.directory = fs::absolute(directory).string();
    std::string culprits;
    for (const auto& c : v.culprits) culprits += (culprits.empty() ? "" : ",") + c;
    q.title = std::string(name_of(v.what)) + " on " + culprits + (v.layer.empty() ? "" : " at " + v.layer) + (v.message.empty() ? "" : ": " + v.message) +
              " (memo signature " + signature(v, m) + ")";
    // The node where the fault shows against the float64 reference, and the most rounding explains
    // there (what the oracle measured on identical inputs; else the rule without measured slack).
    // A shape bug's check is the same: the script shows the shape the library gives against it.
    const auto check = [&](int k, double measured) {
        const auto& truth = diff.truth_values();
        const auto i = static_cast<std::size_t>(k);
        if (i >= truth.size()) return;
        const double bound = measured > 0 ? measured : unmeasured_bound(m, i, truth);
        q.checks.push_back({k, truth[i], std::isfinite(bound) ? bound : 0.0});  // a NaN bound would excuse anything
    };
    if ((v.what == kind::inconsistency || v.what == kind::nan || v.what == kind::shape) && v.node >= 0)
        check(v.node, v.differs() ? v.differs()->at_node.bound : 0.0);
    else if (of_rewritten_graph(v))  // a fault of the rewritten graph shows in the model's outputs alone
        for (int k : m.outputs) check(k, 0.0);
    for (const auto& c : v.culprits) {
        reproducer_written w;
        w.backend = c;
        executor* x = diff.by_name(c);
        if (!x || !x->writes_reproducers()) {
            w.said = "writes no reproducer";
            out.culprits.push_back(std::move(w));
            continue;
        }
        q.stem = "repro_" + c;
        std::replace(q.stem.begin(), q.stem.end(), '-', '_');
        const double limit = x->time_limit();
        x->set_time_limit(std::max(limit, 120000.0));  // writing builds the model in the library, and may compile
        run_options o;
        o.reproducer = &q;
        const auto r = x->run(m, diff.last_inputs(), o);
        x->set_time_limit(limit);
        if (!r.ok() || !read_reproducer_command(r.message, w)) {
            w.said = "no reproducer: " + r.message;
            out.culprits.push_back(std::move(w));
            continue;
        }
        w.written = true;
        if (run) {
            reproducer_process p(w);
            p.wait();
            w.said = p.said(), w.shows = p.shows(), w.run = true;
        }
        out.culprits.push_back(std::move(w));
    }
    return out;
}

}  // namespace memo::oracle
