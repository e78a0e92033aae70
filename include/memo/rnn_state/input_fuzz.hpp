#pragma once
// DeepStellar's coverage-guided testing of one recurrent model: its inputs, not its structure,
// are mutated. The model is profiled on seeded random inputs (PCA fitted per recurrent layer, or
// the fixed grid), a queue of inputs is fuzzed with bounded changes (at most l0 elements each
// time, each within linf of its root input's value), and an input is kept when it reaches a state
// or transition none before it did. Seeds are picked by DeepStellar's scheduler.
//
//   memo::rnn_state::input_fuzzer f(model, {.seed = 1});
//   while (f.iterations() < 1000) f.step();
//   f.values();  // the five criteria, summed over the model's recurrent layers
#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "rnn_coverage.hpp"

namespace memo::rnn_state {

/// DeepStellar's seed scheduler: an input fuzzed f times is taken with probability
/// max(0.3, 0.8 - 0.1 f / 5). Fresh inputs come first; none is ever starved.
inline double pick_probability(std::uint64_t fuzzed) noexcept { return std::max(0.3, 0.8 - 0.1 * static_cast<double>(fuzzed) / 5.0); }

struct input_fuzz_options {
    bool fitted = true;  // PCA fitted on the profile (DeepStellar), or the fixed grid
    grid_options grid{};
    int boundary_steps = 1;
    std::uint64_t seed = 0;
    std::int64_t profile_samples = 64;  // profiling inputs: the PCA and the profile DTMC come from them
    std::int64_t initial = 8;           // inputs the queue starts with
    double linf = 0.1;                  // an element stays within this of its root input's value
    std::int64_t l0 = 0;                // elements one mutation changes (0: a tenth of them, at least 1)
    double lo = 0.0, hi = 1.0;          // the input range, as the campaign draws inputs
};

class input_fuzzer {
public:
    /// One queue entry: an input (batch of one, a tensor per Input node), its root, and how often
    /// it was fuzzed.
    struct entry {
        std::vector<tensor> inputs;
        std::size_t root = 0;
        std::uint64_t fuzzed = 0;
    };

    input_fuzzer(const model& m, input_fuzz_options o = {}) : m_(m), o_(o), rng_(o.seed), interp_(dtype::float32) {
        if (!has_recurrent(m)) throw error("the model has no recurrent layer (SimpleRNN, GRU, LSTM, Bidirectional, ConvLSTM): no state to cover");
        if (o.lo >= o.hi || o.linf <= 0) throw error("input fuzzing needs lo < hi and linf > 0");
        // Profile: the hidden states of every (node, direction), over a batch of random inputs.
        std::map<std::pair<int, int>, std::vector<observed_trace>> profile;
        for (auto& t : observe(interp_, m_, draw(o.profile_samples))) profile[{t.node, t.part}].push_back(std::move(t));
        if (profile.empty()) throw error("the model ran no recurrent step on the reference interpreter");
        for (auto& [key, traces] : profile) {
            std::vector<std::vector<double>> states;
            for (const auto& t : traces) states.insert(states.end(), t.h.begin(), t.h.end());
            grid_options g = o.grid;
            if (o.fitted) g.components = std::min<int>(g.components, static_cast<int>(states.front().size()));
            auto a = o.fitted ? abstraction::fitted(states, g) : abstraction::fixed(o.seed, g);
            dtmc chain;
            for (const auto& t : traces) chain.add(cells(a, t));
            layers_.push_back({key, a, state_coverage(std::move(chain), a, o.boundary_steps)});
        }
        for (std::int64_t i = 0; i < o.initial; ++i) {
            entry e{draw(1), queue_.size(), 0};
            add(traces_of(e.inputs));
            roots_.push_back(e.inputs);
            queue_.push_back(std::move(e));
        }
    }

    /// One mutation of a scheduled input; true when the mutant reached something new (it joins the queue).
    bool step() {
        entry& parent = pick();
        ++parent.fuzzed;
        entry child{parent.inputs, parent.root, 0};
        mutate(child);
        ++iterations_;
        const auto ts = traces_of(child.inputs);
        std::size_t fresh = 0;
        for (const auto& [l, t] : ts) fresh += layers_[l].cov.gain(t);
        if (fresh == 0) return false;
        add(ts);
        queue_.push_back(std::move(child));
        return true;
    }

    /// The five criteria, summed over the model's recurrent layers and directions.
    criteria_values values() const {
        criteria_values sum;
        for (const auto& l : layers_) sum += l.cov.values();
        return sum;
    }
    std::size_t seen_states() const {
        std::size_t n = 0;
        for (const auto& l : layers_) n += l.cov.seen_states();
        return n;
    }
    std::uint64_t iterations() const noexcept { return iterations_; }
    const std::vector<entry>& queue() const noexcept { return queue_; }
    std::size_t layers() const noexcept { return layers_.size(); }

private:
    struct layer_state {
        std::pair<int, int> key;  // node, direction
        abstraction grid;
        state_coverage cov;
    };

    static trace cells(const abstraction& a, const observed_trace& t) {
        trace out;
        for (const auto& h : t.h) out.push_back(a.encode(h));
        return out;
    }

    /// A batch of `samples` inputs, uniform in [lo, hi).
    std::vector<tensor> draw(std::int64_t samples) {
        std::vector<tensor> out;
        for (int i : m_.input_nodes()) {
            tensor t(concrete(m_[i].out, samples), m_[i].type);
            for (auto& x : t.data) x = round_to(t.type, rng_.uniform_real(o_.lo, o_.hi));
            out.push_back(std::move(t));
        }
        return out;
    }

    entry& pick() {
        for (;;) {
            entry& e = queue_[next_++ % queue_.size()];
            if (rng_.chance(pick_probability(e.fuzzed))) return e;
        }
    }

    /// Changes l0 elements, each to within linf of its root's value and inside [lo, hi].
    void mutate(entry& e) {
        std::size_t n = 0;
        for (const auto& t : e.inputs) n += t.data.size();
        const std::size_t changes = o_.l0 > 0 ? static_cast<std::size_t>(o_.l0) : std::max<std::size_t>(1, n / 10);
        for (std::size_t k = 0; k < changes; ++k) {
            std::size_t at = rng_.index(n), which = 0;
            while (at >= e.inputs[which].data.size()) at -= e.inputs[which++].data.size();
            auto& t = e.inputs[which];
            const double root = roots_[e.root][which].data[at];
            const double v = root + rng_.uniform_real(-o_.linf, o_.linf);
            t.data[at] = round_to(t.type, std::clamp(v, std::max(o_.lo, root - o_.linf), std::min(o_.hi, root + o_.linf)));
        }
    }

    /// Each layer's trace for one input (batch of one).
    std::vector<std::pair<std::size_t, trace>> traces_of(const std::vector<tensor>& inputs) {
        std::vector<std::pair<std::size_t, trace>> out;
        for (const auto& t : observe(interp_, m_, inputs))
            for (std::size_t l = 0; l < layers_.size(); ++l)
                if (layers_[l].key == std::pair{t.node, t.part}) out.emplace_back(l, cells(layers_[l].grid, t));
        return out;
    }
    void add(const std::vector<std::pair<std::size_t, trace>>& ts) {
        for (const auto& [l, t] : ts) layers_[l].cov.add(t);
    }

    model m_;
    input_fuzz_options o_;
    rng rng_;
    reference::interpreter interp_;
    std::vector<layer_state> layers_;
    std::vector<entry> queue_;
    std::vector<std::vector<tensor>> roots_;
    std::size_t next_ = 0;
    std::uint64_t iterations_ = 0;
};

}  // namespace memo::rnn_state
