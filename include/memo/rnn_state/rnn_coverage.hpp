#pragma once
// DeepStellar's RNN-state coverage as a metric the search counts beside MEMO's criteria
// (memo_coverage::attach; `memo-fuzz run --coverage memo,rnn-state`). A model with a recurrent
// layer runs on the reference interpreter on a few inputs drawn from its seed, and the state hook's
// hidden states become cells of one fixed grid with seeded projections: one abstraction for every
// model, so that states compare across models. They are scored against a profile DTMC built from
// the seed models' own traces (generated models have no training data). States and transitions
// are kept apart per layer class: an LSTM's cell says nothing of a GRU's.
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../backends/reference/interpreter.hpp"
#include "../coverage/coverage.hpp"
#include "../io/json.hpp"
#include "../layers/cost.hpp"
#include "../tensors/inputs.hpp"
#include "criteria.hpp"

namespace memo::rnn_state {

/// Layers whose steps are states: the recurrent family, less TimeDistributed (no state of its own).
inline bool recurrent(const layer_def& l) noexcept { return l.fam == family::rnn && l.name != "TimeDistributed"; }
inline bool has_recurrent(const model& m) noexcept {
    for (const auto& n : m.nodes)
        if (recurrent(*n.layer)) return true;
    return false;
}

struct rnn_options {
    grid_options grid{};                 // DeepStellar's k = 3 components, m = 10 intervals, 8 bits
    int boundary_steps = 1;              // k of the k-step boundary
    std::uint64_t seed = 0;              // of the projections
    std::int64_t samples = 2;            // inputs a model is observed on (as many as a campaign runs it on)
    std::int64_t max_cost = 20'000'000;  // models costlier to run (execution_cost) are not observed
};

/// The hidden states of one recurrent node on one sample (one direction of a Bidirectional).
struct observed_trace {
    int node = -1, part = 0;
    std::int64_t sample = 0;
    std::vector<std::vector<double>> h;  // per step, in processing order
};

/// Runs m on the interpreter with these inputs and returns every recurrent layer's hidden states.
/// A run that fails part-way gives the steps it made.
inline std::vector<observed_trace> observe(reference::interpreter& r, const model& m, std::span<const tensor> inputs) {
    std::vector<observed_trace> out;
    r.set_state_hook([&](const reference::state_step& s) {
        if (out.empty() || out.back().node != s.node || out.back().part != s.part || out.back().sample != s.sample)
            out.push_back({s.node, s.part, s.sample, {}});
        out.back().h.emplace_back(s.h.begin(), s.h.end());
    });
    r.run(m, inputs);
    r.set_state_hook({});
    return out;
}

/// The metric (a coverage_metric, attached beside MEMO's criteria by memo_coverage::attach). Its
/// items are the (layer class, cell) states and the transitions between them.
class rnn_coverage {
public:
    /// `profile`: the models whose traces make the profile DTMC (a campaign's seeds).
    rnn_coverage(const registry& reg, std::span<const model> profile, rnn_options o = {})
        : o_(o), grid_(abstraction::fixed(o.seed, o.grid)), interp_(std::make_shared<reference::interpreter>(dtype::float32)) {
        for (const auto& l : reg) classes_total_ += recurrent(l);
        std::map<std::string, dtmc, std::less<>> chains;
        for (const auto& m : profile)
            for (const auto& [cls, t] : cells_of(m)) chains[cls].add(t);
        for (auto& [cls, chain] : chains) classes_.emplace(cls, state_coverage(std::move(chain), grid_, o_.boundary_steps));
    }

    std::size_t gain(const model& m) const {
        std::size_t k = 0;
        for (const auto& [cls, ts] : grouped(m)) {
            const auto it = classes_.find(cls);
            k += it == classes_.end() ? state_coverage(dtmc{}, grid_, 0).gain(ts) : it->second.gain(ts);
        }
        return k;
    }
    std::size_t add(const model& m) {
        std::size_t k = 0;
        for (const auto& [cls, ts] : grouped(m)) k += of(cls).add(ts);
        return k;
    }

