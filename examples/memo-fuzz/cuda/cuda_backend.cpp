// memo-fuzz's CUDA backends "cuda" and "cuda-tf32": executors whose runs go to memo-cuda-worker
// (cuda_worker.cpp), a program of its own that memo-fuzz starts by exec, as it starts the Node.js
// and Python workers. The CUDA runtime, cuBLAS and cuDNN are loaded there only: memo-fuzz links
// none of them. What memo-fuzz keeps is the backend's plan (plain C++), to tell which models it
// declines before any is sent.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <memo/backends/cuda/plan.hpp>
#include <memo/backends/wire.hpp>
#include <memo/backends/worker_executor.hpp>
#include <memo/fuzz/backends.hpp>

#include "../memo_fuzz.hpp"

namespace memo_fuzz {

namespace {

/// Where memo-cuda-worker is: $MEMO_CUDA_WORKER, or beside this program (both are built into
/// <build>/bin).
std::string cuda_worker() {
    if (const char* env = std::getenv("MEMO_CUDA_WORKER"); env && *env) return env;
    return (std::filesystem::path(memo::fuzz::program_path()).parent_path() / "memo-cuda-worker").string();
}

/// What `memo-cuda-worker --probe` said: why the backend cannot run here (empty: it can), and the
/// libraries' versions it loaded.
struct probed {
    std::string why;
    std::string version;  // "cuDNN 9.13.0, cuBLAS 13.1.0, CUDA 13.0"
};

/// The first word of the value of a probe line "key: value ...", or empty.
std::string probe_value(const std::string& out, const std::string& key) {
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
        if (line.starts_with(key + ": ")) return line.substr(key.size() + 2, line.find(' ', key.size() + 2) - (key.size() + 2));
    return {};
}

/// Runs `memo-cuda-worker --probe` (once a process: each backend asks), stdout and stderr together.
probed run_probe() {
    const std::string worker = cuda_worker();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(worker, ec))
        return {"memo-cuda-worker is not at " + worker + " (build the target memo-cuda-worker, or set MEMO_CUDA_WORKER)", {}};
    int out[2];
    if (::pipe(out) != 0) return {std::string("cannot run memo-cuda-worker --probe: ") + std::strerror(errno), {}};
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(out[0]);
        ::close(out[1]);
        return {std::string("cannot run memo-cuda-worker --probe: ") + std::strerror(errno), {}};
    }
    if (pid == 0) {
        ::dup2(out[1], 1);
        ::dup2(out[1], 2);
        ::close_range(3, ~0U, 0);
        ::execl(worker.c_str(), worker.c_str(), "--probe", static_cast<char*>(nullptr));
        std::fprintf(stderr, "cannot start %s: %s\n", worker.c_str(), std::strerror(errno));
        ::_exit(127);
    }
    ::close(out[1]);
    // Starting CUDA and loading cuDNN take seconds at most; a probe that hangs is an answer too.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::string text;
    bool late = false;
    for (char buf[4096];;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        pollfd p{out[0], POLLIN, 0};
        const int k = left > 0 ? ::poll(&p, 1, static_cast<int>(left)) : 0;
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            late = true;
            ::kill(pid, SIGKILL);
            break;
        }
        const ssize_t n = ::read(out[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(out[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    probed r;
    if (const auto dnn = probe_value(text, "cuDNN"); !dnn.empty())
        r.version = "cuDNN " + dnn + ", cuBLAS " + probe_value(text, "cuBLAS") + ", CUDA " + probe_value(text, "CUDA");
    if (late) {
        r.why = "memo-cuda-worker --probe gave no answer within 60 s";
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::istringstream in(text);
        std::string last;
        for (std::string line; std::getline(in, line);) {
            if (line.starts_with("unusable: ")) {
                r.why = line.substr(10);
                break;
            }
            if (!line.empty()) last = line;
        }
        if (r.why.empty())  // it could not say: it did not load (a library missing), or it died
            r.why = "memo-cuda-worker --probe " +
                    (WIFSIGNALED(status) ? memo::detail::isolate::signal_text(WTERMSIG(status)) : "exited with status " + std::to_string(WEXITSTATUS(status))) +
                    (last.empty() ? "" : ": " + last);
    }
    return r;
}

const probed& probe() {
    static const probed p = run_probe();
    return p;
}

/// The CUDA backend as an executor: each run goes to a memo-cuda-worker over the pipes in wire
/// frames, as a forked worker's would (memo::serve_backend answers them).
class cuda_executor final : public memo::worker_executor {
public:
    cuda_executor(const std::string& worker, std::string name, memo::isolation_limits lim)
        : worker_executor({worker, "--name", name}, lim), name_(std::move(name)) {}

    std::string_view name() const override { return name_; }
    /// What the worker's backend would decline from the model alone (memo::cuda::backend's supports()).
    memo::expected<void> supports(const memo::model& m) const override { return memo::cuda::plannable(m); }

    void submit(const memo::model& m, std::span<const memo::tensor> inputs, const memo::run_options& o) override {
        begin();
        worker().send(memo::wire::encode_request(m, inputs, o));
    }

private:
    memo::run_result decode(std::string_view frame) override { return memo::wire::decode_result(frame); }

    std::string name_;
};

}  // namespace

memo::fuzz::backend_kind cuda_backend(const std::string& name) {
    memo::fuzz::backend_kind k;
    k.name = name;
    const bool tf32 = name == "cuda-tf32";
    // Always in memo-cuda-worker, --in-process or not: memo-fuzz has no CUDA to run it with. In
    // the worker, a sticky CUDA error ends it (a crash verdict with CUDA's text).
    k.make = [name, tf32](const memo::registry&, memo::isolation_limits lim, bool) -> std::unique_ptr<memo::executor> {
        auto x = std::make_unique<cuda_executor>(cuda_worker(), name, lim);
        // TF32 rounds float32's convolution and product operands to float16's 10-bit mantissa: its
        // float32 results are judged as float16's (memo::arithmetic).
        if (tf32) x->set_rounding({{memo::dtype::float16, memo::dtype::bfloat16, memo::dtype::float16, memo::dtype::float64}});
        return x;
    };
    k.unavailable = [] { return probe().why; };
    k.version = [] { return probe().version; };
    k.library = tf32 ? "NVIDIA cuDNN and cuBLAS (TF32 maths)" : "NVIDIA cuDNN and cuBLAS";
    k.by_default = !tf32;  // "cuda" joins the default backends where a GPU is; "cuda-tf32" is asked for
    return k;
}

}  // namespace memo_fuzz
