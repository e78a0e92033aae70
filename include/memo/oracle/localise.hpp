#pragma once
// Localisation: the first node where the backends of a verdict part. For a crash, the failing node
// (or, when the worker just died, the shortest failing prefix of the model); for NaN, the first
// node whose own output turns non-finite on one backend only; for an inconsistency, the first node
// whose output differs beyond its dtype's tolerance when every backend is fed the float64
// reference's values for that node's inputs (teacher forcing). An inconsistency that localises to
// no node is error accumulated through a deep model, not a bug, and is dropped.
#include <algorithm>
#include <chrono>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../backends/executor.hpp"
#include "../backends/reference/interpreter.hpp"
#include "../coverage/value_span.hpp"
#include "../tensors/inputs.hpp"
#include "minimise.hpp"
#include "oracle.hpp"
#include "rounding.hpp"

namespace memo::oracle {

/// The participant of that name among xs, or null.
inline executor* by_name(std::span<executor* const> xs, std::string_view n) {
    for (auto* x : xs)
        if (x->name() == n) return x;
    return nullptr;
}

/// The float64 reference's values (O of D_MAD) for one model and its inputs: run the first time
/// they are asked for, kept until the next model (a failed run is tried again when asked again).
/// What judging, localising and a reproducer's expected values read.
class reference_values {
public:
    explicit reference_values(reference::interpreter& reference) : reference_(&reference) {}
    /// The model and inputs asked about from now on; both outlive the asking.
    void reset(const model& m, std::span<const tensor> inputs) {
        m_ = &m, inputs_ = inputs;
        nodes_.clear();
        inner_.clear();
    }
    /// Every node's value; empty when the reference fails.
    const std::vector<tensor>& nodes() {
        if (nodes_.empty()) {
            const auto t0 = std::chrono::steady_clock::now();
            auto r = reference_->run(*m_, inputs_, {true, {}, dtype::float64});
            nodes_ = std::move(r.outputs);
            inner_ = std::move(r.node_inner);
            ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        }
        return nodes_;
    }
    /// What each node held inside (run_result::node_inner), beside nodes().
    const std::vector<inner_range>& inner() {
        nodes();
        return inner_;
    }
    /// The model's outputs.
    std::vector<tensor> outputs() {
        const auto& all = nodes();
        std::vector<tensor> outs;
        for (int o : m_->outputs)
            if (static_cast<std::size_t>(o) < all.size()) outs.push_back(all[static_cast<std::size_t>(o)]);
        return outs;
    }
    /// Every node's value rounded to its dtype: fed to each backend as each node's inputs, they
    /// leave only each node's own rounding. Empty when the reference fails.
    std::vector<tensor> fed() {
        auto fed = nodes();
        if (fed.size() < m_->size()) return {};
        for (std::size_t i = 0; i < m_->size(); ++i)
            for (auto& x : fed[i].data) x = round_to(m_->nodes[i].type, x);
        return fed;
    }
    /// The interpreter that computes them, for runs of its own (fed, shaken).
    reference::interpreter& runner() const noexcept { return *reference_; }
    /// Milliseconds its runs took in the caller's thread, all models together.
    double ms() const noexcept { return ms_; }

private:
    reference::interpreter* reference_;
    const model* m_ = nullptr;
    std::span<const tensor> inputs_;
    std::vector<tensor> nodes_;
    std::vector<inner_range> inner_;  // what each node held inside, beside nodes_
    double ms_ = 0;
};

/// Whether float64 values of magnitude s, or a node's inner values, leave dtype t's range by a
/// margin of 32 (range_explains).
inline bool out_of_range(dtype t, double s, const inner_range& inner) {
    return t != dtype::float64 && (32 * std::max(s, inner.largest) >= max_finite(t) || inner.least_divisor < 32 * min_normal(t));
}

/// Localises one verdict of a differential run (the file's head): made for the verdict, it reads
/// the run's model, inputs and observations and keeps its forced runs' float64 values.
class localiser {
public:
    /// What the run that gave the verdict saw, and what localising may use.
    struct run {
        const model& m;
        std::span<const tensor> inputs;
        std::span<const observation> obs;
        std::span<executor* const> backends;
        reference_values& truth;
        const registry& reg;
        const options& o;
        const input_options& in;
        std::chrono::steady_clock::time_point deadline;  // the prefix search stops there
    };
    explicit localiser(const run& r) : r_(r) {}

