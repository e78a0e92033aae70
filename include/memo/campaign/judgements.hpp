#pragma once
// A campaign's record of what ran and how it was judged, in its store: every run of a model (its
// status, output digest, a digest per node when traced, time and memory) and the judgement, keyed
// by the model, its inputs and what judged it. A model judged before under the same key is not run
// again: its stored judgement counts (a memo hit).
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../oracle/oracle.hpp"
#include "../oracle/resources.hpp"
#include "../store/store.hpp"

namespace memo::campaign {

/// What judged a campaign's models, as its judgements' key says it: the backends, and the oracles
/// when they are not the differential one alone.
inline std::string judged_by(std::span<const std::string> backends, std::string_view tester, const oracle::resource_options& r) {
    std::string s;
    for (const auto& n : backends) s += (s.empty() ? "" : ",") + n;
    if (tester != "differential") s = std::string(tester) + ":" + s;
    if (r.performance) s += "+performance";
    if (r.leak) s += "+leak";
    if (r.determinism) s += "+determinism";
    return s;
}

class judgement_record {
public:
    /// `inputs`: store::inputs_text of the campaign's input options; `by`: judged_by().
    judgement_record(store::campaign_store& st, std::string inputs, std::string by) : st_(&st), inputs_(std::move(inputs)), by_(std::move(by)) {}

    /// The judgement stored for the model of that key, if it was judged before.
    std::optional<store::judgement> find(std::uint64_t key) const { return st_->find_judgement(key, inputs_, by_); }

    /// Every run of the model and its judgement (`skipped`: left unjudged, its runs not kept).
    void record(std::uint64_t key, const model& m, const std::vector<oracle::observation>& obs, bool skipped, oracle::kind what, const std::string& signature) {
        st_->add_model(key, m);
        double ms = 0;
        for (const auto& ob : obs) {
            if (skipped) break;
            store::execution_record e;
            e.model = key, e.backend = ob.backend, e.inputs = inputs_, e.status = ob.result.status;
            e.outputs = digest_of(ob.result.outputs);
            e.nodes = ob.nodes;
            e.ms = ob.result.ms, e.peak_kb = ob.result.peak_kb, e.message = ob.result.message;
            st_->add_execution(e);
            ms += ob.result.ms;
        }
        const std::string kind = skipped ? "skipped" : std::string(oracle::name_of(what));
        st_->add_judgement(key, inputs_, by_, {kind, signature, ms});
    }

private:
    store::campaign_store* st_;
    std::string inputs_, by_;
};

}  // namespace memo::campaign
