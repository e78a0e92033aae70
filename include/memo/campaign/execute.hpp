#pragma once
// The execution stage of a campaign: the models the search generates run on the backends under
// test (each in its worker), the oracle judges them, and every bug is localised, minimised,
// deduplicated and stored before the campaign goes on. Models that raised coverage run first;
// when none waits, the next valid model that brings a pair not executed yet runs (a pair of
// parameter values, coverage/param_pairs.hpp, or a producer-consumer pair of the graph,
// graph_pair_connectable; or, after a while without one, any), so the workers never idle. Several lanes (each a
// differential tester with workers of its own) keep several models in flight.
//
// The lanes' testers are differential (several libraries against each other) or metamorphic (each
// library against itself on a model and its variant); the resource oracles (time and memory,
// oracle/resources.hpp) may run beside either, on the models that ran.
//
// Its parts: what waits for a lane (waiting.hpp), what the executed models covered
// (executed_coverage.hpp), the counts (tally.hpp), each bug found once (findings.hpp), and with the
// campaign's store every run and judgement recorded, a model judged before not run again
// (judgements.hpp).
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>

#include <fmt/core.h>

#include "../layers/cost.hpp"
#include "../oracle/declines.hpp"
#include "../oracle/metamorphic.hpp"
#include "../oracle/resources.hpp"
#include "../store/store.hpp"
#include "executed_coverage.hpp"
#include "execution_options.hpp"
#include "findings.hpp"
#include "judgements.hpp"
#include "stage.hpp"
#include "tally.hpp"

namespace memo::campaign {

/// stats.json's "oracle": which oracles judged, with their own figures (summed over the lanes'
/// testers); `resource_checks`: models run again for the resource oracles.
inline io::json oracle_stats(std::span<oracle::tester* const> testers, const oracle::resource_options& r, std::uint64_t resource_checks) {
    io::json j = {{"tester", std::string(testers.front()->name())}};
    std::uint64_t discarded = 0, without = 0;
    std::array<std::uint64_t, std::size(metamorphic::relation_names)> used{};
    bool meta = false;
    for (const auto* t : testers)
        if (const auto* m = dynamic_cast<const oracle::metamorphic_tester*>(t)) {
            meta = true;
            discarded += m->discarded(), without += m->without_variant();
            for (std::size_t k = 0; k < used.size(); ++k) used[k] += m->used()[k];
        }
    std::uint64_t short_runs = 0, unconfirmed = 0, masked_checks = 0, masked_found = 0, masked_skipped = 0;
    bool differential = false;
    for (const auto* t : testers)
        if (const auto* d = dynamic_cast<const oracle::differential*>(t)) {
            differential = true;
            short_runs += d->short_limit_runs(), unconfirmed += d->unconfirmed_timeouts();
            masked_checks += d->masked_checks(), masked_found += d->masked_found(), masked_skipped += d->masked_skipped();
        }
    if (differential) {
        // Runs under short limits (a known hang's or blow-up's trigger), time-outs that did not
        // come again alone with the limit doubled, and models whose outputs agreed while a
        // node's traced values did not (localised; found: a node beyond rounding).
        j["short_limit_runs"] = short_runs;
        j["unconfirmed_timeouts"] = unconfirmed;
        j["masked"] = {{"checked", masked_checks}, {"found", masked_found}, {"skipped", masked_skipped}};
    }
    if (meta) {
        io::json rel = io::json::object();
        for (std::size_t k = 0; k < used.size(); ++k) rel[std::string(metamorphic::relation_names[k])] = used[k];
        j["metamorphic"] = {{"variants", rel}, {"discarded_self_check", discarded}, {"models_without_variant", without}};
    }
    if (r.any()) {
        j["resources"] = store::resource_options_json(r);
        j["resources"]["performance"] = r.performance;
        j["resources"]["leak"] = r.leak;
        j["resources"]["determinism"] = r.determinism;
        j["resources"]["models_checked"] = resource_checks;
    }
    return j;
}

class execution final : public stage {
public:
    /// `lanes`: differential testers over the same backends (their own workers each).
    execution(std::vector<oracle::tester*> lanes, const registry& reg, std::filesystem::path dir, execution_options o = {})
        : o_(std::move(o)), resources_(o_.resources), findings_(std::move(dir), o_, tally_, clock_, resources_), cov_(reg), waiting_(o_.combination_every) {
        if (lanes.empty()) throw error("an execution needs at least one lane");
        // The lanes' testers learn what the backends decline into one table, which generation reads.
        for (auto* d : lanes) {
            lanes_.push_back({d, {}, false, 0});
            if (!d->share_declines(declines_)) testers_learn_declines_ = false;
        }
        for (auto* x : lanes.front()->participants()) names_.emplace_back(x->name());
    }
    execution(oracle::tester& t, const registry& reg, std::filesystem::path dir, execution_options o = {})
        : execution(std::vector<oracle::tester*>{&t}, reg, std::move(dir), o) {}

