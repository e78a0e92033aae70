#pragma once
// Differential testing of one model on several backends: run, judge, localise (localise.hpp),
// minimise (minimise.hpp). What it learns across models: the declines of its backends
// (declines.hpp), their confirmed hangs (hangs.hpp), which masked differences are worth a check
// (masked.hpp).
#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "../backends/executor.hpp"
#include "../tensors/budget.hpp"
#include "../tensors/inputs.hpp"
#include "hangs.hpp"
#include "localise.hpp"
#include "masked.hpp"
#include "minimise.hpp"
#include "signature.hpp"
#include "tester.hpp"

namespace memo::oracle {

class differential final : public tester {
public:
    /// `participants` are compared; `truth`, the reference interpreter in float64 (with the
    /// kernels of any layers of the user's own), computes the reference (O of D_MAD).
    differential(std::vector<executor*> participants, reference::interpreter& truth, const registry& reg, options o = {}, input_options in = {})
        : xs_(std::move(participants)), truth_(truth), reg_(&reg), o_(o), in_(in) {}

    differential(const differential&) = delete;  // its truth reads the model it holds
    differential& operator=(const differential&) = delete;

    std::string_view name() const override { return "differential"; }
    const input_options& inputs() const override { return in_; }
    const options& oracle_options() const noexcept { return o_; }
    std::span<executor* const> participants() const override { return xs_; }

    /// Starts running m on every participant that supports it (workers run while the caller goes on).
    /// Models fewer than two participants take are not run (nothing to compare them with), unless
    /// there is only one participant.
    void begin(const model& m) override {
        current_ = m;
        obs_.clear();
        running_.clear();
        inputs_.clear();
        if (auto fits = within_budget(m, in_.samples, o_.max_bytes); !fits) {  // before any tensor of it exists
            obs_ = declined_as_too_large(xs_, fits.reason());
            truth_.reset(current_, inputs_);
            skipped_ = true;
            return;
        }
        inputs_ = make_inputs(m, in_);
        truth_.reset(current_, inputs_);
        std::vector<std::size_t> runnable;
        for (std::size_t k = 0; k < xs_.size(); ++k) {
            observation ob{std::string(xs_[k]->name()), {}, {}, {}, xs_[k]->rounding()};
            if (auto s = supported(k, m); !s) ob.result = run_result::failed(run_status::unsupported, s.reason());
            else runnable.push_back(k);
            obs_.push_back(std::move(ob));
        }
        skipped_ = xs_.size() >= 2 && runnable.size() < 2;
        if (skipped_) return;
        for (std::size_t k : runnable) {
            hangs_.shorten_limits(*xs_[k], m);
            xs_[k]->submit(m, inputs_, traced_run(trace_, *xs_[k]));
            running_.push_back(k);
        }
    }

    /// Traced runs return every node's output: each observation then carries a digest per node
    /// (what a campaign's store keeps, for replay), and the oracle still sees the model's outputs.
    void set_trace(bool on) override { trace_ = on; }
    bool share_declines(decline_table& t) override {
        shared_ = &t;
        return true;
    }

    /// Whether the last model was left unjudged because fewer than two participants take it (by
    /// supports(), or by declining it when run).
    bool last_skipped() const override { return skipped_; }

    /// Waits for the runs begun last and judges them; a verdict that holds is localised.
    verdict finish() override {
        for (std::size_t k : running_) {
            obs_[k].result = xs_[k]->collect();
            hangs_.restore_limits(*xs_[k]);
            keep_node_digests(obs_[k], current_, trace_ && xs_[k]->traceable());
        }
        running_.clear();
        // A layer, dtype and layout a backend declined once, it declines again: learn it. A run
        // that went through forgets what its nodes were learnt to be declined for.
        declines().learn(current_, obs_, !minimising_);
        // A backend that declined at run time what supports() let through counts as one that
        // declined before: the verdict never depends on what was learnt from earlier models.
        if (!skipped_ && xs_.size() >= 2) {
            std::size_t took = 0;
            for (const auto& o : obs_) took += o.result.status != run_status::unsupported;
            skipped_ = took < 2;
        }
        if (skipped_) return {};
        const double truth_before = truth_.ms();
        verdict v = judge(
            obs_, [&] { return truth_.outputs(); }, o_);
        truth_judging_ms_ += truth_.ms() - truth_before;
        // What follows is localisation, the truth's runs for it included.
        struct localising {
            double& into;
            const std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
            ~localising() { into += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); }
        } timed{localise_ms_};
        if (!v && trace_) v = masked_.spot(current_, obs_, o_);
        suppressed_ = false;
        if (v && named_by_class(v) && v.node < 0) v.node = hangs_.trigger_in(v, current_);
        // Confirmed before it is localised: a library that runs the whole graph is localised by
        // running prefixes, each of which may cost the whole limit.
        if (v && v.status() == run_status::timeout && !timeout_confirmed(v)) {
            ++unconfirmed_timeouts_;
            return {};
        }
        const bool masked = v.differs() && v.differs()->masked;
        if (v && !localiser({current_, inputs_, obs_, xs_, truth_, *reg_, o_, in_, deadline()}).localise(v)) {
            suppressed_ = !masked;  // a masked check's outputs agreed: nothing to suppress
            v = verdict{};
        }
        if (masked) masked_.checked(static_cast<bool>(v));
        hangs_.learn(v, current_);
        return v;
    }

