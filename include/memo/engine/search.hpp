#pragma once
// The search, Algorithm 2: a pool of (model, operator) seeds; each step selects a seed, mutates
// its model with its operator, and keeps the mutant when it raises coverage (diverse), replacing
// the parent model in every seed that holds it (UpdateSeeds).
//
//   memo::basic_search<my_model, my_operators, my_metric, memo::mh_selector, my_context>
//       s(seeds, my_metric(), memo::mh_selector(0.05), 7);
//   for (int i = 0; i < 1000; ++i) s.step();
//
// Generic over the model, the operator set (operators.hpp), the coverage metric and the selector
// (concepts.hpp, selector.hpp); the operators receive a Context built from the coverage, which
// they may consult. memo::search (search/search.hpp) is this search over memo's Keras models,
// with MEMO's context.
#include <algorithm>
#include <array>
#include <concepts>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "concepts.hpp"
#include "error.hpp"
#include "operators.hpp"
#include "rng.hpp"
#include "selector.hpp"

namespace memo {

/// What a search's next steps depend on besides its models and its coverage: the scores and
/// selection counts of Equation 3, the RNG, the selector's own state and the seed pool's growth.
struct search_scores {
    std::vector<double> model_score, op_score;
    std::vector<std::size_t> selected;  // per seed
    std::array<std::uint64_t, 4> rng{};
    std::vector<std::uint64_t> selector;     // what the selector's state() gave, when it has one
    std::size_t initial = 0;                 // models from the seeds (the rest were adopted); 0: all
    std::size_t seed_size = 0, stalled = 0;  // the size limit as grown, and steps since a diverse mutant; 0, 0: as set
};

template <class Model, class Ops, class Coverage, selector Selector, class Context>
requires coverage_metric<Coverage, Model> && std::constructible_from<Context, Coverage&>
class basic_search {
public:
    /// What one step did.
    struct step_result {
        std::size_t seed;     // the seed selected
        std::size_t slot;     // its model slot
        std::size_t op;       // its operator
        bool valid;           // the operator made a mutant
        std::size_t gain;     // new coverage items (0: not diverse)
        const Model* mutant;  // the mutant when valid (diverse or not), else nullptr
    };

    basic_search(std::vector<Model> seeds, Coverage cov, Selector sel, std::uint64_t seed)
        : models_(std::move(seeds)), initial_(models_.size()), cov_(std::move(cov)), sel_(std::move(sel)), rng_(seed), ctx_(cov_) {
        for (const auto& m : models_) cov_.add(m);
        model_score_.assign(models_.size(), 0.0);
        op_score_.assign(Ops::size, 0.0);
        for (std::size_t s = 0; s < models_.size(); ++s)
            for (std::size_t o = 0; o < Ops::size; ++o) seeds_.push_back({s, o, 0});
        fitness_.resize(seeds_.size());
    }
    basic_search(const basic_search&) = delete;  // ctx_ refers to cov_

    /// One iteration of Algorithm 2.
    step_result step() {
        for (std::size_t i = 0; i < seeds_.size(); ++i) {
            const auto& s = seeds_[i];
            fitness_[i] = (model_score_[s.slot] + op_score_[s.op]) / static_cast<double>(s.selected + 1);  // Eq. 3
        }
        const std::size_t i = sel_.pick(fitness_, rng_);
        auto& s = seeds_[i];
        ++s.selected;
        auto mutant = Ops::apply(s.op, models_[s.slot], rng_, ctx_);
        if (!mutant || (filter_ && !filter_(*mutant))) {
            stalled();
            return {i, s.slot, s.op, false, 0, nullptr};
        }
        if constexpr (requires { ctx_.finish(*mutant, rng_); }) ctx_.finish(*mutant, rng_);  // a context's last touch (memo's: a fresh seed)
        const std::size_t gain = cov_.gain(*mutant);
        if (gain == 0) {
            stalled();
            last_ = std::move(*mutant);  // kept until the next step, for a caller that runs it anyway
            return {i, s.slot, s.op, true, 0, &last_};
        }
        stalled_ = 0;
        cov_.add(*mutant);
        model_score_[s.slot] += 1;
        op_score_[s.op] += 1;
        // UpdateSeeds: every seed of this slot now holds the mutant, unless it cannot breed: it
        // has grown past the size limit (models would grow without end), or a library under test
        // declines it (every descendant would be declined too). Then it is kept as a result, and
        // its parent goes on as the seed.
        if (!breeds(*mutant, models_[s.slot])) {
            last_ = std::move(*mutant);
            return {i, s.slot, s.op, true, gain, &last_};
        }
        models_[s.slot] = std::move(*mutant);
        return {i, s.slot, s.op, true, gain, &models_[s.slot]};
    }