    /// With fill: a valid model that raised nothing is wanted when a lane idles with no model
    /// waiting, and as a combination waiting for its turn (see offer()).
    bool wants_any() const override { return o_.fill && ((waiting_.empty() && idle() != nullptr) || o_.combination_every); }

    void set_deadline(std::chrono::steady_clock::time_point t) override {
        for (auto& l : lanes_) l.tester->set_deadline(t);
    }

    /// Every lane's participants take m at once (a worker serving several lanes queues them), so
    /// the workers start side by side; what they answer is dropped.
    double warm_up(const model& m) override {
        const stage_clock::timer timed(clock_.startup);
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<std::vector<tensor>> inputs;
        std::vector<executor*> sent;
        for (auto& l : lanes_) {
            inputs.push_back(make_inputs(m, l.tester->inputs()));
            for (auto* x : l.tester->participants())
                if (x->supports(m)) {
                    x->submit(m, inputs.back(), {});
                    sent.push_back(x);
                }
        }
        for (auto* x : sent) (void)x->collect();
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }

    void offer(const model& m, std::uint64_t key, bool diverse, std::uint64_t iteration, double) override {
        const stage_clock::timer timed(clock_.offer);
        if (!diverse && !wants_any()) return;
        const bool to_fill = !diverse && waiting_.empty() && idle() != nullptr;
        const bool new_pairs = !diverse && cov_.brings_pairs(m);
        if (!diverse && !new_pairs && !to_fill) return;
        if (!diverse && !runnable(m)) return;  // run to keep the workers busy: only what all of them take
        // Of the models that raised nothing, those that combine parameter values in a way not run
        // yet: a fault that needs two values in one layer is reached by design, not by chance. An
        // idle lane takes any after a while; a combination's turn waits for one.
        if (!diverse && !new_pairs && (!to_fill || !waiting_.patience_over(o_.fill_patience_ms))) return;
        if (o_.max_cost > 0 && execution_cost(m) > o_.max_cost) {
            ++tally_.too_costly;
            return;
        }
        if (!within_budget(m, lanes_.front().tester->inputs().samples, o_.max_bytes)) {
            ++tally_.too_large;
            return;
        }
        if (!diverse && !to_fill) {
            // The waiting combination is the one with the most new pairs of those offered since.
            waiting_.offer_combination({m, key, iteration}, cov_.pair_gain(m));
            return;
        }
        if (store_) store_->add_model(key, m);  // a checkpoint names waiting models by key
        waiting_.push({m, key, iteration});
    }

    /// What the backends said they take (supports()), and what they declined at run time. Without
    /// fill, what runs depends on the seed alone, so generation does not follow run-time declines:
    /// when a worker answers would change the models made.
    expected<void> runnable(const model& m) const {
        for (auto* x : lanes_.front().tester->participants())
            if (auto ok = x->supports(m); !ok) return fail(std::string(x->name()) + ": " + ok.reason());
        return o_.fill ? declines_.runs_everywhere(m) : expected<void>{};
    }
    /// Without fill, what breeds depends on the seed alone, as runnable() does.
    bool breeds(const model& m) const override { return runnable(m) && (!o_.fill || !failed_.count(model_key(m))); }
    std::uint64_t breeding_learnt() const override { return o_.fill ? declines_.learnt() + failed_.size() : 0; }
    bool declines(std::string_view layer, dtype t) const override { return o_.fill && declines_.declined(layer, t); }

