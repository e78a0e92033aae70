#pragma once
// What the executed models covered (not the generated ones: the search's coverage is the
// search's): MEMO's criteria, the value ranges each layer received on each library that traced
// it, and the pairs of parameter values and of producer and consumer the libraries ran. The
// execution stage's fill prefers models that bring pairs not run yet.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "../coverage/checkpoint.hpp"
#include "../coverage/input_range.hpp"
#include "../coverage/param_pairs.hpp"
#include "../io/json.hpp"
#include "../oracle/oracle.hpp"

namespace memo::campaign {

class executed_coverage {
public:
    explicit executed_coverage(const registry& reg) : cov_(reg), ranges_(reg), pairs_(reg) {}

    /// A model that ran (or whose stored judgement counted), and what each library that traced it
    /// saw at its layers.
    void add(const model& m, const std::vector<oracle::observation>& obs = {}) {
        cov_.add(m);
        pairs_.add(m);
        for (const auto& ob : obs) ranges_.add(m, ob.spans);
    }

    /// Whether m brings a pair not executed yet: of parameter values in one node, or of producer
    /// and consumer in the graph.
    bool brings_pairs(const model& m) const { return pairs_.raises(m) || !new_graph_pairs(m).empty(); }
    /// How many pairs m brings that no executed model had: parameter pairs, and graph pairs
    /// weighted by how much rarer they are (a model has dozens of new parameter pairs for each
    /// new graph pair; each graph pair is a pattern a library's optimiser may rewrite).
    std::size_t pair_gain(const model& m) const { return pairs_.gain(m) + graph_pair_weight * new_graph_pairs(m).size(); }

    const input_range_coverage& input_ranges() const noexcept { return ranges_; }
    const registry& layers() const noexcept { return cov_.space().layers(); }

    /// stats.json's "coverage_executed".
    io::json stats() const {
        io::json j = io::json::object();
        for (auto k : all_criteria) j[std::string(name_of(k))] = {{"covered", cov_.covered(k)}, {"total", cov_.total(k)}};
        j[std::string(layer_input_range_name)] = {{"covered", ranges_.covered()}, {"total", ranges_.total()}};
        j[std::string(layer_param_pairs_name)] = {{"covered", pairs_.covered()}, {"total", pairs_.total()}};
        return j;
    }
    /// Into and out of a checkpoint (the keys of the execution stage's saved state).
    void save(io::json& j) const {
        j["coverage"] = save_coverage(cov_);
        j["input_ranges"] = ranges_.save();
        j["param_pairs"] = pairs_.save();
    }
    void restore(const io::json& j) {
        restore_coverage(cov_, j.at("coverage"));
        if (j.contains("input_ranges")) ranges_.restore(j.at("input_ranges"));
        if (j.contains("param_pairs")) pairs_.restore(j.at("param_pairs").get<std::vector<std::uint64_t>>());
    }

private:
    static constexpr std::size_t graph_pair_weight = 16;

    /// The connectable graph pairs of m that no executed model had, each once.
    std::vector<std::size_t> new_graph_pairs(const model& m) const {
        std::vector<std::size_t> fresh;
        for (std::size_t i = 0; i < m.nodes.size(); ++i)
            cov_.space().graph_pair_items(m, i, [&](criterion c, std::size_t item) {
                if (c == criterion::graph_pair_connectable && !cov_.has(c, item) && std::find(fresh.begin(), fresh.end(), item) == fresh.end())
                    fresh.push_back(item);
            });
        return fresh;
    }

    memo_coverage cov_;
    input_range_coverage ranges_;  // known only once a model ran: executed models alone count
    param_pair_coverage pairs_;    // what fill prefers
};

}  // namespace memo::campaign
