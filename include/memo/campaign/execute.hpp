#pragma once
// The execution stage of a campaign: the models the search generates run on the backends under
// test (each in its worker), the oracle judges them, and every bug is localised, minimised,
// deduplicated and stored before the campaign goes on. Models that raised coverage run first;
// when none waits, the newest valid model runs, so the workers never idle. Several lanes (each a
// differential tester with workers of its own) keep several models in flight.
//
// With the campaign's store, every run is recorded (status, output digest, a digest per node when
// traced, time, memory) with the oracle's judgement, and a model judged before on the same
// backends and inputs is not run again: its stored judgement counts (a memo hit).
#include <deque>
#include <map>

#include <fmt/core.h>

#include "../coverage/coverage.hpp"
#include "../reduce/cost.hpp"
#include "../store/store.hpp"
#include "bugs.hpp"
#include "stage.hpp"

namespace memo::campaign {

struct execution_options {
    std::size_t queue_limit = 8;       // models that raised coverage, waiting to run; beyond it the search waits
    bool minimise = true;
    std::int64_t max_cost = 20000000;  // models costing more per sample (reduce/cost.hpp) are not run; 0: no limit
    bug_files attach{};                // writes more files into each new bug's directory (memo-fuzz: model.onnx)
    std::uint64_t max_models = 0;      // the campaign stops once this many models were executed (0: no limit)
    /// When no model that raised coverage waits, run the newest valid model rather than idle. Off,
    /// the models run are a function of the seed and the iteration budget alone (then a repeated
    /// or resumed campaign runs exactly the same models).
    bool fill = true;
};

class execution final : public stage {
public:
    /// `lanes`: differential testers over the same backends (their own workers each).
    execution(std::vector<oracle::differential*> lanes, const registry& reg, std::filesystem::path dir, execution_options o = {})
        : bugs_(dir, o.attach), cov_(reg), o_(o) {
        if (lanes.empty()) throw error("an execution needs at least one lane");
        for (auto* d : lanes) lanes_.push_back({d, {}, false, 0});
        for (auto* x : lanes.front()->participants()) names_.emplace_back(x->name());
    }
    execution(oracle::differential& diff, const registry& reg, std::filesystem::path dir, execution_options o = {})
        : execution(std::vector<oracle::differential*>{&diff}, reg, std::move(dir), o) {}

    bool wants_any() const override { return o_.fill && queue_.empty() && idle() != nullptr; }

    void offer(const model& m, bool diverse, std::uint64_t iteration, double) override {
        if (!diverse && !wants_any()) return;
        if (o_.max_cost > 0 && execution_cost(m) > o_.max_cost) {
            ++too_costly_;
            return;
        }
        if (store_) store_->add_model(store::model_key(m), m);  // a checkpoint names waiting models by key
        queue_.push_back({m, iteration});
    }

    bool poll(double t) override {
        for (auto& l : lanes_)
            if (l.running && l.diff->ready()) complete(l, t);
        start_idle();
        return queue_.size() >= o_.queue_limit;
    }

    /// Waits for the lane that started first, then refills the idle lanes.
    void wait(double t) override {
        lane* oldest = nullptr;
        for (auto& l : lanes_)
            if (l.running && (!oldest || l.ticket < oldest->ticket)) oldest = &l;
        if (oldest) complete(*oldest, t);
        start_idle();
    }

    /// Finishes what runs; without fill, also every model still waiting, so that each model that
    /// raised coverage runs whatever the timing (a resumed campaign then ends as one run in one go).
    void drain(double t) override {
        for (;;) {
            for (auto& l : lanes_)
                if (l.running) complete(l, t);
            if (o_.fill || queue_.empty()) return;
            start_idle();
        }
    }

    std::string progress(double t) const override {
        return fmt::format(" | exec {} ({:.0f}/s){} bugs {} crash {} nan {} incons {} shape", executed_, t > 0 ? static_cast<double>(executed_) / t : 0.0,
                           hits_ ? fmt::format(", {} memo hits", hits_) : std::string(), bugs_.unique("crash"), bugs_.unique("nan"),
                           bugs_.unique("inconsistency"), bugs_.unique("shape"));
    }

