#pragma once
// The resource oracles, from the figures the isolated workers report for each run: its CPU time
// (every thread's; wall time where a worker does not measure it), the resident memory when the run
// began and its peak during the run. CPU time rather than wall time: a busy machine stretches the
// wall time of whichever run it interrupts, not the work a run does. A model is run R times on
// each backend, one run at a time, round after round (each round in the other order), so that a
// change in the machine's load falls on every backend alike; then:
//   performance  a backend is more than `slower` times slower than another on the same model (the
//                median over the rounds of the ratio of their times), or one of its runs more than
//                `spike` times the median of its own earlier runs; or the memory a run takes
//                (peak - start) is more than `larger` times another backend's. Differences under
//                `min_ms` / `min_kb` are noise.
//   leak         the worker's peak memory grows from run to run of the same model: at least
//                `leak_kb` a run on average from the second run on, and in all but one step.
//   determinism  the same model on the same inputs gives other outputs from run to run on one
//                backend (bit for bit: a library's kernel that reads memory it did not write, or
//                races, shows so); its verdict is nondeterminism.
// A performance or leak verdict is localised to the model's costliest node (layers/cost.hpp), the
// layer a slowdown most likely lives in; its signature then tells slow layers apart. A
// nondeterminism verdict is localised to the first node whose output differs between two runs
// of every node's output, where the backend gives them.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "../backends/executor.hpp"
#include "../core/text.hpp"
#include "../layers/cost.hpp"
#include "oracle.hpp"

namespace memo::oracle {

struct resource_options {
    bool performance = false, leak = false, determinism = false;  // which oracles run
    int repeats = 5;                                              // R: runs of each model per backend
    double slower = 3.0;
    double spike = 3.0;
    double larger = 3.0;
    double min_ms = 10.0;
    std::int64_t min_kb = 16 * 1024;
    std::int64_t leak_kb = 1024;  // a 30 s campaign on libtorch grew its allocator by 288 KiB a run, and that did not replay

    bool any() const noexcept { return performance || leak || determinism; }
};

/// One backend's runs of one model, in order.
struct resource_runs {
    std::string backend;
    std::vector<double> ms;  // wall time
    std::vector<std::int64_t> start_kb, peak_kb;
    std::vector<double> cpu_ms{};   // CPU time, when the worker measures it
    std::vector<digest> outputs{};  // the outputs' digest, run by run