    /// Localises v: its node, layer and producer named, an inconsistency's further nodes in
    /// its `more`. False when no node is to blame (rounding accumulated): the verdict is dropped.
    bool localise(verdict& v) {
        executor* culprit = by_name(v.culprits.front());
        executor* peer = v.peers.empty() ? nullptr : by_name(v.peers.front());
        if (v.what == kind::crash) {
            // A failure of the graph whose every node runs alone has no layer to blame: by prefixes
            // it would be pinned on whichever layer each model happens to end with, one bug under
            // many signatures.
            if (v.node < 0 && !v.whole_graph) v.node = failing_prefix(*culprit, v.status());
        } else if (v.what == kind::nan && peer) {
            // Fed identical inputs too, so that a NaN carried in from a wrong layer before it (whose
            // values overflow a later recurrence) is not blamed on the layer where it shows.
            const auto fed = r_.truth.fed();
            v.node = first_nan_node(*culprit, *peer, fed);
            if (v.node >= 0 && range_explains(v.node)) return false;
            if (v.node < 0 && !fed.empty()) {
                // No node makes it alone: the NaN is the end of a difference before it, judged as
                // that inconsistency (or as rounding, when no node is beyond it).
                v.what = kind::inconsistency;
                v.message.clear();
                v.details.emplace<outputs_differ>().carried = true;
                return localise(v);
            }
        } else if (v.what == kind::inconsistency && peer) {
            if (!localise_inconsistency(v, *culprit, *peer)) return false;
        }
        name_node(v);
        return true;
    }

private:
    /// The first node whose output is non-finite on one of a and b only, on the fed inputs: as
    /// nan_alone() finds it, else from the whole model run fed on both. -1 when none is.
    int first_nan_node(executor& a, executor& b, const std::vector<tensor>& fed) {
        if (const int i = nan_alone(a, b, fed); i >= 0) return i;
        const auto [ra, rb] = run_both(a, b, r_.m, run_options{true, fed, {}});
        if (ra.ok() && rb.ok())
            for (std::size_t i = 0; i < std::min(ra.outputs.size(), rb.outputs.size()); ++i)
                if (ra.outputs[i].has_non_finite() != rb.outputs[i].has_non_finite()) return static_cast<int>(i);
        return -1;
    }

