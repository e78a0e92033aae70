#pragma once
// What a campaign found, each bug once: a verdict is deduplicated by its first sighting's
// signature, counted apart when its root cause is already reported, and otherwise minimised, given
// its reproducers in its libraries' own terms and stored in the campaign's bugs/.
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../oracle/differential.hpp"
#include "../oracle/reproducers.hpp"
#include "../oracle/resources.hpp"
#include "../oracle/root_cause.hpp"
#include "../store/bugs.hpp"
#include "execution_options.hpp"
#include "tally.hpp"
#include "waiting.hpp"

namespace memo::campaign {

class findings {
public:
    /// Counts into `tally`, times into `clock`; a resource bug keeps `resources`' last runs.
    findings(std::filesystem::path dir, const execution_options& o, execution_tally& tally, stage_clock& clock, const oracle::resources& resources)
        : bugs_(std::move(dir), o.attach, o.replay), o_(o), tally_(tally), clock_(clock), resources_(resources) {
        bugs_.set_versions(o_.versions);
    }

    /// Stores a bug that tester t found in `cur` (or counts a known one); returns its signature.
    /// A second fault in a model (`beside`: a verdict's `more`) is stored only once minimised away
    /// from the first, so that its reproducer shows it and not the first.
    std::string report(oracle::tester& t, const queued_model& cur, const oracle::verdict& v, const std::vector<oracle::observation>& obs, double seconds,
                       bool minimise, const std::vector<std::string>& backends, bool beside = false) {
        // A bug seen before (same first sighting signature) is counted, not minimised again.
        const std::string first = oracle::signature(v, oracle::localised_in(v, cur.m));
        if (const auto it = known_.find(first); it != known_.end()) {
            if (it->second.empty()) return {};  // a second fault that could not be shown alone
            if (beside) return it->second;      // sightings are counted for a model's first verdict, as a store's replay counts them
            tally_.sighted(v.what);
            bugs_.count(v.what, it->second);
            return it->second;
        }
        // A root cause already reported upstream: a sighting, no minimisation spent on it.
        if (!o_.known_root_causes.empty() && o_.known_root_causes.count(oracle::root_cause(v, oracle::localised_in(v, cur.m)))) {
            ++tally_.known_sightings;
            return {};
        }
        store::bug_report b;
        b.original = cur.m;
        b.observations = obs;
        b.inputs = t.inputs();
        b.tester = std::string(t.name());
        b.iteration = cur.iteration;
        b.seconds = seconds;
        b.v = v;
        b.minimal = cur.m;
        if (minimise && o_.minimise) {
            const stage_clock::timer timed(clock_.minimise);
            auto small = t.minimise(cur.m, v);
            b.minimal = std::move(small.m);
            b.v = small.v;
            b.minimise_checks = small.checks;
        }
        if (beside && b.minimal.size() == cur.m.size()) {
            known_.emplace(first, std::string());
            return {};
        }
        if (!beside) tally_.sighted(v.what);
        auto* differential = dynamic_cast<oracle::differential*>(&t);
        if (o_.reproducers && differential && oracle::differential_kind(b.v.what))
            // Written now (the worker is at hand), run beside the campaign: a reproducer imports
            // its library afresh, seconds that would hold every lane up (bug_store::record).
            b.reproduce = [differential, &b](const std::filesystem::path& dir) {
                return oracle::write_reproducers(*differential, b.minimal, dir.string(), false);
            };
        // The stored signature is the minimal model's: its non-default parameters are those that matter.
        b.signature = oracle::signature(b.v, oracle::localised_in(b.v, b.minimal));
        if (b.v.what == oracle::kind::performance || b.v.what == oracle::kind::leak || b.v.what == oracle::kind::nondeterminism) {
            b.resources = resources_.last_runs();
            b.resource_options = o_.resources;
        }
        known_.emplace(first, b.signature);
        const stage_clock::timer timed(clock_.store);
        bugs_.record(b, backends);
        return b.signature;
    }

    /// A bug of a stored judgement (a memo hit): a sighting.
    void counted(oracle::kind k, const std::string& signature) {
        tally_.sighted(k);
        bugs_.count(k, signature);
    }

    const store::bug_store& bugs() const noexcept { return bugs_; }
    store::bug_store& bugs() noexcept { return bugs_; }

    /// Into and out of a checkpoint: first-sighting signatures and what each was stored as.
    void save(io::json& j) const { j["known"] = known_; }
    void restore(const io::json& j) { j.at("known").get_to(known_); }

private:
    store::bug_store bugs_;
    const execution_options& o_;
    execution_tally& tally_;
    stage_clock& clock_;
    const oracle::resources& resources_;
    std::map<std::string, std::string> known_;  // first-sighting signature -> stored signature ("": a second fault not shown alone)
};

}  // namespace memo::campaign
