#pragma once
// A tester runs one model on the backends under test and judges what they did: what a campaign's
// execution stage drives, one model at a time per lane. Two kinds exist:
//   differential  (differential.hpp)  the same model on several libraries, judged against each other
//   metamorphic   (metamorphic.hpp)   a model and a variant that must give the same outputs, on each
//                                     library alone
// begin() starts the runs and returns (the backends work in their workers meanwhile); finish()
// waits for them and returns the verdict, localised.
#include <chrono>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../backends/executor.hpp"
#include "../tensors/inputs.hpp"
#include "declines.hpp"
#include "oracle.hpp"

namespace memo::oracle {

/// The smallest model found that still gives a verdict, and the re-runs it took.
struct minimised {
    model m;
    verdict v;
    int checks = 0;
};

/// How a tester submits a model: traced (every node's output, digested for the campaign's store)
/// when the campaign traces and the backend can.
inline run_options traced_run(bool trace, const executor& x) {
    run_options o;
    o.every_node = o.digest_nodes = trace && x.traceable();
    return o;
}

/// Keeps a traced run's digest per node in its observation: a worker digests the nodes itself; an
/// in-process backend returns every node's output, digested here.
inline void keep_node_digests(observation& ob, const model& m, bool traced) {
    if (!traced || !ob.result.ok()) return;
    if (ob.result.node_digests.empty()) ob.result.digest_nodes(m);
    ob.nodes = std::move(ob.result.node_digests);
    ob.spans = std::move(ob.result.node_spans);
}

/// The observations of a model too large to run (tensors/budget.hpp): every participant declines it
/// with the reason, and no tensor of it is made.
inline std::vector<observation> declined_as_too_large(std::span<executor* const> parts, const std::string& why) {
    std::vector<observation> obs;
    for (auto* x : parts) obs.push_back({std::string(x->name()), run_result::failed(run_status::unsupported, "too large to run: " + why), {}, {}});
    return obs;
}

class tester {
public:
    virtual ~tester() = default;
    /// "differential" or "metamorphic": part of a stored judgement's key.
    virtual std::string_view name() const = 0;
    virtual std::span<executor* const> participants() const = 0;
    virtual const input_options& inputs() const = 0;
    /// Traced runs return a digest of every node's output (what a campaign's store keeps).
    virtual void set_trace(bool on) = 0;
    /// Learns what its backends decline into `t`, and holds models back by it, in place of a table
    /// of its own (the lanes of a campaign share one). False: the tester learns no declines.
    virtual bool share_declines(decline_table&) { return false; }

    virtual void begin(const model& m) = 0;
    /// Drops the runs begun last, unjudged (a campaign at its budget's end does not wait for them).
    virtual void abandon() {
        for (auto* x : participants()) x->abandon();
    }
    /// Whether finish() would return without waiting for a worker. Not const: a tester whose runs
    /// come in steps (the metamorphic one: the model, then its variant) starts the next step here.
    virtual bool ready() = 0;
    /// Adds the descriptors whose answers ready() still waits for (see executor::awaited_fd).
    void awaited_fds(std::vector<int>& fds) const {
        for (auto* x : participants())
            if (const int fd = x->awaited_fd(); fd >= 0 && !x->ready()) fds.push_back(fd);
    }
    virtual verdict finish() = 0;
    verdict check(const model& m) {
        begin(m);
        return finish();
    }

    /// Whether the last model was left unjudged (no backend pair, or no variant, to judge it by).
    virtual bool last_skipped() const = 0;
    /// Whether the last model's outputs differed but the difference was put down to rounding.
    virtual bool last_suppressed() const = 0;
    /// The runs of the last model (the model itself, not a variant), and its inputs.
    virtual const std::vector<observation>& observations() const = 0;
    virtual const std::vector<tensor>& last_inputs() const = 0;
    /// A smaller model that shows the same verdict, within `budget` re-runs.
    virtual minimised minimise(const model& m, const verdict& v, int budget = 40) = 0;

    /// When the campaign's budget ends: work beyond judging (minimisation, confirming a
    /// time-out) stops there, so that the campaign ends on time.
    void set_deadline(std::chrono::steady_clock::time_point t) noexcept { deadline_ = t; }
    bool past_deadline() const noexcept { return std::chrono::steady_clock::now() >= deadline_; }
    std::chrono::steady_clock::time_point deadline() const noexcept { return deadline_; }

private:
    std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
};

/// The participants whose run succeeded, given a tester's observations of one model (those the
/// resource oracles run it on again).
inline std::vector<executor*> ran_ok(std::span<executor* const> parts, const std::vector<observation>& obs) {
    std::vector<executor*> xs;
    for (std::size_t k = 0; k < obs.size() && k < parts.size(); ++k)
        if (obs[k].result.ok()) xs.push_back(parts[k]);
    return xs;
}

}  // namespace memo::oracle