    /// An inconsistency between culprit and peer: the first node beyond rounding on identical
    /// inputs (v.node, with the culprit the side farther from float64 there), each later one a
    /// verdict of its own in its `more`. With no such node, true only for a fault of a rewritten graph
    /// (rewriting_differs).
    bool localise_inconsistency(verdict& v, executor& culprit, executor& peer) {
        const model& m = r_.m;
        auto& apart = std::get<outputs_differ>(v.details);  // judge() gives every inconsistency its figures
        // Every node's inputs are O's values rounded to the model's dtypes, so each backend gets
        // the very same numbers and only the node's own rounding remains.
        const auto fed = r_.truth.fed();
        if (fed.empty()) return false;
        const run_options forced{true, fed, {}};
        const auto [a, b] = run_both(culprit, peer, m, forced);
        if (!a.ok() || !b.ok()) return false;
        const auto like = [&](std::size_t i) { return judged_as(m.nodes[i].type, culprit.rounding(), peer.rounding()); };
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
            if (bounds[i].past_range || bounds[i].by_rounding > tolerance(like(i), r_.o) * bounds[i].scale) continue;
            const auto d = compare({a.outputs[i]}, {b.outputs[i]});
            const double bound = rounding_bound(m, i, like(i), bounds[i].scale, input_magnitude(m, i, fed), bounds[i].slack, r_.o);
            if (!beyond(d, bound)) continue;
            if (v.node < 0) {
                v.node = static_cast<int>(i);
                apart.at_node = {d.max_abs, bounds[i].scale, bound};
                continue;
            }
            // Each node got the very same inputs: one beyond rounding after the first is a
            // fault of its own, which the first would otherwise hide for as long as both meet.
            verdict w = v;
            w.differs()->more.clear();
            w.node = static_cast<int>(i);
            w.differs()->at_node = {d.max_abs, bounds[i].scale, bound};
            farther_from_truth_first(w, a, b);
            w.message = "node " + std::to_string(i) + " differs on identical inputs, beside the difference at node " + std::to_string(v.node);
            name_node(w);
            apart.more.push_back(std::move(w));
        }
        // No single layer to blame: rounding accumulated, or the library's rewriting of the graph.
        if (v.node < 0) return !apart.masked && !apart.carried && rewriting_differs(v, culprit);
        // The culprit is the side farther from float64 at the node, on the same inputs: at the
        // outputs, a chaotic layer after the node (a recurrence whose values reach 1e20) can
        // leave the right side the farther one, or the outputs agree (masked), or end in NaN.
        farther_from_truth_first(v, a, b);
        if (apart.carried) v.message = "node " + std::to_string(v.node) + " differs on identical inputs; the difference ends in NaN or infinity in the outputs";
        if (apart.masked) v.message = "the outputs agree, but node " + std::to_string(v.node) + " differs on identical inputs (masked by the layers after it)";
        return true;
    }