    void write_stats(io::json& s) const override {
        s["backends"] = names_;
        s["models_executed"] = executed_;
        s["models_over_cost"] = too_costly_;
        s["models_single_backend"] = single_backend_;
        s["max_cost"] = o_.max_cost;
        s["bugs"] = {{"crash", found_.count("crash") ? found_.at("crash") : 0},
                     {"nan", found_.count("nan") ? found_.at("nan") : 0},
                     {"inconsistency", found_.count("inconsistency") ? found_.at("inconsistency") : 0},
                     {"unique", bugs_.unique()},
                     {"unique_crash", bugs_.unique("crash")},
                     {"unique_nan", bugs_.unique("nan")},
                     {"unique_inconsistency", bugs_.unique("inconsistency")},
                     {"unique_shape", bugs_.unique("shape")},
                     {"suppressed_rounding", suppressed_},
                     {"all_backends_failed", all_failed_}};
        io::json per = io::json::object();
        for (const auto& [name, c0] : per_backend_) {
            auto c = c0;
            c.restarts = 0;
            for (const auto& l : lanes_)
                for (auto* x : l.diff->participants())
                    if (x->name() == name) c.restarts += x->restarts();
            io::json st = io::json::object();
            for (std::size_t k = 0; k < c.status.size(); ++k)
                if (c.status[k]) st[std::string(run_status_names[k])] = c.status[k];
            per[name] = {{"runs", c.runs}, {"status", st}, {"ms_total", c.ms}, {"ms_mean", c.runs ? c.ms / static_cast<double>(c.runs) : 0.0},
                         {"peak_kb_max", c.peak_kb}, {"restarts", c.restarts}};
        }
        s["executions"] = per;
        io::json cov = io::json::object();
        for (auto k : all_criteria) cov[std::string(name_of(k))] = {{"covered", cov_.covered(k)}, {"total", cov_.total(k)}};
        s["coverage_executed"] = cov;
        s["memo"] = {{"models_run", runs_}, {"hits", hits_}, {"saved_seconds", saved_ms_ / 1000.0}};
    }

    void open(store::campaign_store& st, const io::json* resumed) override {
        store_ = &st;
        for (auto& l : lanes_) l.diff->set_trace(true);
        if (resumed) restore(*resumed);
    }

    io::json save() const override {
        io::json pending = io::json::array();
        std::vector<const lane*> running;
        for (const auto& l : lanes_)
            if (l.running) running.push_back(&l);
        std::sort(running.begin(), running.end(), [](const lane* a, const lane* b) { return a->ticket < b->ticket; });
        for (const auto* l : running) pending.push_back({store::model_key(l->current.m), l->current.iteration});
        for (const auto& p : queue_) pending.push_back({store::model_key(p.m), p.iteration});
        io::json per = io::json::object();
        for (const auto& [name, c] : per_backend_) per[name] = {{"runs", c.runs}, {"status", c.status}, {"ms", c.ms}, {"peak_kb", c.peak_kb}};
        return {{"executed", executed_}, {"suppressed", suppressed_}, {"all_failed", all_failed_}, {"too_costly", too_costly_},
                {"single_backend", single_backend_}, {"runs", runs_}, {"hits", hits_}, {"saved_ms", saved_ms_}, {"found", found_},
                {"known", known_}, {"per_backend", per}, {"coverage", cov_.save()}, {"pending", pending}};
    }

    std::uint64_t executed() const noexcept override { return executed_; }
    bool done() const override { return o_.max_models && executed_ >= o_.max_models; }
    const bug_store& store() const noexcept { return bugs_; }
    std::uint64_t memo_hits() const noexcept { return hits_; }
    /// Models run on the backends by this campaign (memo hits excluded).
    std::uint64_t models_run() const noexcept { return runs_; }

private:
    struct pending {
        model m;
        std::uint64_t iteration = 0;
    };
    struct counters {
        std::uint64_t runs = 0, restarts = 0;
        std::array<std::uint64_t, run_status_count> status{};
        double ms = 0;
        std::int64_t peak_kb = 0;
    };

    struct lane {
        oracle::differential* diff;
        pending current;
        bool running;
        std::uint64_t ticket;  // order of starting, for wait()
    };

    const lane* idle() const {
        for (const auto& l : lanes_)
            if (!l.running) return &l;
        return nullptr;
    }

    void start_idle() {
        for (auto& l : lanes_) {
            if (l.running) continue;
            while (!queue_.empty() && memoised(queue_.front())) queue_.pop_front();
            if (queue_.empty()) return;
            l.current = std::move(queue_.front());
            queue_.pop_front();
            l.diff->begin(l.current.m);
            l.running = true;
            l.ticket = ++tickets_;
        }
    }

    /// The store's key for a model's judgement: the backends and the inputs matter besides the model.
    std::string inputs_key() const { return store::inputs_text(lanes_.front().diff->inputs()); }
    std::string backends_key() const {
        std::string s;
        for (const auto& n : names_) s += (s.empty() ? "" : ",") + n;
        return s;
    }

    /// A model judged before counts as executed, with its stored judgement, and is not run.
    bool memoised(const pending& p) {
        if (!store_) return false;
        const auto j = store_->find_judgement(store::model_key(p.m), inputs_key(), backends_key());
        if (!j) return false;
        ++hits_;
        saved_ms_ += j->ms;
        if (j->kind == "skipped") {
            ++single_backend_;
            return true;
        }
        ++executed_;
        cov_.add(p.m);
        if (j->kind != "none") {
            ++found_[j->kind];
            if (const auto k = oracle::kind_from(j->kind); k != oracle::kind::none) bugs_.count(k, j->signature);
        }
        return true;
    }