    /// CPU time when every run has it, else wall time; and which.
    std::pair<const std::vector<double>*, std::string_view> times() const {
        const bool cpu = !cpu_ms.empty() && cpu_ms.size() == ms.size() && std::all_of(cpu_ms.begin(), cpu_ms.end(), [](double c) { return c > 0; });
        return cpu ? std::pair{&cpu_ms, std::string_view("CPU")} : std::pair{&ms, std::string_view("wall")};
    }
};

inline double median(std::vector<double> xs) {
    if (xs.empty()) return 0;
    std::sort(xs.begin(), xs.end());
    const auto n = xs.size();
    return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

namespace detail {

inline verdict resource_verdict(kind k, const std::string& culprit, const std::string& peer, std::string msg) {
    verdict v;
    v.what = k;
    v.culprits = {culprit};
    if (!peer.empty()) v.peers = {peer};
    v.message = std::move(msg);
    return v;
}

/// The memory each run took beyond what the worker held before it (KiB), of the runs that say.
inline std::vector<double> used_kb(const resource_runs& r) {
    std::vector<double> u;
    for (std::size_t i = 0; i < r.peak_kb.size() && i < r.start_kb.size(); ++i)
        if (r.start_kb[i] > 0 && r.peak_kb[i] > 0) u.push_back(static_cast<double>(std::max<std::int64_t>(r.peak_kb[i] - r.start_kb[i], 0)));
    return u;
}

/// x slower than another backend on the same model, round by round: against the one it is
/// slowest against.
inline std::optional<verdict> slower_than_peers(const resource_runs& x, const std::vector<resource_runs>& runs, const resource_options& o) {
    const resource_runs* worst = nullptr;
    double ratio = 0, mine = 0, theirs = 0;
    std::string_view clock;
    for (const auto& y : runs) {
        if (&y == &x || y.ms.empty() || x.ms.empty()) continue;
        auto [tx, cx] = x.times();
        auto [ty, cy] = y.times();
        if (cx != cy) tx = &x.ms, ty = &y.ms, cx = "wall";  // the same clock on both sides
        // Round by round: a change of the machine's load falls on both runs of a round.
        std::vector<double> ratios;
        for (std::size_t i = 0; i < std::min(tx->size(), ty->size()); ++i) ratios.push_back((*tx)[i] / std::max((*ty)[i], 1e-9));
        const double r = median(ratios), mx = median(*tx), my = median(*ty);
        if (mx - my > o.min_ms && r > o.slower && r > ratio) worst = &y, ratio = r, mine = mx, theirs = my, clock = cx;
    }
    if (!worst) return std::nullopt;
    return resource_verdict(kind::performance, x.backend, worst->backend,
                            printf_string("%s took a median %.1f %.*s ms over %zu runs, %.2fx %s's %.1f ms run for run", x.backend.c_str(), mine,
                                          static_cast<int>(clock.size()), clock.data(), x.ms.size(), ratio, worst->backend.c_str(), theirs));
}

/// A run of x far slower than its own earlier runs.
inline std::optional<verdict> slower_than_before(const resource_runs& x, const resource_options& o) {
    const auto [t, c] = x.times();
    for (std::size_t k = 2; k < t->size(); ++k) {
        const double before = median({t->begin(), t->begin() + static_cast<std::ptrdiff_t>(k)});
        if ((*t)[k] - before > o.min_ms && (*t)[k] > o.spike * before)
            return resource_verdict(kind::performance, x.backend, x.backend,
                                    printf_string("%s's run %zu took %.1f %.*s ms, %.1fx the median %.1f ms of its earlier runs", x.backend.c_str(), k + 1,
                                                  (*t)[k], static_cast<int>(c.size()), c.data(), (*t)[k] / std::max(before, 1e-9), before));
    }
    return std::nullopt;
}

/// The memory a run of x takes, far more than another backend's.
inline std::optional<verdict> more_memory_than_peers(const resource_runs& x, const std::vector<resource_runs>& runs, const resource_options& o) {
    const double ux = median(used_kb(x));
    for (const auto& y : runs) {
        if (&y == &x) continue;
        const auto uy_runs = used_kb(y);
        if (uy_runs.empty() || used_kb(x).empty()) continue;
        const double uy = median(uy_runs);
        if (ux - uy > static_cast<double>(o.min_kb) && ux > o.larger * uy)
            return resource_verdict(kind::performance, x.backend, y.backend,
                                    printf_string("%s used a median %.1f MiB a run, %.1fx %s's %.1f MiB", x.backend.c_str(), ux / 1024, ux / std::max(uy, 1.0),
                                                  y.backend.c_str(), uy / 1024));
    }
    return std::nullopt;
}

/// x gave different outputs over runs of the same model on the same inputs.
inline std::optional<verdict> nondeterministic(const resource_runs& x) {
    if (x.outputs.size() < 2) return std::nullopt;
    std::vector<digest> seen;
    for (const auto& d : x.outputs)
        if (std::find(seen.begin(), seen.end(), d) == seen.end()) seen.push_back(d);
    if (seen.size() < 2) return std::nullopt;
    return resource_verdict(
        kind::nondeterminism, x.backend, {},
        printf_string("%s gave %zu different outputs over %zu runs of the same model on the same inputs", x.backend.c_str(), seen.size(), x.outputs.size()));
}

/// x's peak memory growing run after run, from the second run on (the first warms caches up).
inline std::optional<verdict> leaks(const resource_runs& x, const resource_options& o) {
    const auto& p = x.peak_kb;
    if (p.size() < 4) return std::nullopt;
    const auto steps = p.size() - 2;
    std::size_t up = 0;
    for (std::size_t k = 1; k + 1 < p.size(); ++k) up += p[k + 1] > p[k];
    const auto growth = p.back() - p[1];
    if (growth < o.leak_kb * static_cast<std::int64_t>(steps) || up + 1 < steps) return std::nullopt;
    return resource_verdict(kind::leak, x.backend, {},
                            printf_string("%s's peak memory grew %.1f MiB over %zu runs of the same model (%.0f KiB a run)", x.backend.c_str(),
                                          static_cast<double>(growth) / 1024, steps, static_cast<double>(growth) / static_cast<double>(steps)));
}

}  // namespace detail

/// The verdicts the figures of repeated runs give (pure: tests feed it numbers): per backend, its
/// time against its peers' and its own earlier runs' and its memory against its peers'
/// (performance), its outputs over the runs (determinism), its peak memory over them (leak).
inline std::vector<verdict> judge_resources(const std::vector<resource_runs>& runs, const resource_options& o) {
    std::vector<verdict> out;
    const auto add = [&](std::optional<verdict> v) {
        if (v) out.push_back(std::move(*v));
    };
    for (const auto& x : runs) {
        if (o.performance) {
            add(detail::slower_than_peers(x, runs, o));
            add(detail::slower_than_before(x, o));
            add(detail::more_memory_than_peers(x, runs, o));
        }
        if (o.determinism) add(detail::nondeterministic(x));
        if (o.leak) add(detail::leaks(x, o));
    }
    return out;
}

/// The model's costliest node (its multiply-adds and the elements it writes).
inline int costliest_node(const model& m) {
    int best = -1;
    std::int64_t most = -1;
    for (std::size_t i = 0; i < m.size(); ++i)
        if (!m.nodes[i].inputs.empty())
            if (const auto c = node_cost(m, i); c > most) most = c, best = static_cast<int>(i);
    return best;
}

class resources {
public:
    explicit resources(resource_options o = {}) : o_(o) {}
    const resource_options& options() const noexcept { return o_; }

    /// Runs m R times on each backend in `xs` (those that ran it without failing) and judges the figures.
    std::vector<verdict> check(const model& m, std::span<const tensor> inputs, std::span<executor* const> xs) {
        runs_.clear();
        for (auto* x : xs) runs_.push_back({std::string(x->name()), {}, {}, {}});
        std::vector<bool> alive(xs.size(), true);
        for (int i = 0; i < o_.repeats; ++i)
            for (std::size_t j = 0; j < xs.size(); ++j) {
                const std::size_t k = i % 2 ? xs.size() - 1 - j : j;
                if (!alive[k]) continue;
                const auto r = xs[k]->run(m, inputs, {});
                if (!r.ok()) alive[k] = false;  // a failure is the other oracles' business
                else add(runs_[k], r);
            }
        auto vs = judge_resources(runs_, o_);
        const int at = costliest_node(m);
        for (auto& v : vs) {
            v.node = v.what == kind::nondeterminism ? first_varying_node(m, inputs, xs, v.culprits.front()) : at;
            if (v.node < 0) v.node = at;
            if (at >= 0) {
                v.layer = std::string(m[at].layer->name);
                if (!m[at].inputs.empty()) v.producer = std::string(m[m[at].inputs[0]].layer->name);
            }
        }
        return vs;
    }

    /// The figures of the last check.
    const std::vector<resource_runs>& last_runs() const noexcept { return runs_; }

private:
    /// The first node whose output differs between two runs of every node's output on the
    /// backend named `name`, or -1 (it does not give them, or both runs agree).
    static int first_varying_node(const model& m, std::span<const tensor> inputs, std::span<executor* const> xs, const std::string& name) {
        for (auto* x : xs) {
            if (x->name() != name) continue;
            const run_options every{true, {}, {}};
            const auto a = x->run(m, inputs, every), b = x->run(m, inputs, every);
            if (!a.ok() || !b.ok() || a.outputs.size() != m.size() || b.outputs.size() != m.size()) return -1;
            for (std::size_t i = 0; i < m.size(); ++i)
                if (digest_of(a.outputs[i]) != digest_of(b.outputs[i])) return static_cast<int>(i);
        }
        return -1;
    }

    static void add(resource_runs& r, const run_result& x) {
        r.outputs.push_back(digest_of(x.outputs));
        r.ms.push_back(x.ms);
        r.cpu_ms.push_back(x.cpu_ms);
        r.start_kb.push_back(x.start_kb);
        r.peak_kb.push_back(x.peak_kb);
    }

    resource_options o_;
    std::vector<resource_runs> runs_;
};

}  // namespace memo::oracle