    /// The node where a NaN starts, found without running the whole model again: the first node
    /// whose output is non-finite in the plain run of a or of b only (as their traces or the
    /// workers' per-node flags say), when it stays so run alone on both with its own weights and
    /// the fed inputs (O's values of its inputs). -1 when a run does not say or that node alone
    /// does not show it: the whole model is then fed again. One layer taking seconds (a ConvLSTM3D
    /// that Keras' TensorFlow compiles with XLA at every step) then costs its plain run alone.
    int nan_alone(executor& a, executor& b, const std::vector<tensor>& fed) {
        const model& m = r_.m;
        const auto flags = [&](const executor& x) {
            std::vector<std::uint8_t> f;
            for (const auto& o : r_.obs) {
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
        auto alone = isolate_node(m, static_cast<int>(i), r_.reg, true);
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
    /// Fed `inputs` when given, else the model's (r_.inputs).
    std::pair<run_result, run_result> run_both(executor& a, executor& b, const model& m, const run_options& o, std::span<const tensor> inputs = {}) {
        if (inputs.empty()) inputs = r_.inputs;
        a.submit(m, inputs, o);
        b.submit(m, inputs, o);
        auto first = a.collect();
        return {std::move(first), b.collect()};
    }

    /// v's layer and producer, from its node.
    void name_node(verdict& v) const {
        if (v.node < 0 || static_cast<std::size_t>(v.node) >= r_.m.size()) return;
        const node& n = r_.m[v.node];
        v.layer = std::string(n.layer->name);
        if (!n.inputs.empty()) v.producer = std::string(r_.m[n.inputs[0]].layer->name);
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
        const model& m = r_.m;
        const dtype t = m.nodes[static_cast<std::size_t>(i)].type;
        if (t == dtype::float64) return false;
        const auto& truth = r_.truth.nodes();
        if (static_cast<std::size_t>(i) >= truth.size()) return false;
        const auto non_finite = [&](int e) { return truth[static_cast<std::size_t>(e)].has_non_finite(); };
        if (non_finite(i) && std::ranges::none_of(m.nodes[static_cast<std::size_t>(i)].inputs, non_finite)) return true;
        const auto& inners = r_.truth.inner();
        const inner_range inner = static_cast<std::size_t>(i) < inners.size() ? inners[static_cast<std::size_t>(i)] : inner_range{};
        return out_of_range(t, std::max(magnitude(truth[static_cast<std::size_t>(i)]), input_magnitude(m, static_cast<std::size_t>(i), truth)), inner);
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
        auto base = r_.truth.runner().run(m, r_.inputs, {true, fed, dtype::float64});
        double units = 1;  // a unit of each node's dtype; of the one its results are judged as, where coarser
        for (std::size_t i = 0; i < m.size(); ++i) units = std::max(units, unit_roundoff(like(i)) / unit_roundoff(m.nodes[i].type));
        const auto moved = r_.truth.runner().run_shaken(m, r_.inputs, {true, shaken, dtype::float64}, units);
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
        for (const auto& o : r_.obs) {
            const executor* x = by_name(o.backend);
            if (o.backend == culprit.name() || (x && !x->rewrites_graph())) as_written.push_back(o);
        }
        if (as_written.size() > 1) {
            const verdict p = judge(
                as_written, [&] { return r_.truth.outputs(); }, r_.o);
            if (!p || std::find(p.culprits.begin(), p.culprits.end(), culprit.name()) == p.culprits.end()) return false;
        }
        const auto layered = culprit.run(r_.m, r_.inputs, run_options{true, {}, {}});
        if (!layered.ok() || layered.outputs.size() != r_.m.size()) return false;
        std::vector<observation> obs(r_.obs.begin(), r_.obs.end());
        for (auto& o : obs) {
            if (o.backend != culprit.name()) continue;
            o.result.outputs.clear();
            for (int k : r_.m.outputs) o.result.outputs.push_back(layered.outputs[static_cast<std::size_t>(k)]);
        }
        const verdict w = judge(
            obs, [&] { return r_.truth.outputs(); }, r_.o);
        if (w && std::find(w.culprits.begin(), w.culprits.end(), culprit.name()) != w.culprits.end()) return false;
        // A compiler may sum in another order than the layers run in turn: its plain run is at
        // fault only where an output lies beyond that output's rounding bound from the layered
        // run (what the reproducer holds the compiled run against the eager one by).
        const auto plain = std::find_if(r_.obs.begin(), r_.obs.end(), [&](const observation& o) { return o.backend == culprit.name(); });
        if (plain == r_.obs.end()) return false;
        const auto& truth = r_.truth.nodes();
        bool past_rounding = false;
        for (std::size_t j = 0; j < r_.m.outputs.size() && j < plain->result.outputs.size(); ++j) {
            const auto k = static_cast<std::size_t>(r_.m.outputs[j]);
            if (k >= truth.size()) continue;
            past_rounding = past_rounding || beyond(compare({plain->result.outputs[j]}, {layered.outputs[k]}), unmeasured_bound(r_.m, k, truth, r_.o));
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
        int lo = 0, hi = static_cast<int>(r_.m.size()) - 1, found = -1;
        while (lo <= hi && !past_deadline()) {
            const int mid = (lo + hi) / 2;
            const model p = prefix(r_.m, mid);
            const auto in = make_inputs(p, r_.in);
            const run_status got = x.run(p, in, {}).status;
            // A prefix whose output the library shapes otherwise than the model (invalid) is where
            // a failure after it begins: the layer after a misshapen one fails on its input.
            if (same_status ? got == s : failed(got) || got == run_status::invalid) found = mid, hi = mid - 1;
            else lo = mid + 1;
        }
        return found;
    }

    executor* by_name(std::string_view n) const { return oracle::by_name(r_.backends, n); }
    bool past_deadline() const { return std::chrono::steady_clock::now() >= r_.deadline; }

    const run r_;
    std::vector<tensor> fed_truth_;  // the float64 node outputs on the fed inputs (measure_rounding)
};

}  // namespace memo::oracle
