#pragma once
// Masked differences: a wrong node whose outputs a later layer hides, and which of them are checked.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "../core/model.hpp"
#include "oracle.hpp"
#include "rounding.hpp"

namespace memo::oracle {

/// Outputs that agree can hide a wrong node: a later layer crops, pads over or saturates what it
/// computed. The traced runs' per-node sums of magnitudes show it: where two libraries' sums at
/// a node differ by more than ten times the dtype's tolerance (a tenth at most), the model is
/// localised as an inconsistency, and the rounding rule at the node decides (localise.hpp; the
/// culprit is the one farther from float64 there).
///
/// Each check costs a localisation (the truth at every node, two forced runs, the rounding
/// measured): where checks of one layer class between two backends kept finding only rounding,
/// every 2^k-th sighting is checked after k misses, not every one.
class masked_differences {
public:
    /// The first masked difference of a model's traced runs `obs`, as an inconsistency to localise
    /// (masked); none when the traces agree or this sighting is not checked.
    verdict spot(const model& m, const std::vector<observation>& obs, const options& o) {
        const observation *a = nullptr, *b = nullptr;
        std::size_t first = m.size();
        for (std::size_t x = 0; x < obs.size(); ++x)
            for (std::size_t y = x + 1; y < obs.size(); ++y) {
                const auto &p = obs[x], &q = obs[y];
                if (!p.result.ok() || !q.result.ok() || p.nodes.size() != m.size() || q.nodes.size() != m.size()) continue;
                for (std::size_t i = 0; i < first; ++i) {
                    if (m.nodes[i].layer->arity.max == 0 || p.nodes[i].hash == q.nodes[i].hash) continue;
                    const double sa = p.nodes[i].abs_sum, sb = q.nodes[i].abs_sum;
                    const double rel = std::abs(sa - sb) / std::max({sa, sb, 1e-30});
                    if (rel > std::min(0.1, 10 * tolerance(judged_as(m.nodes[i].type, p.rounding, q.rounding), o))) {
                        first = i, a = &p, b = &q;
                        break;
                    }
                }
            }
        verdict v;
        if (!a) return v;
        if (!check(a->backend, b->backend, m.nodes[first].layer->name, m.nodes[first].type)) return v;
        v.what = kind::inconsistency;
        v.culprits = {a->backend};
        v.peers = {b->backend};
        v.details.emplace<outputs_differ>().masked = true;
        return v;
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

    using key = std::tuple<std::string, std::string, std::string, dtype>;  // backends, layer class, dtype
    key key_;
    std::map<key, std::pair<std::uint64_t, std::uint64_t>> record_;  // sightings, checks since one found a bug
    std::uint64_t checks_ = 0, found_ = 0, skipped_ = 0;
};

}  // namespace memo::oracle
