#pragma once
// What a campaign's checkpoint keeps of its coverage, as JSON: each criterion's bits, and the
// extra metric's state; and the extra metric's criteria as stats.json writes them.
//
//   io::json j = memo::save_coverage(c);
//   memo::restore_coverage(c, j);   // c made with the same registry (and extra metric)
#include <span>
#include <string>
#include <vector>

#include "../io/json.hpp"
#include "coverage.hpp"

namespace memo {

/// {"name": {"covered": c, "total": t}, ...}
inline io::json criteria_json(std::span<const criterion_count> counts) {
    io::json j = io::json::object();
    for (const auto& k : counts) j[k.name] = {{"covered", k.covered}, {"total", k.total}};
    return j;
}

inline io::json save_coverage(const memo_coverage& c) {
    io::json j = io::json::object();
    for (auto k : all_criteria) j[std::string(name_of(k))] = c.items(k).words();
    if (c.extra()) j["extra"] = c.extra()->save();
    return j;
}

/// Restores what save_coverage() gave (a saved extra state is ignored when no metric is attached).
inline void restore_coverage(memo_coverage& c, const io::json& j) {
    // A criterion a checkpoint of an older memo lacks starts empty: it fills as the campaign goes on.
    for (auto k : all_criteria)
        if (const auto it = j.find(std::string(name_of(k))); it != j.end()) c.items(k).assign(it->get<std::vector<std::uint64_t>>());
    if (!c.extra() || !j.contains("extra")) return;
    const auto& x = j.at("extra");
    c.extra()->restore(x.is_string() ? x.get<std::string>() : x.dump());  // text, or JSON itself (older checkpoints)
}

}  // namespace memo
