#pragma once
// Differential testing of one model on several backends: run, judge, localise, minimise.
//
// Localisation finds the first node where the backends part: for a crash the failing node (or,
// when the worker just died, the shortest failing prefix of the model); for NaN the first node
// whose own output turns non-finite on one backend only; for an inconsistency the first node
// whose output differs beyond its dtype's tolerance when every backend is fed the float64
// reference's values for that node's inputs (teacher forcing). An inconsistency that localises to
// no node is error accumulated through a deep model, not a bug, and is dropped.
#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../backends/executor.hpp"
#include "../core/hash.hpp"
#include "../coverage/value_span.hpp"
#include "../tensors/budget.hpp"
#include "../tensors/inputs.hpp"
#include "../tensors/weights.hpp"
#include "hangs.hpp"
#include "minimise.hpp"
#include "rounding.hpp"
#include "tester.hpp"

namespace memo::oracle {

/// What of a node a bug is taken to hinge on besides its layer class: its mode parameters that
/// differ from Keras' defaults, and its dtype. Part of a bug's signature.
inline void hash_trigger(hasher& h, const node& n) {
    for (std::size_t i = 0; i < n.params.size(); ++i)
        if (n.layer->params[i].what == role::mode && !(n.params[i] == n.layer->params[i].fallback)) {
            h.mix(n.layer->params[i].name);
            hash_value(h, n.params[i]);
        }
    h.mix(name_of(n.type));
}

/// A stable name for a bug: kind, culprits, the localised layer, its mode parameters that differ
/// from Keras' defaults (not for a time-out or memory blow-up), its dtype and the error text with
/// each number blanked to one '#'. "Conv2DTranspose-1a2b3c4d".
inline std::string signature(const verdict& v, const model& m) {
    hasher h = verdict_hash(v);
    const std::string_view cls = named_class(v, m);
    std::string layer = cls.empty() ? "unlocalised" : std::string(cls);
    h.mix(layer);
    if (v.node >= 0 && static_cast<std::size_t>(v.node) < m.size()) {
        if (named_by_class(v)) h.mix(name_of(m[v.node].type));
        else hash_trigger(h, m[v.node]);
    } else if (!cls.empty()) {
        hash_trigger(h, m.nodes.back());  // a rewritten graph's: the settings of the layer it ends with
    }
    std::string msg;
    for (char c : v.message.substr(0, 120)) {
        const bool digit = c >= '0' && c <= '9';
        if (!digit) msg += c;
        else if (msg.empty() || msg.back() != '#') msg += '#';  // a number, whatever its length: one '#'
    }
    h.mix(msg);
    return layer + "-" + hex8(h);
}

/// Which masked differences are checked. Each check costs a localisation (the truth at every
/// node, two forced runs, the rounding measured): where checks of one layer class between two
/// backends kept finding only rounding, every 2^k-th sighting is checked after k misses, not every one.
class masked_sampling {
public:
    /// Whether this sighting, between backends a and b at a node of `layer` and dtype t, is checked.
    bool check(std::string_view a, std::string_view b, std::string_view layer, dtype t) {
        key_ = {std::string(a), std::string(b), std::string(layer), t};
        auto& [seen, misses] = record_[key_];
        ++seen;
        if (misses >= 2 && seen % (std::uint64_t{1} << std::min<std::uint64_t>(misses - 1, 16)) != 0) {
            ++skipped_;
            return false;
        }
        ++checks_;
        return true;
    }
    /// The last check's outcome: a bug localised to a node, or only rounding (a miss).
    void checked(bool found) {
        auto& misses = record_[key_].second;
        misses = found ? 0 : misses + 1;
        found_ += found;
    }
    std::uint64_t checks() const noexcept { return checks_; }
    std::uint64_t found() const noexcept { return found_; }
    std::uint64_t skipped() const noexcept { return skipped_; }

private:
    using key = std::tuple<std::string, std::string, std::string, dtype>;  // backends, layer class, dtype
    key key_;
    std::map<key, std::pair<std::uint64_t, std::uint64_t>> record_;  // sightings, checks since one found a bug
    std::uint64_t checks_ = 0, found_ = 0, skipped_ = 0;
};

class differential final : public tester {
public:
    /// `participants` are compared; `truth` computes the float64 reference (O of D_MAD).
    differential(std::vector<executor*> participants, executor& truth, const registry& reg, options o = {}, input_options in = {})
        : xs_(std::move(participants)), truth_(&truth), reg_(&reg), o_(o), in_(in) {}

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
            skipped_ = true;
            return;
        }
        inputs_ = make_inputs(m, in_);
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
            const bool hangs = hangs_.carries(xs_[k]->name(), m, run_status::timeout), blows_up = hangs_.carries(xs_[k]->name(), m, run_status::memory);
            if (hangs || blows_up) {
                // Each such run would cost the whole limit again: a short one, and the rest of the
                // model is still tested on that library.
                const limits full{xs_[k]->time_limit(), xs_[k]->memory_limit_mb()};
                restore_limit_[k] = full;
                if (hangs && full.ms > 0) xs_[k]->set_time_limit(std::max(250.0, full.ms / 10));
                if (blows_up && full.mb > 0) xs_[k]->set_memory_limit_mb(std::max<std::int64_t>(256, full.mb / 8));
                ++short_limit_runs_;
            }
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
            if (const auto it = restore_limit_.find(k); it != restore_limit_.end()) {
                if (it->second.ms > 0) xs_[k]->set_time_limit(it->second.ms);
                if (it->second.mb > 0) xs_[k]->set_memory_limit_mb(it->second.mb);
                restore_limit_.erase(it);
            }
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
        truth_cache_.clear();
        truth_inner_.clear();
        verdict v = judge(
            obs_, [&] { return truth_outputs(); }, o_);
        // What follows is localisation, the truth's runs for it included.
        struct localising {
            double &into, &truth;
            const double truth_before;
            const std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
            ~localising() {
                into += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
                truth = truth_before;
            }
        } timed{localise_ms_, truth_ms_, truth_ms_};
        if (!v && trace_) v = masked_difference();
        suppressed_ = false;
        if (v && named_by_class(v) && v.node < 0) v.node = hangs_.trigger_in(v, current_);
        // Confirmed before it is localised: a library that runs the whole graph is localised by
        // running prefixes, each of which may cost the whole limit.
        if (v && v.status == run_status::timeout && !timeout_confirmed(v)) {
            ++unconfirmed_timeouts_;
            return {};
        }
        const bool masked = v.masked;
        if (v && !localise(v)) {
            suppressed_ = !v.masked;  // a masked check's outputs agreed: nothing to suppress
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
    std::uint64_t short_limit_runs() const noexcept { return short_limit_runs_; }
    /// Milliseconds spent on the float64 truth while judging, and on localising verdicts (the
    /// truth's runs for it included), in the caller's thread.
    double truth_ms() const noexcept { return truth_ms_; }
    /// The participant of that name, or null.
    executor* by_name(std::string_view n) const {
        for (auto* x : xs_)
            if (x->name() == n) return x;
        return nullptr;
    }
    /// Every node's float64 value for the last model and its inputs (the reference's, run once).
    const std::vector<tensor>& truth_values() {
        truth_outputs();
        return truth_cache_;
    }
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

    std::vector<tensor> truth_outputs() {
        if (truth_cache_.empty()) {
            const auto t0 = std::chrono::steady_clock::now();
            auto r = truth_->run(current_, inputs_, {true, {}, dtype::float64});
            truth_cache_ = std::move(r.outputs);
            truth_inner_ = std::move(r.node_inner);
            truth_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        }
        std::vector<tensor> outs;
        for (int o : current_.outputs)
            if (static_cast<std::size_t>(o) < truth_cache_.size()) outs.push_back(truth_cache_[static_cast<std::size_t>(o)]);
        return outs;
    }

    /// Outputs that agree can hide a wrong node: a later layer crops, pads over or saturates what it
    /// computed. The traced runs' per-node sums of magnitudes show it: where two libraries' sums at
    /// a node differ by more than ten times the dtype's tolerance (a tenth at most), the model is
    /// localised as an inconsistency, and the rounding rule at the node decides. The culprit is the
    /// one farther from float64 there (localise()).
    verdict masked_difference() {
        const model& m = current_;
        const observation *a = nullptr, *b = nullptr;
        std::size_t first = m.size();
        for (std::size_t x = 0; x < obs_.size(); ++x)
            for (std::size_t y = x + 1; y < obs_.size(); ++y) {
                const auto &p = obs_[x], &q = obs_[y];
                if (!p.result.ok() || !q.result.ok() || p.nodes.size() != m.size() || q.nodes.size() != m.size()) continue;
                for (std::size_t i = 0; i < first; ++i) {
                    if (m.nodes[i].layer->arity.max == 0 || p.nodes[i].hash == q.nodes[i].hash) continue;
                    const double sa = p.nodes[i].abs_sum, sb = q.nodes[i].abs_sum;
                    const double rel = std::abs(sa - sb) / std::max({sa, sb, 1e-30});
                    if (rel > std::min(0.1, 10 * tolerance(judged_as(m.nodes[i].type, p.rounding, q.rounding), o_))) {
                        first = i, a = &p, b = &q;
                        break;
                    }
                }
            }
        verdict v;
        if (!a) return v;
        if (!masked_.check(a->backend, b->backend, m.nodes[first].layer->name, m.nodes[first].type)) return v;
        v.what = kind::inconsistency;
        v.culprits = {a->backend};
        v.peers = {b->backend};
        v.masked = true;
        return v;
    }

    bool localise(verdict& v) {
        const model& m = current_;
        executor* culprit = by_name(v.culprits.front());
        executor* peer = v.peers.empty() ? nullptr : by_name(v.peers.front());
        if (v.what == kind::crash) {
            // A failure of the graph whose every node runs alone has no layer to blame: by prefixes
            // it would be pinned on whichever layer each model happens to end with, one bug under
            // many signatures.
            if (v.node < 0 && !v.whole_graph) v.node = failing_prefix(*culprit, v.status);
        } else if (v.what == kind::nan && peer) {
            // Fed identical inputs too, so that a NaN carried in from a wrong layer before it (whose
            // values overflow a later recurrence) is not blamed on the layer where it shows.
            const auto fed = fed_inputs();
            v.node = nan_alone(*culprit, *peer, fed);
            if (v.node < 0) {
                const run_options opts{true, fed, {}};
                const auto [a, b] = run_both(*culprit, *peer, m, opts);
                if (a.ok() && b.ok())
                    for (std::size_t i = 0; i < std::min(a.outputs.size(), b.outputs.size()); ++i)
                        if (a.outputs[i].has_non_finite() != b.outputs[i].has_non_finite()) {
                            v.node = static_cast<int>(i);
                            break;
                        }
            }
            if (v.node >= 0 && range_explains(v.node)) return false;
            if (v.node < 0 && !fed.empty()) {
                // No node makes it alone: the NaN is the end of a difference before it, judged as
                // that inconsistency (or as rounding, when no node is beyond it).
                v.what = kind::inconsistency;
                v.message.clear();
                v.carried = true;
                return localise(v);
            }
        } else if (v.what == kind::inconsistency && peer) {
            // Every node's inputs are O's values rounded to the model's dtypes, so each backend gets
            // the very same numbers and only the node's own rounding remains.
            const auto fed = fed_inputs();
            if (fed.empty()) return false;
            const run_options forced{true, fed, {}};
            const auto [a, b] = run_both(*culprit, *peer, m, forced);
            if (!a.ok() || !b.ok()) return false;
            const auto like = [&](std::size_t i) { return judged_as(m.nodes[i].type, culprit->rounding(), peer->rounding()); };
            const auto bounds = measure_rounding(m, fed, a, b, like);
            if (bounds.empty()) return false;
            for (std::size_t i = 0; i < std::min(a.outputs.size(), b.outputs.size()); ++i) {
                if (m.nodes[i].layer->arity.max == 0) continue;
                // A node that rounding alone (4 to 12 units in its inputs, or its own dtype) moves beyond
                // the tolerance (a chaotic recurrence) amplifies any two libraries' rounding apart:
                // nothing to judge.
                // Nor does a node whose state, in float64, leaves its dtype's range: past it each
                // library's state is infinite or saturated in a way of its own, and the outputs (an
                // LSTM's o * tanh(c)) need not show it; a divisor near the smallest normal is a few
                // digits in one library and all of them in one that keeps it wider.
                if (bounds[i].past_range || bounds[i].by_rounding > tolerance(like(i), o_) * bounds[i].scale) continue;
                const auto d = compare({a.outputs[i]}, {b.outputs[i]});
                const double bound = rounding_bound(m, i, like(i), bounds[i].scale, input_magnitude(m, i, fed), bounds[i].slack, o_);
                if (!beyond(d, bound)) continue;
                if (v.node < 0) {
                    v.node = static_cast<int>(i);
                    v.at_node = {d.max_abs, bounds[i].scale, bound};
                    continue;
                }
                // Each node got the very same inputs: one beyond rounding after the first is a
                // fault of its own, which the first would otherwise hide for as long as both meet.
                verdict w = v;
                w.more.clear();
                w.node = static_cast<int>(i);
                w.at_node = {d.max_abs, bounds[i].scale, bound};
                farther_from_truth_first(w, a, b);
                w.message = "node " + std::to_string(i) + " differs on identical inputs, beside the difference at node " + std::to_string(v.node);
                name_node(w);
                v.more.push_back(std::move(w));
            }
            // No single layer to blame: rounding accumulated, or the library's rewriting of the graph.
            if (v.node < 0) return !v.masked && !v.carried && rewriting_differs(v, *culprit);
            // The culprit is the side farther from float64 at the node, on the same inputs: at the
            // outputs, a chaotic layer after the node (a recurrence whose values reach 1e20) can
            // leave the right side the farther one, or the outputs agree (masked), or end in NaN.
            farther_from_truth_first(v, a, b);
            if (v.carried) v.message = "node " + std::to_string(v.node) + " differs on identical inputs; the difference ends in NaN or infinity in the outputs";
            if (v.masked) v.message = "the outputs agree, but node " + std::to_string(v.node) + " differs on identical inputs (masked by the layers after it)";
        }
        name_node(v);
        return true;
    }

    /// The node where a NaN starts, found without running the whole model again: the first node
    /// whose output is non-finite in the plain run of a or of b only (as their traces or the
    /// workers' per-node flags say), when it stays so run alone on both with its own weights and
    /// the fed inputs (O's values of its inputs). -1 when a run does not say or that node alone
    /// does not show it: the whole model is then fed again. One layer taking seconds (a ConvLSTM3D
    /// that Keras' TensorFlow compiles with XLA at every step) then costs its plain run alone.
    int nan_alone(executor& a, executor& b, const std::vector<tensor>& fed) {
        const model& m = current_;
        const auto flags = [&](const executor& x) {
            std::vector<std::uint8_t> f;
            for (const auto& o : obs_) {
                if (o.backend != x.name()) continue;
                if (o.spans.size() == m.size())
                    for (const auto& s : o.spans) f.push_back(s.has(value_class::non_finite));
                else if (o.result.node_non_finite.size() == m.size()) f = o.result.node_non_finite;
            }
            return f;
        };
        const auto fa = flags(a), fb = flags(b);
        if (fa.size() != m.size() || fb.size() != m.size() || fed.size() < m.size()) return -1;
        std::size_t i = 0;
        while (i < m.size() && (fa[i] != 0) == (fb[i] != 0)) ++i;
        if (i == m.size() || m[static_cast<int>(i)].inputs.empty()) return -1;
        auto alone = isolate_node(m, static_cast<int>(i), *reg_, true);
        if (!alone) return -1;
        std::vector<tensor> ins;
        for (int e : m[static_cast<int>(i)].inputs) {
            ins.push_back(fed[static_cast<std::size_t>(e)]);
            ins.back().type = m[e].type;
        }
        const auto [ra, rb] = run_both(a, b, *alone, {}, ins);
        if (!ra.ok() || !rb.ok() || ra.outputs.empty() || rb.outputs.empty()) return -1;
        return ra.outputs[0].has_non_finite() != rb.outputs[0].has_non_finite() ? static_cast<int>(i) : -1;
    }

    /// m on two backends with the same options, both started before either is waited for: each
    /// runs in its own worker, so a localisation waits for the slower run, not for both in turn.
    /// Fed `inputs` when given, else the model's (inputs_).
    std::pair<run_result, run_result> run_both(executor& a, executor& b, const model& m, const run_options& o, std::span<const tensor> inputs = {}) {
        if (inputs.empty()) inputs = inputs_;
        a.submit(m, inputs, o);
        b.submit(m, inputs, o);
        auto first = a.collect();
        return {std::move(first), b.collect()};
    }

    /// Every node's inputs as O computed them, rounded to the model's dtypes: fed to each backend,
    /// they leave only each node's own rounding. Empty when the reference fails.
    std::vector<tensor> fed_inputs() {
        truth_outputs();
        auto fed = truth_cache_;
        if (fed.size() < current_.size()) return {};
        for (std::size_t i = 0; i < current_.size(); ++i)
            for (auto& x : fed[i].data) x = round_to(current_.nodes[i].type, x);
        return fed;
    }

    /// v's layer and producer, from its node.
    void name_node(verdict& v) const {
        if (v.node < 0 || static_cast<std::size_t>(v.node) >= current_.size()) return;
        const node& n = current_[v.node];
        v.layer = std::string(n.layer->name);
        if (!n.inputs.empty()) v.producer = std::string(current_[n.inputs[0]].layer->name);
    }

    /// Of the culprit's run a and the peer's run b on the fed inputs, the culprit is the one farther
    /// from float64 at v's node (when no output difference named it).
    void farther_from_truth_first(verdict& v, const run_result& a, const run_result& b) const {
        const auto& t = fed_truth_.at(static_cast<std::size_t>(v.node));
        if (compare({a.outputs[v.node]}, {t}).max_abs < compare({b.outputs[v.node]}, {t}).max_abs) std::swap(v.culprits, v.peers);
    }

    /// Whether node i's values leave its dtype's range (in float64, its output, its inputs, its
    /// recurrent state or what it divides by within a factor of 32 of the dtype's largest finite
    /// value, the margin a sum's partial terms may exceed its result by; or what it divides by
    /// within a factor of 32 of the smallest normal, where the dtype keeps fewer digits and then
    /// none: out_of_range):
    /// then one library overflowing to infinity where another stays finite is the dtype's range
    /// (a sum accumulated in float16 or in float32 ends apart), not a fault; as is one dividing by
    /// a float16 sum of squares that overflowed or underflowed where another summed in float32. So
    /// does a node whose float64 values are themselves non-finite while its inputs are finite: it
    /// grows past even float64's range (a SimpleRNN with exponential activation, NaN in float64
    /// after 46 steps, ends at 22.75 in bfloat16 after a trajectory of its own), and whether a
    /// narrower dtype ends finite there is its range's doing. A NaN carried in from the inputs is
    /// still judged.
    bool range_explains(int i) {
        const model& m = current_;
        const dtype t = m.nodes[static_cast<std::size_t>(i)].type;
        if (t == dtype::float64) return false;
        truth_outputs();
        if (static_cast<std::size_t>(i) >= truth_cache_.size()) return false;
        const auto non_finite = [&](int e) { return truth_cache_[static_cast<std::size_t>(e)].has_non_finite(); };
        if (non_finite(i) && std::ranges::none_of(m.nodes[static_cast<std::size_t>(i)].inputs, non_finite)) return true;
        const inner_range inner = static_cast<std::size_t>(i) < truth_inner_.size() ? truth_inner_[static_cast<std::size_t>(i)] : inner_range{};
        return out_of_range(t, std::max(magnitude(truth_cache_[static_cast<std::size_t>(i)]), input_magnitude(m, static_cast<std::size_t>(i), truth_cache_)),
                            inner);
    }

    /// Whether float64 values of magnitude s, or a node's inner values, leave dtype t's range by a
    /// margin of 32 (range_explains).
    static bool out_of_range(dtype t, double s, const inner_range& inner) {
        return t != dtype::float64 && (32 * std::max(s, inner.largest) >= max_finite(t) || inner.least_divisor < 32 * min_normal(t));
    }

    /// Per node: the magnitude of its float64 output on the fed inputs, and how much that output may
    /// move from rounding alone (the slack of oracle/rounding.hpp), from two measures:
    ///   moved  the float64 change when the fed inputs are perturbed by 4 to 12 units of their
    ///          dtype's roundoff and every activation's result by a unit of what its formula rounds
    ///          against (random signs), a layer's pre-activations by a unit of their own: the node's
    ///          conditioning in its inputs and in its activations' and own sums' rounding (a
    ///          Conv2D with softmax over equal pre-activations of 1e6 passes their rounding on).
    ///          A recurrence whose state grows (a ConvLSTM with selu and exponential gates: 2.7
    ///          times a step) amplifies a library's exp(x) - 1, rounded at 1,
    ///          step after step; the float32 reference, which calls expm1, does not show it;
    ///   drift  how far the better of the two compared libraries (a, b: their runs on the same fed
    ///          inputs) lies from float64: the node's conditioning in its own dtype. In a recurrence
    ///          whose state outgrows its inputs (an LSTM with softplus activation: state 1e4, fed
    ///          1e-3) the state's rounding, not the inputs', is what grows, and only a run in the
    ///          dtype shows it. The better library: the worse one may be the fault.
    /// A library that sums in its own order rounds about 16 times either, so the slack is 16 times
    /// the larger plus half a unit of the output's scale (the node's own dtype rounds its output).
    /// An ill-conditioned node (a LayerNormalization of nearly constant values, a long recurrence,
    /// values near a dtype's smallest normal) earns a wide slack; a well-conditioned one almost none.
    /// Empty when the reference fails.
    struct node_rounding {
        double scale = 0, slack = 0;
        double by_rounding = 0;   // the larger of moved and drift: beyond the tolerance, a chaotic node
        bool past_range = false;  // its float64 state leaves its dtype's range (out_of_range)
    };
    /// `like(i)`: the dtype whose rounding node i's two results carry (judged_as).
    template <class Like>
    std::vector<node_rounding> measure_rounding(const model& m, const std::vector<tensor>& fed, const run_result& a, const run_result& b, const Like& like) {
        auto shaken = fed;
        rng r(m.seed ^ 0x5ca1ab1eULL);
        for (std::size_t i = 0; i < shaken.size() && i < m.size(); ++i) {
            // Small values and zeros move too (at least 4 units of a thousandth of the tensor's
            // scale, or of 1e-3): a node fed zeros still rounds its own state, as a recurrence does.
            // Each value moves by 4 to 12 units, not 8: a sum that cancels (three terms of 3e3 to
            // 5e3 adding up to -0.2) does not move at all when every term moves by the same share
            // of itself, and with three terms random signs come out all alike one time in four.
            const dtype t = like(i);
            const double scale = magnitude(shaken[i]);
            for (auto& x : shaken[i].data)
                x += r.uniform_real(4.0, 12.0) * unit_roundoff(t) * std::max({std::abs(x), 1e-3 * scale, 1e-3}) * (r.chance(0.5) ? 1.0 : -1.0);
        }
        auto base = truth_->run(m, inputs_, {true, fed, dtype::float64});
        run_options moving{true, shaken, dtype::float64};
        moving.shake_activations = 1;  // a unit of each node's dtype; of the one its results are judged as, where coarser
        for (std::size_t i = 0; i < m.size(); ++i)
            moving.shake_activations = std::max(moving.shake_activations, unit_roundoff(like(i)) / unit_roundoff(m.nodes[i].type));
        const auto moved = truth_->run(m, inputs_, moving);
        if (!base.ok() || !moved.ok()) return {};
        const std::size_t n = std::min({m.size(), base.outputs.size(), moved.outputs.size(), a.outputs.size(), b.outputs.size()});
        std::vector<node_rounding> out(m.size());
        for (std::size_t i = 0; i < n; ++i) {
            const double by_inputs = compare({base.outputs[i]}, {moved.outputs[i]}).max_abs;
            const double by_dtype = std::min(compare({base.outputs[i]}, {a.outputs[i]}).max_abs, compare({base.outputs[i]}, {b.outputs[i]}).max_abs);
            const double scale = magnitude(base.outputs[i]);
            const double most = std::max(by_inputs, by_dtype);
            const inner_range inner = i < base.node_inner.size() ? base.node_inner[i] : inner_range{};
            out[i] = {scale, 16.0 * most + unit_roundoff(like(i)) * scale, most, out_of_range(m.nodes[i].type, 0, inner)};
        }
        fed_truth_ = std::move(base.outputs);
        return out;
    }

    /// A library that rewrites the whole graph before running it (executor::rewrites_graph) computes
    /// each layer in the forced runs as it does without the rewriting. Every layer agreeing there,
    /// its plain run's difference is the rewriting's when the same library's layer-by-layer run of
    /// the whole model (its every-node run) agrees with the peers: a fault of the whole graph, kept
    /// unlocalised (minimisation keeps the shortest prefix that still shows it), as the eager run
    /// against the compiled one tells a compiler's fault from a kernel's. Otherwise rounding
    /// accumulated over the layers, as in any library. The plain run must differ from the peers
    /// that run the graph as written, where there are any: two compilers that each keep more
    /// precision than a model's casts say (XLA's and Inductor's fusions may skip a float16 round
    /// trip) can be further apart than rounding allows while each agrees with the eager runs.
    bool rewriting_differs(verdict& v, executor& culprit) {
        if (!culprit.rewrites_graph()) return false;
        std::vector<observation> as_written;
        for (const auto& o : obs_) {
            const executor* x = by_name(o.backend);
            if (o.backend == culprit.name() || (x && !x->rewrites_graph())) as_written.push_back(o);
        }
        if (as_written.size() > 1) {
            const verdict p = judge(
                as_written, [&] { return truth_outputs(); }, o_);
            if (!p || std::find(p.culprits.begin(), p.culprits.end(), culprit.name()) == p.culprits.end()) return false;
        }
        const auto layered = culprit.run(current_, inputs_, run_options{true, {}, {}});
        if (!layered.ok() || layered.outputs.size() != current_.size()) return false;
        auto obs = obs_;
        for (auto& o : obs) {
            if (o.backend != culprit.name()) continue;
            o.result.outputs.clear();
            for (int k : current_.outputs) o.result.outputs.push_back(layered.outputs[static_cast<std::size_t>(k)]);
        }
        const verdict w = judge(
            obs, [&] { return truth_outputs(); }, o_);
        if (w && std::find(w.culprits.begin(), w.culprits.end(), culprit.name()) != w.culprits.end()) return false;
        // A compiler may sum in another order than the layers run in turn: its plain run is at
        // fault only where an output lies beyond that output's rounding bound from the layered
        // run (what the reproducer holds the compiled run against the eager one by).
        const auto plain = std::find_if(obs_.begin(), obs_.end(), [&](const observation& o) { return o.backend == culprit.name(); });
        if (plain == obs_.end()) return false;
        const auto& truth = truth_values();
        bool past_rounding = false;
        for (std::size_t j = 0; j < current_.outputs.size() && j < plain->result.outputs.size(); ++j) {
            const auto k = static_cast<std::size_t>(current_.outputs[j]);
            if (k >= truth.size()) continue;
            past_rounding = past_rounding || beyond(compare({plain->result.outputs[j]}, {layered.outputs[k]}), unmeasured_bound(current_, k, truth, o_));
        }
        if (!past_rounding) return false;
        v.whole_graph = true;
        v.message = "the rewritten graph differs, its layers run in turn agree" + (v.message.empty() ? std::string() : " (" + v.message + ")");
        return true;
    }

    /// The shortest prefix on which the culprit still fails (binary search over the last node): a
    /// crash of any kind, or again a time-out or a memory blow-up (a library that runs the whole
    /// graph does not say which node it was in).
    int failing_prefix(executor& x, run_status s) {
        const bool same_status = s == run_status::timeout || s == run_status::memory;
        int lo = 0, hi = static_cast<int>(current_.size()) - 1, found = -1;
        while (lo <= hi && !past_deadline()) {
            const int mid = (lo + hi) / 2;
            const model p = prefix(current_, mid);
            const auto in = make_inputs(p, in_);
            const run_status got = x.run(p, in, {}).status;
            // A prefix whose output the library shapes otherwise than the model (invalid) is where
            // a failure after it begins: the layer after a misshapen one fails on its input.
            if (same_status ? got == s : failed(got) || got == run_status::invalid) found = mid, hi = mid - 1;
            else lo = mid + 1;
        }
        return found;
    }

    std::vector<executor*> xs_;
    executor* truth_;
    const registry* reg_;
    options o_;
    input_options in_;
    model current_;
    std::vector<tensor> inputs_, truth_cache_;
    std::vector<inner_range> truth_inner_;  // with truth_cache_: what each node held inside (run_result::node_inner)
    std::vector<observation> obs_;
    std::vector<std::size_t> running_;
    bool suppressed_ = false, skipped_ = false, trace_ = false;
    decline_table own_declines_;       // what its participants declined, unless it shares a table
    decline_table* shared_ = nullptr;  // share_declines()
    bool minimising_ = false;
    decline_table& declines() { return shared_ ? *shared_ : own_declines_; }
    hang_memory hangs_;
    struct limits {
        double ms = 0;
        std::int64_t mb = 0;
    };
    std::map<std::size_t, limits> restore_limit_;  // participants running under short limits
    std::uint64_t short_limit_runs_ = 0;
    std::uint64_t unconfirmed_timeouts_ = 0;
    masked_sampling masked_;
    double truth_ms_ = 0, localise_ms_ = 0;
    std::vector<tensor> fed_truth_;  // the last localisation's float64 node outputs on the fed inputs
};

}  // namespace memo::oracle