    bool poll(double t) override {
        findings_.bugs().poll_reproducers();
        for (auto& l : lanes_)
            if (l.running && l.tester->ready()) complete(l, t);
        start_idle();
        return waiting_.size() >= o_.queue_limit;
    }

    /// Waits for a lane to finish, judges what finished and refills the idle lanes. With fill, it
    /// takes whichever lane finishes first (blocked on all their workers' pipes at once), and waits
    /// a moment at most, so that the loop looks at its clock: a library that hangs does not hold
    /// the campaign past its budget. Without fill, it waits for the lane that started first, so
    /// that models are judged in the order they started.
    void wait(double t) override {
        if (o_.fill) {
            if (idle() == nullptr) {  // an idle lane wants a model, not a wait
                const stage_clock::timer waiting(clock_.wait);
                await_any_lane(std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
            }
            poll(t);
            return;
        }
        lane* oldest = nullptr;
        for (auto& l : lanes_)
            if (l.running && (!oldest || l.ticket < oldest->ticket)) oldest = &l;
        if (oldest) complete(*oldest, t);
        start_idle();
    }

    /// At the budget's end. With fill, the runs in flight are abandoned, not waited for (a hanging
    /// library would hold the campaign past its budget). Without fill, it finishes what runs and
    /// every model still waiting, so that each model that raised coverage runs whatever the timing
    /// (a resumed campaign then ends as one run in one go).
    void drain(double t) override {
        if (o_.fill) {
            for (auto& l : lanes_)
                if (l.running) {
                    l.tester->abandon();
                    l.running = false;
                    ++abandoned_;
                }
            return;
        }
        for (;;) {
            for (auto& l : lanes_)
                if (l.running) complete(l, t);
            if (o_.fill || waiting_.empty()) return;
            start_idle();
        }
    }

    std::size_t unsettled() const override { return findings_.bugs().reproducers_running(); }
    void settle() override {
        const stage_clock::timer timed(clock_.settle);
        findings_.bugs().wait_reproducers();
    }

    std::string progress(double t) const override {
        std::string kinds;
        for (auto k : reported_kinds()) kinds += fmt::format(" {} {}", findings_.bugs().unique(oracle::name_of(k)), short_name(k));
        const std::size_t causes = findings_.bugs().root_cause_count();
        return fmt::format(" | exec {} ({:.0f}/s){} bugs{}{}", tally_.executed, t > 0 ? static_cast<double>(tally_.executed) / t : 0.0,
                           tally_.hits ? fmt::format(", {} memo hits", tally_.hits) : std::string(), kinds,
                           causes ? fmt::format(" ({} root causes)", causes) : std::string());
    }

    void write_stats(io::json& s) const override {
        const auto& bugs_found = findings_.bugs();
        s["backends"] = names_;
        if (o_.versions.is_object()) s["versions"] = o_.versions;
        s["models_executed"] = tally_.executed;
        s["models_over_cost"] = tally_.too_costly;
        s["models_over_memory"] = tally_.too_large;
        s["models_abandoned"] = abandoned_;
        s["models_combinations"] = waiting_.combinations_run();
        s["max_bytes"] = o_.max_bytes;
        s["models_single_backend"] = tally_.single_backend;
        s["max_cost"] = o_.max_cost;
        s["replay"] = o_.replay;
        io::json bugs = {{"unique", bugs_found.unique()},
                         {"root_causes", bugs_found.root_cause_count()},
                         {"known_sightings", tally_.known_sightings},
                         {"suppressed_rounding", tally_.suppressed},
                         {"all_backends_failed", tally_.all_failed}};
        for (std::size_t k = 1; k < std::size(oracle::kind_names); ++k) {
            const std::string name(oracle::kind_names[k]);
            if (name != "shape") bugs[name] = tally_.sightings(name);
            bugs["unique_" + name] = bugs_found.unique(name);
        }
        s["bugs"] = bugs;
        const auto lane_testers = testers();
        s["oracle"] = oracle_stats(lane_testers, o_.resources, tally_.resource_checks);
        io::json per = io::json::object();
        for (const auto& [name, c] : tally_.per_backend) {
            std::uint64_t restarts = 0;
            for (const auto* t : lane_testers)
                for (auto* x : t->participants())
                    if (x->name() == name) restarts += x->restarts();
            per[name] = c.stats(restarts);
            // How many executed models it declined, and why (layer and dtype).
            per[name]["declined"] = declines_.stats(name);
            per[name]["declined"]["runs"] = c.declined();
            per[name]["declined"]["share"] = c.runs ? static_cast<double>(c.declined()) / static_cast<double>(c.runs) : 0.0;
        }
        s["executions"] = per;
        s["coverage_executed"] = cov_.stats();
        s["memo"] = {{"models_run", tally_.runs}, {"hits", tally_.hits}, {"saved_seconds", tally_.saved_ms / 1000.0}};
        // Where this run's own thread spent its time in the stage; the rest of the campaign's
        // seconds went to the search and its books.
        s["time_ms"] = {{"offer", clock_.offer},   {"start", clock_.start},       {"judge", clock_.judge - clock_.truth - clock_.localise},
                        {"truth", clock_.truth},   {"localise", clock_.localise}, {"minimise", clock_.minimise},
                        {"store", clock_.store},   {"wait", clock_.wait},         {"resources", clock_.resources},
                        {"settle", clock_.settle}, {"startup", clock_.startup}};
    }

    void open(store::campaign_store& st, const io::json* resumed) override {
        store_ = &st;
        const auto& first = *lanes_.front().tester;
        judged_.emplace(st, store::inputs_text(first.inputs()), judged_by(names_, first.name(), o_.resources));
        for (auto& l : lanes_) l.tester->set_trace(true);
        if (resumed) restore(*resumed);
    }

    io::json save() const override {
        io::json pending = io::json::array();
        std::vector<const lane*> running;
        for (const auto& l : lanes_)
            if (l.running) running.push_back(&l);
        std::sort(running.begin(), running.end(), [](const lane* a, const lane* b) { return a->ticket < b->ticket; });
        for (const auto* l : running) pending.push_back({l->current.key, l->current.iteration});
        for (const auto& p : waiting_.in_turn()) pending.push_back({p.key, p.iteration});
        io::json j = tally_;
        cov_.save(j);
        findings_.save(j);
        j["pending"] = pending;
        j["declines"] = declines_.save();
        j["failed"] = failed_;
        return j;
    }

    /// The kinds of bug the oracles at work can report (the progress line's).
    std::vector<oracle::kind> reported_kinds() const {
        using oracle::kind;
        std::vector<kind> r;
        if (lanes_.front().tester->name() == "metamorphic") r = {kind::crash, kind::metamorphic};
        else r = {kind::crash, kind::nan, kind::inconsistency, kind::shape};
        if (o_.resources.performance) r.push_back(kind::performance);
        if (o_.resources.leak) r.push_back(kind::leak);
        if (o_.resources.determinism) r.push_back(kind::nondeterminism);
        return r;
    }
    static std::string_view short_name(oracle::kind k) {
        switch (k) {
            case oracle::kind::inconsistency: return "incons";
            case oracle::kind::metamorphic: return "meta";
            case oracle::kind::performance: return "perf";
            case oracle::kind::nondeterminism: return "nondet";
            default: return oracle::name_of(k);
        }
    }

    std::uint64_t executed() const noexcept override { return tally_.executed; }
    io::json columns() const override { return {{std::string(layer_input_range_name), cov_.input_ranges().covered()}}; }
    const input_range_coverage& input_ranges() const noexcept { return cov_.input_ranges(); }
    bool done() const override { return o_.max_models && tally_.executed >= o_.max_models; }
    const store::bug_store& store() const noexcept { return findings_.bugs(); }
    store::bug_store& store() noexcept { return findings_.bugs(); }
    std::uint64_t memo_hits() const noexcept { return tally_.hits; }
    /// Models run on the backends by this campaign (memo hits excluded).
    std::uint64_t models_run() const noexcept { return tally_.runs; }

private:
    struct lane {
        oracle::tester* tester;
        queued_model current;
        bool running;
        std::uint64_t ticket;  // order of starting, for wait()
    };

    std::vector<oracle::tester*> testers() const {
        std::vector<oracle::tester*> ts;
        for (const auto& l : lanes_) ts.push_back(l.tester);
        return ts;
    }

    const lane* idle() const {
        for (const auto& l : lanes_)
            if (!l.running) return &l;
        return nullptr;
    }

    /// Blocks until some running lane is ready or `until`. ready() also turns true when a worker
    /// runs past its time limit, which no descriptor tells, so the wait looks again every 5 ms (and
    /// every 1 ms where no descriptor is there to wait on).
    void await_any_lane(std::chrono::steady_clock::time_point until) {
        std::vector<int> fds;
        std::vector<pollfd> ps;
        for (;;) {
            fds.clear();
            for (auto& l : lanes_) {
                if (!l.running) continue;
                if (l.tester->ready()) return;
                l.tester->awaited_fds(fds);
            }
            const auto now = std::chrono::steady_clock::now();
            if (now >= until) return;
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count();
            ps.clear();
            for (int fd : fds) ps.push_back({fd, POLLIN, 0});
            ::poll(ps.data(), ps.size(), static_cast<int>(std::clamp<long long>(left, 1, fds.empty() ? 1 : 5)));
        }
    }

    void start_idle() {
        for (auto& l : lanes_) {
            if (l.running) continue;
            auto next = waiting_.next([&](const queued_model& q) { return memoised(q); }, [&](const model& m) { return cov_.brings_pairs(m); });
            if (!next) return;
            l.current = std::move(*next);
            if (store_) store_->add_model(l.current.key, l.current.m);  // a checkpoint names running models by key (a combination was not stored when offered)
            {
                const stage_clock::timer timed(clock_.start);
                l.tester->begin(l.current.m);
            }
            l.running = true;
            l.ticket = ++tickets_;
        }
    }

    /// A model judged before counts as executed, with its stored judgement, and is not run.
    bool memoised(const queued_model& p) {
        if (!judged_) return false;
        const auto j = judged_->find(p.key);
        if (!j) return false;
        ++tally_.hits;
        tally_.saved_ms += j->ms;
        if (j->kind == "skipped") {
            ++tally_.single_backend;
            return true;
        }
        ++tally_.executed;
        cov_.add(p.m);
        if (j->kind != "none") {
            if (const auto k = oracle::kind_from(j->kind); k != oracle::kind::none) findings_.counted(k, j->signature);
            else ++tally_.found[j->kind];
        }
        return true;
    }

    /// Every run of the model, and the oracle's judgement of it, into the store.
    void record(const queued_model& p, const std::vector<oracle::observation>& obs, bool skipped, oracle::kind what, const std::string& signature) {
        if (!judged_) return;
        const stage_clock::timer timed(clock_.store);
        judged_->record(p.key, p.m, obs, skipped, what, signature);
    }

    void restore(const io::json& j) {
        j.get_to(tally_);
        cov_.restore(j);
        findings_.restore(j);
        if (j.contains("failed")) j.at("failed").get_to(failed_);  // a resumed campaign breeds from them no more than one run in one go
        if (j.contains("declines")) declines_.restore(j.at("declines"));
        for (const auto& p : j.at("pending")) {
            const auto key = p.at(0).get<std::uint64_t>();
            if (auto m = store_->find_model(key, cov_.layers())) waiting_.push({std::move(*m), key, p.at(1).get<std::uint64_t>()});
        }
    }

    void complete(lane& l, double t) {
        l.running = false;
        oracle::tester& tester = *l.tester;
        const queued_model& cur = l.current;
        oracle::verdict v;
        {
            // The differential oracle times its truth and localisation itself, whoever calls it:
            // what it adds while judging is judge's share (what it adds while minimising, minimise's).
            const auto* d = dynamic_cast<const oracle::differential*>(&tester);
            const double truth0 = d ? d->truth_ms() : 0, localise0 = d ? d->localise_ms() : 0;
            const stage_clock::timer timed(clock_.judge);
            v = tester.finish();
            if (d) clock_.truth += d->truth_ms() - truth0, clock_.localise += d->localise_ms() - localise0;
        }
        // Declines are learnt from a skipped model too: when every library but the reference
        // declines it (two backends of one library), it is skipped for that very reason. (A tester
        // that shares the table learnt them as it judged.)
        if (!testers_learn_declines_) declines_.learn(cur.m, tester.observations());
        if (tester.last_skipped()) {
            ++tally_.single_backend;
            record(cur, tester.observations(), true, v.what, {});
            return;
        }
        ++tally_.executed;
        ++tally_.runs;
        const auto obs = tester.observations();
        cov_.add(cur.m, obs);  // with what each layer received, on each library that traced it
        if (std::any_of(obs.begin(), obs.end(), [](const oracle::observation& o) { return oracle::failed(o.result.status); })) failed_.insert(cur.key);
        tally_.ran(obs);
        if (v.every_backend_failed()) ++tally_.all_failed;
        if (!v && tester.last_suppressed()) ++tally_.suppressed;
        const std::string signature = v ? findings_.report(tester, cur, v, obs, t, true, names_) : std::string();
        // A model that showed a bug breeds nothing either: its descendants would show it again,
        // and each sighting of an inconsistency costs its localisation (five runs of the model).
        if (v) failed_.insert(cur.key);
        if (const auto* d = v.differs())
            for (const auto& also : d->more) findings_.report(tester, cur, also, obs, t, true, names_, true);
        if (o_.resources.any()) check_resources(tester, cur, obs, t);
        // The judgement goes into the store last: a campaign killed before it runs the model again
        // when resumed, while one stored first would count as judged and never store the bugs
        // found beside the first or by the resource oracles.
        record(cur, obs, false, v.what, signature);
    }

    /// Runs the model again on the backends that ran it, for the resource oracles.
    void check_resources(oracle::tester& tester, const queued_model& cur, const std::vector<oracle::observation>& obs, double t) {
        const auto xs = oracle::ran_ok(tester.participants(), obs);  // obs: minimising a bug ran other models since
        if (xs.empty()) return;
        const stage_clock::timer timed(clock_.resources);
        ++tally_.resource_checks;
        for (const auto& v : resources_.check(cur.m, tester.last_inputs(), xs)) findings_.report(tester, cur, v, obs, t, false, names_);
    }

    execution_options o_;
    oracle::resources resources_;
    execution_tally tally_;
    stage_clock clock_;
    findings findings_;  // counts into tally_, times into clock_
    executed_coverage cov_;
    std::vector<lane> lanes_;
    std::uint64_t tickets_ = 0;
    store::campaign_store* store_ = nullptr;  // the campaign's, once open()
    std::optional<judgement_record> judged_;  // in it
    waiting_models waiting_;
    std::vector<std::string> names_;
    std::uint64_t abandoned_ = 0;         // in flight at the budget's end
    oracle::decline_table declines_;      // what each backend was seen to decline, and how often
    bool testers_learn_declines_ = true;  // every lane's tester learns into declines_ (share_declines)
    std::set<std::uint64_t> failed_;      // models some backend failed on or that showed a bug (keys): they breed no descendants
};

}  // namespace memo::campaign