    /// Every run of the model, and the oracle's judgement of it, into the store.
    void record(const model& m, const std::vector<oracle::observation>& obs, bool skipped, oracle::kind what, const std::string& signature) {
        if (!store_) return;
        const auto key = store::model_key(m);
        const auto inputs = inputs_key();
        store_->add_model(key, m);
        double ms = 0;
        for (const auto& ob : obs) {
            if (skipped) break;
            store::execution_record e;
            e.model = key, e.backend = ob.backend, e.inputs = inputs, e.status = ob.result.status;
            e.outputs = store::digest_of(ob.result.outputs);
            e.nodes = ob.nodes;
            e.ms = ob.result.ms, e.peak_kb = ob.result.peak_kb, e.message = ob.result.message;
            store_->add_execution(e);
            ms += ob.result.ms;
        }
        const std::string kind = skipped ? "skipped" : std::string(oracle::name_of(what));
        store_->add_judgement(key, inputs, backends_key(), {kind, signature, ms});
    }

    void restore(const io::json& j) {
        executed_ = j.at("executed"), suppressed_ = j.at("suppressed"), all_failed_ = j.at("all_failed"), too_costly_ = j.at("too_costly");
        single_backend_ = j.at("single_backend"), runs_ = j.at("runs"), hits_ = j.at("hits"), saved_ms_ = j.at("saved_ms");
        j.at("found").get_to(found_);
        j.at("known").get_to(known_);
        const auto& per = j.at("per_backend");
        for (auto it = per.begin(); it != per.end(); ++it) {
            auto& c = per_backend_[it.key()];
            c.runs = it.value().at("runs"), c.ms = it.value().at("ms"), c.peak_kb = it.value().at("peak_kb");
            it.value().at("status").get_to(c.status);
        }
        cov_.restore(j.at("coverage"));
        for (const auto& p : j.at("pending")) {
            auto m = store_->find_model(p.at(0).get<std::uint64_t>(), cov_.space().layers());
            if (m) queue_.push_back({std::move(*m), p.at(1).get<std::uint64_t>()});
        }
    }

    void complete(lane& l, double t) {
        l.running = false;
        oracle::differential& diff = *l.diff;
        const pending& cur = l.current;
        oracle::verdict v = diff.finish();
        if (diff.last_skipped()) {
            ++single_backend_;
            record(cur.m, diff.observations(), true, v.what, {});
            return;
        }
        ++executed_;
        ++runs_;
        cov_.add(cur.m);
        const auto obs = diff.observations();
        for (std::size_t i = 0; i < obs.size(); ++i) {
            auto& c = per_backend_[obs[i].backend];
            ++c.runs;
            ++c.status[static_cast<std::size_t>(obs[i].result.status)];
            c.ms += obs[i].result.ms;
            c.peak_kb = std::max(c.peak_kb, obs[i].result.peak_kb);
        }
        if (v.all_failed) ++all_failed_;
        if (!v) {
            if (diff.last_suppressed()) ++suppressed_;
            record(cur.m, obs, false, v.what, {});
            return;
        }
        bug_report b;
        b.original = cur.m;
        b.observations = obs;
        b.inputs = diff.inputs();
        b.iteration = cur.iteration;
        b.seconds = t;
        b.v = v;
        b.minimal = cur.m;
        // A bug seen before (same first sighting signature) is counted, not minimised again.
        const std::string first = oracle::signature(v, cur.m);
        ++found_[std::string(oracle::name_of(v.what))];
        if (const auto it = known_.find(first); it != known_.end()) {
            bugs_.count(v.what, it->second);
            record(cur.m, obs, false, v.what, it->second);
            return;
        }
        if (o_.minimise) {
            auto small = diff.minimise(cur.m, v);
            b.minimal = std::move(small.m);
            b.v = small.v;
            b.minimise_checks = small.checks;
        }
        // The stored signature is the minimal model's: its non-default parameters are those that matter.
        b.signature = oracle::signature(b.v, b.minimal);
        known_.emplace(first, b.signature);
        bugs_.record(b, names_);
        record(cur.m, obs, false, v.what, b.signature);
    }

    std::vector<lane> lanes_;
    std::uint64_t tickets_ = 0;
    bug_store bugs_;
    store::campaign_store* store_ = nullptr;  // the campaign's, once open()
    memo_coverage cov_;
    execution_options o_;
    std::vector<std::string> names_;
    std::deque<pending> queue_;
    std::uint64_t executed_ = 0, suppressed_ = 0, all_failed_ = 0, too_costly_ = 0, single_backend_ = 0;
    std::uint64_t runs_ = 0, hits_ = 0;  // models run on the backends; models whose stored judgement counted instead
    double saved_ms_ = 0;                // the backends' time those judgements took when they were made
    std::map<std::string, std::uint64_t> found_;
    std::map<std::string, std::string> known_;  // first-sighting signature -> stored signature
    std::map<std::string, counters> per_backend_;
};

}  // namespace memo::campaign