    /// Time-outs that did not come again when the model ran alone with the limit doubled (the
    /// machine was busy, not the library stuck): not reported.
    std::uint64_t unconfirmed_timeouts() const noexcept { return unconfirmed_timeouts_; }

    /// Runs given short limits because their model carries the trigger (layer class and dtype) of
    /// a time-out or memory blow-up their backend showed before.
    std::uint64_t short_limit_runs() const noexcept { return hangs_.short_limit_runs(); }
    /// Milliseconds spent on the float64 truth while judging, and on localising verdicts (the
    /// truth's runs for it included), in the caller's thread.
    double truth_ms() const noexcept { return truth_judging_ms_; }
    /// The participant of that name, or null.
    executor* by_name(std::string_view n) const { return oracle::by_name(xs_, n); }
    /// Every node's float64 value for the last model and its inputs (the reference's, run once).
    const std::vector<tensor>& truth_values() { return truth_.nodes(); }
    double localise_ms() const noexcept { return localise_ms_; }

    /// Models whose outputs agreed but whose traces differed at some node beyond what rounding
    /// explains at a glance, so were localised; and those of them localised to a node (reported).
    std::uint64_t masked_checks() const noexcept { return masked_.checks(); }
    std::uint64_t masked_found() const noexcept { return masked_.found(); }
    /// Masked differences left unchecked: their layer class between their two backends showed
    /// only rounding in the checks before (every 2^k-th is checked after k misses).
    std::uint64_t masked_skipped() const noexcept { return masked_.skipped(); }

    /// Whether finish() would return without waiting for a worker.
    bool ready() override {
        for (std::size_t k : running_)
            if (!xs_[k]->ready()) return false;
        return true;
    }

    /// The observations of the last run.
    const std::vector<observation>& observations() const override { return obs_; }
    const std::vector<tensor>& last_inputs() const override { return inputs_; }
    /// Whether the last run's outputs differed but no single node was to blame (rounding).
    bool last_suppressed() const override { return suppressed_; }

    /// The smallest model found (within `budget` re-runs) that gives the same kind of verdict on
    /// the same culprits, localised to the same layer class: the node alone, the node with its
    /// producer, the prefix up to it; then smaller inputs and parameters. A failure of the whole
    /// graph (no layer to blame) keeps to the shortest prefix that still fails so.
    minimised minimise(const model& m, const verdict& v, int budget = 40) override {
        struct flag_for_scope {  // its runs are not the campaign's: their declines count no reasons
            bool& flag;
            bool before;
            ~flag_for_scope() { flag = before; }
        } minimising{minimising_, std::exchange(minimising_, true)};
        return minimise_with(m, v, *reg_, [&](const model& cand, minimised& best) {
            if (best.checks >= budget || past_deadline()) return false;
            ++best.checks;
            verdict got = check(cand);
            if (got.what != v.what || got.culprits != v.culprits || got.layer != v.layer || got.whole_graph != v.whole_graph) return false;
            best.m = cand, best.v = std::move(got);
            return true;
        });
    }

private:
    /// A time-out is reported only when the model, run again alone on each culprit with the limit
    /// doubled, times out again (as AFL confirms its hangs). A compiler's time is held to a limit
    /// of its own (isolation_limits::compile_ms), which is not doubled: compiling too long is a
    /// decline, not a hang.
    bool timeout_confirmed(const verdict& v) {
        if (past_deadline()) return false;  // no time left to confirm it: not reported
        for (const auto& c : v.culprits) {
            executor* x = by_name(c);
            if (!x || x->time_limit() <= 0) continue;
            if (hangs_.knows_timeout(c, v, current_)) continue;  // a sighting of a hang confirmed before
            const double limit = x->time_limit();
            x->set_time_limit(2 * limit);
            const auto again = x->run(current_, inputs_, {});
            x->set_time_limit(limit);
            if (again.status != run_status::timeout) return false;
        }
        return true;
    }

    /// Whether participant k takes m: by its supports(), and by what it was learnt to decline
    /// (oracle/declines.hpp).
    expected<void> supported(std::size_t k, const model& m) {
        if (auto s = xs_[k]->supports(m); !s) return s;
        return declines().held_back(std::string(xs_[k]->name()), m);
    }

    std::vector<executor*> xs_;
    reference_values truth_;
    const registry* reg_;
    options o_;
    input_options in_;
    model current_;
    std::vector<tensor> inputs_;
    std::vector<observation> obs_;
    std::vector<std::size_t> running_;
    bool suppressed_ = false, skipped_ = false, trace_ = false;
    decline_table own_declines_;       // what its participants declined, unless it shares a table
    decline_table* shared_ = nullptr;  // share_declines()
    bool minimising_ = false;
    decline_table& declines() { return shared_ ? *shared_ : own_declines_; }
    hang_memory hangs_;
    std::uint64_t unconfirmed_timeouts_ = 0;
    masked_differences masked_;
    double localise_ms_ = 0, truth_judging_ms_ = 0;  // the truth's runs while judging; while localising they are localisation's
};

}  // namespace memo::oracle
