#pragma once
// The execution stage of a campaign: the models the search generates run on the backends under
// test (each in its worker), the oracle judges them, and every bug is localised, minimised,
// deduplicated and stored before the campaign goes on. Models that raised coverage run first;
// when none waits, the newest valid model runs, so the workers never idle. Several lanes (each a
// differential tester with workers of its own) keep several models in flight.
#include <deque>
#include <map>

#include <fmt/core.h>

#include "../coverage/coverage.hpp"
#include "../reduce/cost.hpp"
#include "bugs.hpp"
#include "stage.hpp"

namespace memo::campaign {

struct execution_options {
    std::size_t queue_limit = 8;       // models that raised coverage, waiting to run; beyond it the search waits
    bool minimise = true;
    std::int64_t max_cost = 20000000;  // models costing more per sample (reduce/cost.hpp) are not run; 0: no limit
    bug_files attach{};                // writes more files into each new bug's directory (memo-fuzz: model.onnx)
    std::uint64_t max_models = 0;      // the campaign stops once this many models were executed (0: no limit)
};

class execution final : public stage {
public:
    /// `lanes`: differential testers over the same backends (their own workers each).
    execution(std::vector<oracle::differential*> lanes, const registry& reg, std::filesystem::path dir, execution_options o = {})
        : store_(dir, o.attach), cov_(reg), o_(o) {
        if (lanes.empty()) throw error("an execution needs at least one lane");
        for (auto* d : lanes) lanes_.push_back({d, {}, false, 0});
        for (auto* x : lanes.front()->participants()) names_.emplace_back(x->name());
    }
    execution(oracle::differential& diff, const registry& reg, std::filesystem::path dir, execution_options o = {})
        : execution(std::vector<oracle::differential*>{&diff}, reg, std::move(dir), o) {}

    bool wants_any() const override { return queue_.empty() && idle() != nullptr; }

    void offer(const model& m, bool diverse, std::uint64_t iteration, double) override {
        if (!diverse && !wants_any()) return;
        if (o_.max_cost > 0 && execution_cost(m) > o_.max_cost) {
            ++too_costly_;
            return;
        }
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

    void drain(double t) override {
        for (auto& l : lanes_)
            if (l.running) complete(l, t);
    }

    std::string progress(double t) const override {
        return fmt::format(" | exec {} ({:.0f}/s) bugs {} crash {} nan {} incons {} shape", executed_, t > 0 ? static_cast<double>(executed_) / t : 0.0,
                           store_.unique("crash"), store_.unique("nan"), store_.unique("inconsistency"), store_.unique("shape"));
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
                     {"unique", store_.unique()},
                     {"unique_crash", store_.unique("crash")},
                     {"unique_nan", store_.unique("nan")},
                     {"unique_inconsistency", store_.unique("inconsistency")},
                     {"unique_shape", store_.unique("shape")},
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
    }

    std::uint64_t executed() const noexcept override { return executed_; }
    bool done() const override { return o_.max_models && executed_ >= o_.max_models; }
    const bug_store& store() const noexcept { return store_; }

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
            if (queue_.empty()) return;
            if (l.running) continue;
            l.current = std::move(queue_.front());
            queue_.pop_front();
            l.diff->begin(l.current.m);
            l.running = true;
            l.ticket = ++tickets_;
        }
    }

    void complete(lane& l, double t) {
        l.running = false;
        oracle::differential& diff = *l.diff;
        const pending& cur = l.current;
        oracle::verdict v = diff.finish();
        if (diff.last_skipped()) {
            ++single_backend_;
            return;
        }
        ++executed_;
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
            store_.count(v.what, it->second);
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
        store_.record(b, names_);
    }

    std::vector<lane> lanes_;
    std::uint64_t tickets_ = 0;
    bug_store store_;
    memo_coverage cov_;
    execution_options o_;
    std::vector<std::string> names_;
    std::deque<pending> queue_;
    std::uint64_t executed_ = 0, suppressed_ = 0, all_failed_ = 0, too_costly_ = 0, single_backend_ = 0;
    std::map<std::string, std::uint64_t> found_;
    std::map<std::string, std::string> known_;  // first-sighting signature -> stored signature
    std::map<std::string, counters> per_backend_;
};

}  // namespace memo::campaign