    /// Its items: every (class, cell) state and transition reached, of all the grid could hold.
    std::size_t covered() const {
        std::uint64_t k = 0;
        for (const auto& [cls, c] : classes_) k += c.seen_states() + c.seen_transitions();
        return static_cast<std::size_t>(k);
    }
    std::size_t total() const {
        const std::uint64_t cells = grid_.cells();
        return static_cast<std::size_t>(classes_total_ * cells * (cells + 2));
    }

    std::vector<criterion_count> criteria() const {
        criteria_values sum;
        std::uint64_t states = 0, transitions = 0;
        for (const auto& [cls, c] : classes_) {
            sum += c.values();
            states += c.seen_states();
            transitions += c.seen_transitions();
        }
        auto count = [](std::string name, std::uint64_t covered, std::uint64_t total) {
            return criterion_count{std::move(name), static_cast<std::size_t>(covered), static_cast<std::size_t>(total)};
        };
        auto value = [&](std::string name, const criterion_value& v) { return count(std::move(name), v.covered, v.total); };
        const std::uint64_t classes = classes_total_, cells = grid_.cells();
        return {value("rnn_state_basic", sum.basic_state), value("rnn_state_boundary", sum.boundary), value("rnn_state_weighted", sum.weighted_state),
                value("rnn_transition_basic", sum.basic_transition), value("rnn_transition_weighted", sum.weighted_transition),
                // Beyond the profile: every state and transition reached, of all a grid could hold.
                count("rnn_states", states, classes * cells), count("rnn_transitions", transitions, classes * cells * (cells + 1))};
    }

    std::string save() const {
        io::json j = io::json::object();
        for (const auto& [cls, c] : classes_) j[cls] = {{"states", c.seen_state_list()}, {"transitions", c.seen_transition_list()}};
        return j.dump();
    }
    void restore(std::string_view saved) {
        const auto j = io::json::parse(saved);
        for (const auto& [cls, c] : j.items())
            of(cls).restore(c.at("states").get<std::vector<cell>>(), c.at("transitions").get<std::vector<std::pair<cell, cell>>>());
    }

    const std::map<std::string, state_coverage, std::less<>>& classes() const noexcept { return classes_; }
    const abstraction& grid() const noexcept { return grid_; }

private:
    using class_traces = std::vector<std::pair<std::string, trace>>;

    /// Each trace of m as cells, with its layer class; empty for a model without a recurrent layer
    /// or too costly to observe.
    class_traces cells_of(const model& m) const {
        class_traces out;
        if (!has_recurrent(m) || execution_cost(m) * o_.samples > o_.max_cost) return out;
        const auto inputs = make_inputs(m, {.samples = o_.samples});
        for (const auto& t : observe(*interp_, m, inputs)) {
            trace cells;
            cells.reserve(t.h.size());
            for (const auto& h : t.h) cells.push_back(grid_.encode(h));
            out.emplace_back(std::string(m[t.node].layer->name), std::move(cells));
        }
        return out;
    }
    /// cells_of(m) by class; the last model's are kept, as the search asks gain() then add().
    const std::map<std::string, std::vector<trace>, std::less<>>& grouped(const model& m) const {
        const auto key = model_key(m);
        if (!cache_ || cache_->first != key) {
            std::map<std::string, std::vector<trace>, std::less<>> g;
            for (auto& [cls, t] : cells_of(m)) g[cls].push_back(std::move(t));
            cache_ = std::make_shared<std::pair<std::uint64_t, std::map<std::string, std::vector<trace>, std::less<>>>>(key, std::move(g));
        }
        return cache_->second;
    }
    state_coverage& of(std::string_view cls) {
        auto it = classes_.find(cls);
        if (it == classes_.end()) it = classes_.emplace(std::string(cls), state_coverage(dtmc{}, grid_, o_.boundary_steps)).first;
        return it->second;
    }

    rnn_options o_;
    abstraction grid_;
    std::shared_ptr<reference::interpreter> interp_;  // shared by clones: they observe in turn, on one thread
    std::map<std::string, state_coverage, std::less<>> classes_;
    std::uint64_t classes_total_ = 0;  // recurrent layer classes of the registry
    mutable std::shared_ptr<std::pair<std::uint64_t, std::map<std::string, std::vector<trace>, std::less<>>>> cache_;
};

static_assert(coverage_metric<rnn_coverage, model>);

}  // namespace memo::rnn_state
