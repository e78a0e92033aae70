#pragma once
// What a differential tester remembers of the time-outs and memory blow-ups it confirmed: per
// backend, the trigger of each, its layer class and dtype. A model that carries a known trigger
// runs on that backend under short limits (each such run would cost the whole limit again); a
// library that does not say where it hung is blamed on that node; and a time-out met again at a
// known trigger is not confirmed again.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "../backends/executor.hpp"
#include "../core/hash.hpp"
#include "../core/model.hpp"
#include "oracle.hpp"

namespace memo::oracle {

/// A time-out or a memory blow-up is not minimised, so which of its node's parameters matter is
/// not known: it is named by its layer class and dtype alone (one hanging kernel met with other
/// activations is one bug), and that pair is a known hang's trigger.
inline bool named_by_class(const verdict& v) { return v.what == kind::crash && (v.status() == run_status::timeout || v.status() == run_status::memory); }
inline std::uint64_t hang_trigger(const node& n) {
    hasher h;
    h.mix(n.layer->name);
    h.mix(name_of(n.type));
    return h.value();
}

class hang_memory {
public:
    /// A confirmed time-out or memory blow-up localised to a node of m: each culprit hangs (or
    /// blows up) on that node's trigger from now on.
    void learn(const verdict& v, const model& m) {
        if (!named_by_class(v) || !at(v, m)) return;
        for (const auto& c : v.culprits) known_[c].emplace(v.status(), hang_trigger(m[v.node]));
    }
    /// Whether m has a node of a trigger `backend` timed out (s: timeout) or blew up (memory) on.
    bool carries(std::string_view backend, const model& m, run_status s) const {
        const auto* k = of(backend);
        return k && std::any_of(m.nodes.begin(), m.nodes.end(), [&](const node& n) { return k->count({s, hang_trigger(n)}) != 0; });
    }
    /// The first node of m with a trigger v's one culprit hung or blew up on (as v's status says);
    /// -1 when there is none.
    int trigger_in(const verdict& v, const model& m) const {
        const auto* k = v.culprits.size() == 1 ? of(v.culprits.front()) : nullptr;
        if (!k) return -1;
        for (std::size_t i = 0; i < m.size(); ++i)
            if (k->count({v.status(), hang_trigger(m.nodes[i])})) return static_cast<int>(i);
        return -1;
    }
    /// Whether `backend` timing out at v's node of m is a time-out confirmed before.
    bool knows_timeout(std::string_view backend, const verdict& v, const model& m) const {
        const auto* k = of(backend);
        return k && at(v, m) && k->count({run_status::timeout, hang_trigger(m[v.node])}) != 0;
    }

    /// Each run of m that carries a trigger of x's would cost the whole limit again: it gets a
    /// tenth of the time (250 ms at least) or an eighth of the memory (256 MB at least), and the
    /// rest of the model is still tested on that library. restore_limits() gives the full ones
    /// back when its run is collected.
    void shorten_limits(executor& x, const model& m) {
        const bool hangs = carries(x.name(), m, run_status::timeout), blows_up = carries(x.name(), m, run_status::memory);
        if (!hangs && !blows_up) return;
        const limits full{x.time_limit(), x.memory_limit_mb()};
        full_limits_[&x] = full;
        if (hangs && full.ms > 0) x.set_time_limit(std::max(250.0, full.ms / 10));
        if (blows_up && full.mb > 0) x.set_memory_limit_mb(std::max<std::int64_t>(256, full.mb / 8));
        ++short_limit_runs_;
    }
    void restore_limits(executor& x) {
        const auto it = full_limits_.find(&x);
        if (it == full_limits_.end()) return;
        if (it->second.ms > 0) x.set_time_limit(it->second.ms);
        if (it->second.mb > 0) x.set_memory_limit_mb(it->second.mb);
        full_limits_.erase(it);
    }
    /// Runs given short limits so far.
    std::uint64_t short_limit_runs() const noexcept { return short_limit_runs_; }

private:
    struct limits {
        double ms = 0;
        std::int64_t mb = 0;
    };
    std::map<const executor*, limits> full_limits_;  // of the backends running under short ones
    std::uint64_t short_limit_runs_ = 0;
    using triggers = std::set<std::pair<run_status, std::uint64_t>>;  // (timeout or memory, trigger)
    static bool at(const verdict& v, const model& m) { return v.node >= 0 && static_cast<std::size_t>(v.node) < m.size(); }
    const triggers* of(std::string_view backend) const {
        const auto it = known_.find(backend);
        return it == known_.end() ? nullptr : &it->second;
    }
    std::map<std::string, triggers, std::less<>> known_;  // by backend
};

}  // namespace memo::oracle
