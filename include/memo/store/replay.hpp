#pragma once
// Replay: re-runs the executions a campaign stored and compares each with its record. A result
// that differs is a divergence: the same library gives another answer for the same model and
// inputs (nondeterminism, or a regression when a new version of the library replays an old
// corpus). It is reported apart from cross-library inconsistency, with the first node whose
// digest differs when the run was traced.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <span>

#include "../backends/executor.hpp"
#include "../oracle/oracle.hpp"
#include "../tensors/inputs.hpp"
#include "store.hpp"

namespace memo::store {

struct replay_options {
    /// Compare each node's (or the outputs') sum of magnitudes within its dtype's tolerance rather
    /// than digests bit for bit: for libraries that are not deterministic (GPU kernels, threads).
    bool tolerant = false;
    oracle::options tolerance{};
    /// Called after each execution: (done, total).
    std::function<void(std::size_t, std::size_t)> progress;
};

struct replay_summary {
    std::uint64_t replayed = 0;
    std::uint64_t same = 0;               // bit for bit
    std::uint64_t within_tolerance = 0;   // digests differ, magnitudes within tolerance (tolerant mode)
    std::uint64_t skipped = 0;            // another backend's, or a run the backend declined
    std::vector<divergence> divergences;  // also written to the store
};

namespace detail {

inline bool close(const digest& a, const digest& b, dtype t, const oracle::options& o) {
    return std::abs(a.abs_sum - b.abs_sum) <= oracle::tolerance(t, o) * std::max({a.abs_sum, b.abs_sum, 1e-6});
}

/// How a replayed run compares with its record: same, within tolerance, or where it diverges.
inline std::optional<divergence> compare(const execution_record& e, const model& m, run_result& r, std::span<const digest> nodes, const replay_options& o,
                                         bool& tolerated) {
    divergence d{e.model, e.backend, e.dtype, e.inputs, {}, -1, {}};
    if (r.status != e.status) {
        d.what = "status " + std::string(name_of(e.status)) + " -> " + std::string(name_of(r.status));
        d.node = r.node;
        if (r.node >= 0 && static_cast<std::size_t>(r.node) < m.size()) d.layer = std::string(m[r.node].layer->name);
        return d;
    }
    if (!r.ok()) return std::nullopt;  // the same failure
    tolerated = false;
    for (std::size_t i = 0; i < std::min(nodes.size(), e.nodes.size()); ++i) {
        if (nodes[i] == e.nodes[i]) continue;
        if (o.tolerant && detail::close(nodes[i], e.nodes[i], m.nodes[i].type, o.tolerance)) {
            tolerated = true;
            continue;
        }
        d.what = "node " + std::to_string(i);
        d.node = static_cast<int>(i);
        d.layer = std::string(m[d.node].layer->name);
        return d;
    }
    if (nodes.size() != e.nodes.size()) {
        d.what = "node count " + std::to_string(e.nodes.size()) + " -> " + std::to_string(nodes.size());
        return d;
    }
    const digest now = digest_of(r.outputs);
    if (now == e.outputs) return std::nullopt;
    if (o.tolerant && detail::close(now, e.outputs, m.nodes[static_cast<std::size_t>(m.outputs.front())].type, o.tolerance)) {
        tolerated = true;
        return std::nullopt;
    }
    d.what = "outputs";
    return d;
}

}  // namespace detail

/// Re-runs every stored execution whose backend is among `xs` and compares it with its record.
inline replay_summary replay(campaign_store& st, const registry& reg, std::span<executor* const> xs, const replay_options& o = {}) {
    std::vector<execution_record> todo;
    st.for_each_execution([&](execution_record e) { todo.push_back(std::move(e)); });
    replay_summary sum;
    std::map<std::uint64_t, std::optional<model>> models;
    for (std::size_t k = 0; k < todo.size(); ++k) {
        const auto& e = todo[k];
        if (o.progress) o.progress(k, todo.size());
        executor* x = nullptr;
        for (auto* c : xs)
            if (c->name() == e.backend) x = c;
        auto it = models.find(e.model);
        if (it == models.end()) it = models.emplace(e.model, st.find_model(e.model, reg)).first;
        if (!x || !it->second || e.status == run_status::unsupported || e.dtype != "native") {
            ++sum.skipped;
            continue;
        }
        const model& m = *it->second;
        const auto inputs = make_inputs(m, inputs_from_text(e.inputs));
        run_options ro;
        ro.every_node = ro.digest_nodes = !e.nodes.empty();
        auto r = x->run(m, inputs, ro);
        if (ro.every_node && r.ok() && r.node_digests.empty()) r.digest_nodes(m);  // in process: every node came back
        const std::vector<digest>& nodes = r.node_digests;
        ++sum.replayed;
        bool tolerated = false;
        if (auto d = detail::compare(e, m, r, nodes, o, tolerated)) {
            st.add_divergence(*d);
            sum.divergences.push_back(std::move(*d));
        } else if (tolerated) {
            ++sum.within_tolerance;
        } else {
            ++sum.same;
        }
    }
    if (o.progress) o.progress(todo.size(), todo.size());
    return sum;
}

}  // namespace memo::store
