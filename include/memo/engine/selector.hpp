#pragma once
// Seed selection: MEMO's Metropolis-Hastings over seeds ranked by fitness (Equations 3 and 4),
// and the uniform random selector of the ablation MEMO_r.
#include <algorithm>
#include <cmath>
#include <concepts>
#include <numeric>
#include <span>
#include <vector>

#include "rng.hpp"

namespace memo {

/// The selector concept. Requires:
///   s.pick(fitness, r)  the index of the next seed, given every seed's fitness
/// and may offer s.state() (a vector of words) and s.restore(words), which a resumed search uses.
template <class S>
concept selector = requires(S s, std::span<const double> fitness, rng& r) {
    { s.pick(fitness, r) } -> std::convertible_to<std::size_t>;
};

/// Metropolis-Hastings (MEMO, Eq. 4): seeds sorted by fitness, best first; a candidate at rank k2,
/// after the last pick at rank k1, is accepted with probability min(1, (1 - p)^(k2 - k1)).
class mh_selector {
public:
    explicit mh_selector(double p = 0.05) : p_(p) {}

    std::size_t pick(std::span<const double> fitness, rng& r) {
        order_.resize(fitness.size());
        std::iota(order_.begin(), order_.end(), std::size_t{0});
        // Stable, so that equal fitness keeps seed order and runs are reproducible.
        std::stable_sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) { return fitness[a] > fitness[b]; });
        if (last_rank_ >= order_.size()) last_rank_ = 0;
        for (;;) {
            const std::size_t k2 = r.index(order_.size());
            const double d = static_cast<double>(k2) - static_cast<double>(last_rank_);
            if (d <= 0 || r.unit() < std::pow(1.0 - p_, d)) {
                last_rank_ = k2;
                return order_[k2];
            }
        }
    }
    double p() const noexcept { return p_; }
    std::size_t last_rank() const noexcept { return last_rank_; }
    void set_last_rank(std::size_t k) noexcept { last_rank_ = k; }
    /// Its state between picks (the last rank), for a campaign to save and resume.
    std::vector<std::uint64_t> state() const { return {last_rank_}; }
    void restore(std::span<const std::uint64_t> s) { last_rank_ = s.empty() ? 0 : static_cast<std::size_t>(s[0]); }

private:
    double p_;
    std::size_t last_rank_ = 0;
    std::vector<std::size_t> order_;
};

/// Uniform choice, fitness ignored (MEMO_r).
struct random_selector {
    std::size_t pick(std::span<const double> fitness, rng& r) const { return r.index(fitness.size()); }
};

static_assert(selector<mh_selector> && selector<random_selector>);

}  // namespace memo