    /// Everything the next steps depend on besides the coverage: the seed models, the scores and
    /// selection counts of Equation 3, the RNG and the selector's own state. A search restored
    /// from it (with the coverage it had) makes the very steps the saved one would have made.
    struct state : search_scores {
        std::vector<Model> models;
    };
    state save() const {
        state st{{model_score_, op_score_, {}, rng_.state(), {}, initial_, max_seed_size_, stalled_}, models_};
        for (const auto& s : seeds_) st.selected.push_back(s.selected);
        if constexpr (requires { sel_.state(); }) st.selector = sel_.state();
        return st;
    }
    /// Restores a saved state and its coverage; throws when it was saved with another seed pool
    /// (the state may hold more models than this search's seeds: those it adopted).
    void restore(state st, Coverage cov) {
        if ((st.initial ? st.initial : st.models.size()) != initial_ || st.models.size() < initial_ || st.model_score.size() != st.models.size() ||
            st.selected.size() != st.models.size() * Ops::size || st.op_score.size() != op_score_.size())
            throw error("a saved search state with " + std::to_string(st.models.size()) + " models and " + std::to_string(st.selected.size()) +
                        " seeds cannot restore a search of " + std::to_string(models_.size()) + " and " + std::to_string(seeds_.size()));
        while (models_.size() < st.models.size()) add_slot(Model{}, 0.0);
        models_ = std::move(st.models);
        model_score_ = std::move(st.model_score);
        op_score_ = std::move(st.op_score);
        for (std::size_t i = 0; i < seeds_.size(); ++i) seeds_[i].selected = st.selected[i];
        rng_.set_state(st.rng);
        if constexpr (requires { sel_.restore(std::span<const std::uint64_t>(st.selector)); }) sel_.restore(st.selector);
        if (st.seed_size) max_seed_size_ = st.seed_size;
        stalled_ = st.stalled;
        cov_ = std::move(cov);  // in place: ctx_ keeps referring to it
    }

    /// Adopts a model found elsewhere (by another process of the same campaign) as a new slot with
    /// a seed per operator, when it raises this search's coverage; returns its gain (0: not
    /// adopted). The pool stops growing at `max_slots`.
    std::size_t adopt(Model m, std::size_t max_slots) {
        if (models_.size() >= max_slots) return 0;
        const std::size_t gain = cov_.gain(m);
        if (gain == 0) return 0;
        cov_.add(m);
        add_slot(std::move(m), 1.0);  // the score a diverse mutant earns its slot
        return gain;
    }

    const Coverage& coverage() const noexcept { return cov_; }
    /// For merging in what other searches covered (cluster/exchange.hpp): items only ever added.
    Coverage& coverage() noexcept { return cov_; }
    const std::vector<Model>& models() const noexcept { return models_; }
    std::size_t seed_count() const noexcept { return seeds_.size(); }
    static constexpr std::span<const std::string_view> operator_names() { return Ops::names; }
    Context& context() noexcept { return ctx_; }
    /// Mutants the filter rejects count as invalid. A search for one library keeps to what it runs
    /// (its backend's supports()): a diverse mutant replaces its parent, so one the library declines
    /// would leave every descendant unrunnable too.
    void set_filter(std::function<expected<void>(const Model&)> f) { filter_ = std::move(f); }
    /// Diverse mutants this rejects count for coverage but do not replace their parent: a campaign
    /// keeps its seeds to models every library under test runs (oracle/declines.hpp).
    void set_seedable(std::function<bool(const Model&)> f) { seedable_ = std::move(f); }
    /// Puts m in slot i in place of its model (a slot whose model turned out to be declined goes
    /// back to its seed); the slot's score stays.
    void reset_slot(std::size_t i, Model m) { models_.at(i) = std::move(m); }
    /// Diverse mutants that grow past this size do not replace their parent (models would grow
    /// without end); a seed larger than it still breeds mutants no larger than itself. With
    /// `grows_to` above n, the limit doubles (up to grows_to) each time `patience` steps in a row
    /// found nothing diverse: small seeds run fast and cover much early, larger ones reach the
    /// layer pairs and inputs that only depth gives once the small ones stall.
    void set_max_seed_size(std::size_t n, std::size_t grows_to = 0, std::size_t patience = 0) noexcept {
        max_seed_size_ = n;
        grows_to_ = grows_to;
        patience_ = patience;
    }
    std::size_t max_seed_size() const noexcept { return max_seed_size_; }

private:
    void stalled() noexcept {
        if (!patience_ || max_seed_size_ >= grows_to_ || ++stalled_ < patience_) return;
        max_seed_size_ = std::min(grows_to_, 2 * max_seed_size_);
        stalled_ = 0;
    }
    bool breeds(const Model& m, const Model& parent) const {
        if constexpr (requires { m.size(); })
            if (m.size() > max_seed_size_ && m.size() > parent.size()) return false;
        return !seedable_ || seedable_(m);
    }
    struct seed_entry {
        std::size_t slot, op, selected;
    };
    void add_slot(Model m, double score) {
        models_.push_back(std::move(m));
        model_score_.push_back(score);
        for (std::size_t o = 0; o < Ops::size; ++o) seeds_.push_back({models_.size() - 1, o, 0});
        fitness_.resize(seeds_.size());
    }

    std::vector<Model> models_;
    std::size_t initial_;  // slots from the seeds; adopt() adds more
    Coverage cov_;
    Selector sel_;
    rng rng_;
    Context ctx_;
    std::vector<seed_entry> seeds_;
    std::vector<double> model_score_, op_score_, fitness_;
    std::size_t max_seed_size_ = static_cast<std::size_t>(-1), grows_to_ = 0, patience_ = 0, stalled_ = 0;
    std::function<expected<void>(const Model&)> filter_;
    std::function<bool(const Model&)> seedable_;
    Model last_{};
};

}  // namespace memo
