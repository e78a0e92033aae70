#pragma once
// DeepStellar's state abstraction: a hidden state is projected to a few components and each
// component cut into equal intervals, so a run of a recurrent layer becomes a walk over grid cells.
// Fixed-grid mode skips the fitting, so states of different models land in one shared grid.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "../engine/error.hpp"
#include "../engine/rng.hpp"
#include "pca.hpp"

namespace memo::rnn_state {

/// How a state becomes a cell; the defaults are DeepStellar's k = 3 components, m = 10 intervals, 8 bits a component.
struct grid_options {
    int components = 3;  ///< dimensions of the grid
    int intervals = 10;  ///< intervals per component
    int bits = 8;        ///< bits per component in a cell
};

/// A grid cell: `components` fields of `bits` bits, component 0 in the lowest bits, each an interval index.
using cell = std::uint64_t;

/// Maps hidden states to grid cells.
class abstraction {
public:
    /// PCA mode: PCA to `components` fitted on the profiled states, each component's grid over its profiled [min, max].
    static abstraction fitted(const std::vector<std::vector<double>>& states, grid_options o = {}) {
        abstraction a(o);
        a.pca_ = pca::fit(states, o.components);
        a.lo_.assign(static_cast<std::size_t>(o.components), std::numeric_limits<double>::infinity());
        a.hi_.assign(static_cast<std::size_t>(o.components), -std::numeric_limits<double>::infinity());
        for (const auto& s : states) {
            const auto p = a.pca_->project(s);
            for (std::size_t j = 0; j < p.size(); ++j) {
                a.lo_[j] = std::min(a.lo_[j], p[j]);
                a.hi_[j] = std::max(a.hi_[j], p[j]);
            }
        }
        return a;
    }

    /// Fixed-grid mode, no fitting, for comparing states across many models: a state of any length d
    /// is projected on `components` seeded random directions with entries ±1/sqrt(d), each over [-1, 1].
    static abstraction fixed(std::uint64_t seed, grid_options o = {}) {
        abstraction a(o);
        a.seed_ = seed;
        a.lo_.assign(static_cast<std::size_t>(o.components), -1.0);
        a.hi_.assign(static_cast<std::size_t>(o.components), 1.0);
        return a;
    }

    /// The cell of state h. Values outside a component's range fall in its edge interval; NaN in interval 0.
    cell encode(std::span<const double> h) const {
        const auto p = project(h);
        cell c = 0;
        for (std::size_t j = 0; j < p.size(); ++j) c |= static_cast<cell>(interval(j, p[j])) << shift(j);
        return c;
    }

    /// The interval index of each component of c.
    std::vector<int> decode(cell c) const {
        std::vector<int> at(static_cast<std::size_t>(o_.components));
        const cell mask = o_.bits == 64 ? ~cell{0} : (cell{1} << o_.bits) - 1;
        for (std::size_t j = 0; j < at.size(); ++j) at[j] = static_cast<int>((c >> shift(j)) & mask);
        return at;
    }

    /// L1 distance between the interval indices of a and b.
    int distance(cell a, cell b) const {
        const auto x = decode(a), y = decode(b);
        int d = 0;
        for (std::size_t j = 0; j < x.size(); ++j) d += std::abs(x[j] - y[j]);
        return d;
    }

    /// Every cell of the grid at L1 distance 1 to `steps` from c, sorted.
    std::vector<cell> within(cell c, int steps) const {
        const auto at = decode(c);
        std::vector<cell> out;
        // One component at a time, spending what is left of the distance budget.
        auto walk = [&](auto& self, std::size_t j, int left, cell code) -> void {
            if (j == at.size()) {
                if (left < steps) out.push_back(code);
                return;
            }
            for (int v = std::max(0, at[j] - left); v <= std::min(o_.intervals - 1, at[j] + left); ++v)
                self(self, j + 1, left - std::abs(v - at[j]), code | (static_cast<cell>(v) << shift(j)));
        };
        walk(walk, 0, steps, 0);
        std::sort(out.begin(), out.end());
        return out;
    }

    const grid_options& options() const noexcept { return o_; }

    /// Cells in the grid: intervals ^ components.
    std::uint64_t cells() const {
        std::uint64_t n = 1;
        for (int j = 0; j < o_.components; ++j) n *= static_cast<std::uint64_t>(o_.intervals);
        return n;
    }

private:
    explicit abstraction(const grid_options& o) : o_(checked(o)) {}

    static const grid_options& checked(const grid_options& o) {
        const auto n = [](long long v) { return std::to_string(v); };
        if (o.components < 1 || o.intervals < 1 || o.bits < 1)
            throw error("a grid needs at least 1 component, interval and bit; got " + n(o.components) + " components, " + n(o.intervals) + " intervals, " +
                        n(o.bits) + " bits");
        const long long width = static_cast<long long>(o.components) * o.bits;
        if (width > 64) throw error("a cell of " + n(o.components) + " components x " + n(o.bits) + " bits is " + n(width) + " bits; at most 64 fit");
        if (o.bits < 31 && o.intervals > (1 << o.bits))
            throw error(n(o.intervals) + " intervals do not fit in " + n(o.bits) + " bits; at most " + n(1LL << o.bits) + " do");
        // The all-ones word is dtmc's initial state: a full 64-bit grid would make it a cell.
        if (width == 64 && o.bits < 31 && o.intervals == (1 << o.bits))
            throw error("a cell of " + n(o.components) + " components x " + n(o.bits) + " bits with " + n(o.intervals) +
                        " intervals fills all 64 bits; use at most " + n(o.intervals - 1) + " intervals");
        return o;
    }

    unsigned shift(std::size_t j) const noexcept { return static_cast<unsigned>(j) * static_cast<unsigned>(o_.bits); }

    std::vector<double> project(std::span<const double> h) const {
        if (pca_) return pca_->project(h);
        if (h.empty()) throw error("a fixed grid cannot place an empty state");
        // The directions are redrawn on each call: one draw gives 64 signs, so drawing costs less than
        // the projection itself, and nothing has to be cached per state length.
        std::uint64_t x = seed_ ^ (0x9e3779b97f4a7c15ULL * (static_cast<std::uint64_t>(h.size()) + 1));
        rng r(splitmix64(x));
        std::vector<double> p(static_cast<std::size_t>(o_.components));
        std::uint64_t signs = 0;
        unsigned left = 0;
        for (auto& v : p) {
            double sum = 0;
            for (double e : h) {
                if (left == 0) {
                    signs = r();
                    left = 64;
                }
                sum += (signs & 1) ? e : -e;
                signs >>= 1;
                --left;
            }
            v = sum / std::sqrt(static_cast<double>(h.size()));
        }
        return p;
    }

    /// floor((v - lo) / (hi - lo) * m), clamped to [0, m - 1]; a degenerate range and NaN give 0.
    int interval(std::size_t j, double v) const noexcept {
        if (!(hi_[j] > lo_[j])) return 0;
        const double t = std::floor((v - lo_[j]) / (hi_[j] - lo_[j]) * o_.intervals);
        if (!(t >= 0)) return 0;
        return t >= o_.intervals ? o_.intervals - 1 : static_cast<int>(t);
    }

    grid_options o_;
    std::optional<pca> pca_;  // PCA mode; fixed mode when empty
    std::uint64_t seed_ = 0;  // fixed mode's directions
    std::vector<double> lo_, hi_;
};

}  // namespace memo::rnn_state
