#pragma once
// One suite, over every backend, of agreement with the reference interpreter (tests/torch,
// tests/cuda, tests/onnx, tests/tfjs, tests/keras, tests/pytorch): random single-layer models of
// each layer class, run on the backend's lanes and judged against the reference, a table per
// library of what ran, was declined and differs, and the checks on it; and LeNet-5's every node and
// teacher forcing. A backend passes only what is its own: how its lanes run a model, which models
// it takes, the precisions and tolerances it is held to, its known findings, what its tables must
// reach.
#include <memo/backends/reference/interpreter.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "compare.hpp"
#include "support.hpp"

namespace test {

/// LeNet-5 as MEMO's seed models have it: what the backends' every-node and worker tests run.
inline const memo::model& lenet() {
    static const auto m = memo::io::load_keras(MEMO_TEST_DATA_DIR "/memo/synthesized_models/lenet5-mnist_orig-simplified.json", reg());
    return m;
}

/// Where a library is known to differ from the reference, each with why (docs/findings.md): a key
/// that is a class ("ReLU") holds on every lane, one of a lane and a class ("tvm/ELU") on that lane.
using findings = std::map<std::string, std::string, std::less<>>;

/// Why `lane` may differ from the reference on class `cls`, or nullptr: it must agree.
inline const std::string* known_finding(const findings& known, std::string_view lane, std::string_view cls) {
    if (const auto it = known.find(std::string(lane) + "/" + std::string(cls)); it != known.end()) return &it->second;
    if (const auto it = known.find(cls); it != known.end()) return &it->second;
    return nullptr;
}

/// How close to the reference a run must come: within `floor`, or within `drift_times` what
/// rounding the inputs to the compared dtype moves the reference's float64 result (a float32 run of
/// an ill-conditioned model, an exponential recurrence, drifts past 1e-4 in any implementation).
struct tolerance {
    double floor = 1e-4;
    double drift_times = 0;        // 0: the floor alone
    std::uint64_t drift_seed = 7;  // draws the signs of the inputs' nudges
};

/// The tolerance for an output of the dtype compared (the run's precision, or the model's output's).
using tolerance_rule = std::function<tolerance(memo::dtype)>;

inline tolerance_rule always(tolerance t) {
    return [t](memo::dtype) { return t; };
}

/// What a lane's decline of a model at a step comes to.
enum class on_decline {
    counted,     // counted; the model's next step runs
    ends_model,  // counted; the model's later steps do not run on that lane
    fails,       // a failure: the lane must run every model at this step
};

/// One run of each model on each lane, and how it is judged.
struct precision_step {
    std::string label{};                     // names the step's column of largest errors and its failures ("f64"); empty: "error"
    std::optional<memo::dtype> precision{};  // every node computed in it; none: in the model's own dtypes
    /// Held to the reference, run in the same precision, by this rule. Empty: not compared; the
    /// output must then have the model's dims, its dtype and only values of that dtype.
    tolerance_rule within = always({});
    on_decline decline = on_decline::counted;
    bool skip_non_finite = false;  // an output with a NaN or infinity, the lane's or the reference's, is not judged (16-bit overflows)
};

/// Runs a model on a lane: the model, its inputs, the run's options.
using runner = std::function<memo::run_result(const memo::model&, std::span<const memo::tensor>, const memo::run_options&)>;

/// A runner over `b`, an executor or a backend in process, which must outlive it.
template <class Backend>
runner runs_on(Backend& b) {
    return [&b](const memo::model& m, std::span<const memo::tensor> in, const memo::run_options& o) { return b.run(m, in, o); };
}

/// One way a backend runs models: its library, one of its settings, one of its kernel sets.
struct lane {
    std::string name{};  // in failures, in findings ("name/Class"), and as its table's title
    runner run{};
    std::string table{};         // another lane's table its runs count in (one library's kernel sets); empty: its own
    bool smallest_only = false;  // runs only each class's model with the fewest input elements (a compiler's seconds a model)
};

/// One step's runs of one class's models on one table's lanes.
struct step_tally {
    int runs = 0, declined = 0;
    double worst = -1;  // the largest error judged (-1: none measured)
};

/// One class in one table.
struct agreement_row {
    std::vector<step_tally> steps;
    int differ = 0;    // runs that differ from the reference: each a known finding, or a failure
    int unjudged = 0;  // runs the reference could not judge (no kernel of the class; values past the dtype's range)
    double ms = 0;     // the slowest run
    std::string why;   // the last decline's reason
};

/// Every table: its title -> class -> row.
using agreement_tables = std::map<std::string, std::map<std::string, agreement_row>, std::less<>>;

class verdicts;

/// Runs a model on every lane and says what each did, by a rule of its own (the differential
/// oracle's, over all lanes at once).
using judge_fn = std::function<void(const memo::model&, verdicts&)>;

/// What a backend's agreement test passes: what to draw, where to run it, how to judge, and what
/// its tables must reach.
struct agreement {
    std::uint64_t seed = 0;
    int models_per_class = 1;
    int draws_per_class = 0;                                // draws to find models_per_class that `takes` (0: models_per_class, each taken)
    std::function<bool(const memo::layer_def&)> classes{};  // of the registry's but InputLayer, those to draw (empty: all)
    std::function<void(memo::model&, int draw)> prepare{};  // changes each drawn model (empty: none)
    std::function<bool(const memo::model&)> takes{};        // the models the lanes are given (empty: all)
    std::function<void(const memo::model&)> before{};       // checks each model before it runs (empty: none)
    std::vector<lane> lanes{};
    std::vector<precision_step> steps{precision_step{}};
    judge_fn judge{};  // empty: each lane runs each step, judged against the reference
    findings known{};
    int min_classes = 0;                                   // classes run, in each table
    bool every_class_compared = false;                     // each class has a model compared with the reference, in each table
    int runs_per_decline = 0;                              // runs outnumber declines by more than this many times over (0: no bound)
    std::pair<std::string, std::string> record_classes{};  // properties counting the classes compared with the reference and not
    bool print_agreeing_rows = true;                       // false: a table lists only classes declined or differing
};

/// What a judge says of one model of class `cls`, lane by lane, into the tables.
class verdicts {
public:
    verdicts(agreement_tables& tables, const agreement& a, std::string cls) : tables_(tables), a_(a), cls_(std::move(cls)) {}

    void declined(std::string_view lane, std::size_t step, std::string why) {
        auto& r = row(lane);
        ++r.steps.at(step).declined;
        r.why = std::move(why);
    }
    /// A run not declined, with its error (-1: none measured).
    void ran(std::string_view lane, std::size_t step, double error = -1) {
        auto& t = row(lane).steps.at(step);
        ++t.runs;
        t.worst = std::max(t.worst, error);
    }
    void unjudged(std::string_view lane) { ++row(lane).unjudged; }
    void took(std::string_view lane, double ms) {
        auto& r = row(lane);
        r.ms = std::max(r.ms, ms);
    }
    /// A run that differs from the reference: a failure unless the lane is known to differ on the class.
    void differs(std::string_view lane, const std::string& what) {
        ++row(lane).differ;
        if (!known_finding(a_.known, lane, cls_)) ADD_FAILURE() << lane << ": " << what;
    }

private:
    agreement_row& row(std::string_view lane) {
        std::string_view title = lane;
        for (const auto& l : a_.lanes)
            if (l.name == lane && !l.table.empty()) title = l.table;
        auto& r = tables_[std::string(title)][cls_];
        r.steps.resize(a_.steps.size());
        return r;
    }

    agreement_tables& tables_;
    const agreement& a_;
    std::string cls_;
};

namespace detail {

inline std::string step_name(const precision_step& s) { return s.label.empty() ? "error" : s.label; }

/// Each lane runs `m` at each step; a step with a tolerance is judged against the reference run
/// in the same precision.
inline void judge_against_reference(memo::reference::interpreter& ref, const agreement& a, const memo::model& m, const std::vector<const lane*>& lanes,
                                    verdicts& v) {
    if (!ref.supports(m)) {  // nothing to judge by
        for (const auto* l : lanes) v.unjudged(l->name);
        return;
    }
    const auto in = memo::make_inputs(m);
    std::vector<std::optional<memo::run_result>> wants(a.steps.size());
    std::optional<memo::run_result> truth;  // the reference in float64: what drift is measured from
    for (const auto* l : lanes) {
        SCOPED_TRACE(l->name);
        for (std::size_t s = 0; s < a.steps.size(); ++s) {
            const auto& step = a.steps[s];
            memo::run_options o;
            o.precision = step.precision;
            const auto start = std::chrono::steady_clock::now();
            const auto got = l->run(m, in, o);
            v.took(l->name, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
            if (got.status == memo::run_status::unsupported) {
                if (step.decline == on_decline::fails) {
                    ADD_FAILURE() << l->name << ": " << step_name(step) << ": declined: " << got.message;
                    continue;
                }
                v.declined(l->name, s, got.message);
                if (step.decline == on_decline::ends_model) break;
                continue;
            }
            if (!got.ok()) {
                v.ran(l->name, s, std::numeric_limits<double>::infinity());
                v.differs(l->name, step_name(step) + ": " + std::string(memo::name_of(got.status)) + " " + got.message);
                continue;
            }
            const auto& y = got.outputs.at(0);
            if (!step.within) {
                EXPECT_EQ(y.dims, memo::concrete(m.nodes.back().out, 2)) << step_name(step);
                EXPECT_EQ(y.type, m.nodes.back().type) << step_name(step);
                for (double x : y.data)
                    if (!std::isnan(x)) {
                        ASSERT_EQ(memo::round_to(y.type, x), x) << step_name(step);
                    }
                v.ran(l->name, s);
                continue;
            }
            if (!wants[s]) wants[s] = ref.run(m, in, o);
            ASSERT_TRUE(wants[s]->ok()) << wants[s]->message;
            const auto& w = wants[s]->outputs.at(0);
            if (step.skip_non_finite && (y.has_non_finite() || w.has_non_finite())) {
                v.unjudged(l->name);
                continue;
            }
            const memo::dtype type = step.precision.value_or(m.nodes.back().type);
            const tolerance t = step.within(type);
            double drift = 0;
            if (t.drift_times > 0) {
                if (!truth) truth = ref.run(m, in, {false, {}, memo::dtype::float64});
                ASSERT_TRUE(truth->ok()) << truth->message;
                drift = input_rounding_drift(ref, m, in, truth->outputs.at(0), memo::unit_roundoff(type), t.drift_seed);
            }
            const double e = relative_error(y, w), bound = std::max(t.floor, t.drift_times * drift);
            v.ran(l->name, s, e);
            if (y.dims == w.dims && e <= bound) continue;  // other dims are a difference whatever the drift
            std::ostringstream what;
            what << step_name(step) << ": differs from the reference by " << e << " (bound " << bound;
            if (t.drift_times > 0) what << "; rounding the inputs to " << memo::name_of(type) << " moves the float64 result by " << drift;
            what << ")";
            v.differs(l->name, what.str());
        }
    }
}

/// The tables, printed, and what they must reach.
inline void check_tables(const agreement& a, const agreement_tables& tables, const std::vector<std::string>& visited) {
    std::vector<std::string> titles;
    for (const auto& l : a.lanes) {
        const auto& title = l.table.empty() ? l.name : l.table;
        if (std::find(titles.begin(), titles.end(), title) == titles.end()) titles.push_back(title);
    }
    const auto compared = [&](const agreement_row& t) {
        int n = 0;
        for (std::size_t s = 0; s < a.steps.size(); ++s) n += a.steps[s].within ? t.steps[s].runs : 0;
        return n;
    };
    static const std::map<std::string, agreement_row> empty;
    int all_runs = 0, all_declined = 0;
    std::vector<std::string> compared_classes;
    for (const auto& title : titles) {
        const auto it = tables.find(title);
        const auto& rows = it == tables.end() ? empty : it->second;
        std::printf("\n%s\n%-26s %5s %5s %6s %8s", title.c_str(), "layer", "runs", "decl", "differ", "unjudged");
        for (const auto& s : a.steps)
            if (s.within) std::printf(" %10s", ("max " + step_name(s)).c_str());
        std::printf(" %9s  %s\n", "max ms", "declined because / known finding");
        int classes = 0, runs = 0, declined = 0, differ = 0, unjudged = 0;
        double ms = 0;
        for (const auto& [name, t] : rows) {
            int class_runs = 0, class_declined = 0;
            for (const auto& s : t.steps) {
                class_runs += s.runs;
                class_declined += s.declined;
            }
            classes += class_runs > 0;
            if (compared(t) > 0 && std::find(compared_classes.begin(), compared_classes.end(), name) == compared_classes.end())
                compared_classes.push_back(name);
            runs += class_runs;
            declined += class_declined;
            differ += t.differ;
            unjudged += t.unjudged;
            ms += t.ms;
            if (!a.print_agreeing_rows && class_declined == 0 && t.differ == 0) continue;
            std::printf("%-26s %5d %5d %6d %8d", name.c_str(), class_runs, class_declined, t.differ, t.unjudged);
            for (std::size_t s = 0; s < a.steps.size(); ++s) {
                if (!a.steps[s].within) continue;
                if (t.steps[s].worst < 0) std::printf(" %10s", "-");
                else std::printf(" %10.2e", t.steps[s].worst);
            }
            const auto* known = known_finding(a.known, title, name);
            std::printf(" %9.0f  %s\n", t.ms, class_declined ? t.why.c_str() : known && t.differ ? known->c_str() : "");
        }
        std::printf("%s: %d layer classes run, %d runs, %d differ (each a known finding), %d declined, %d unjudged; slowest run of each class %.0f ms in all\n",
                    title.c_str(), classes, runs, differ, declined, unjudged, ms);
        all_runs += runs;
        all_declined += declined;
        if (a.min_classes > 0) {
            EXPECT_GE(classes, a.min_classes) << title;
        }
        if (a.every_class_compared)
            for (const auto& cls : visited) {
                const auto row = rows.find(cls);
                EXPECT_TRUE(row != rows.end() && compared(row->second) > 0) << title << ": " << cls << ": no model of it was compared";
            }
    }
    if (a.runs_per_decline > 0) {
        EXPECT_GT(all_runs, a.runs_per_decline * all_declined);
    }
    if (!a.record_classes.first.empty()) {
        const int n = static_cast<int>(compared_classes.size());
        std::printf("%d classes compared with the reference, %d not\n", n, static_cast<int>(visited.size()) - n);
        ::testing::Test::RecordProperty(a.record_classes.first, n);
        ::testing::Test::RecordProperty(a.record_classes.second, static_cast<int>(visited.size()) - n);
    }
}

}  // namespace detail

/// Every layer class `a` draws, on every lane of `a`, judged against the reference; the tables
/// printed and checked.
inline void agree_with_reference(const agreement& a) {
    memo::reference::interpreter ref;
    memo::rng r(a.seed);
    agreement_tables tables;
    std::vector<std::string> visited, untaken;
    const int draws = a.draws_per_class > 0 ? a.draws_per_class : a.models_per_class;
    for (const auto& L : reg()) {
        if (L.arity.max == 0 || (a.classes && !a.classes(L))) continue;
        visited.emplace_back(L.name);
        std::vector<memo::model> taken;
        for (int k = 0; k < draws && static_cast<int>(taken.size()) < a.models_per_class; ++k) {
            auto m = random_layer_model(L, r);
            ASSERT_TRUE(m) << L.name;
            if (a.prepare) a.prepare(*m, k);
            if (!a.takes || a.takes(*m)) taken.push_back(std::move(*m));
        }
        if (taken.empty()) {
            untaken.emplace_back(L.name);
            continue;
        }
        const auto elements = [](const memo::model& m) { return m.nodes.front().out.elements(); };
        const auto smallest = std::min_element(taken.begin(), taken.end(), [&](const auto& x, const auto& y) { return elements(x) < elements(y); });
        for (const auto& m : taken) {
            SCOPED_TRACE(describe(m));
            if (a.before) a.before(m);
            if (::testing::Test::HasFatalFailure()) return;
            verdicts v(tables, a, std::string(L.name));
            if (a.judge) {
                a.judge(m, v);
            } else {
                std::vector<const lane*> on;
                for (const auto& l : a.lanes)
                    if (!l.smallest_only || &m == &*smallest) on.push_back(&l);
                detail::judge_against_reference(ref, a, m, on, v);
            }
            if (::testing::Test::HasFatalFailure()) return;
        }
    }
    detail::check_tables(a, tables, visited);
    if (!untaken.empty())
        std::printf("no model drawn of these classes was taken: %s\n", listed(std::vector<std::string_view>(untaken.begin(), untaken.end())).c_str());
}

/// Above what `every_node_and_teacher_forcing` checks of every lane, what a lane's every-node run
/// may differ from the reference's float64 by, node by node (0: not checked).
struct every_node_options {
    double every_node_within = 0;
};

/// LeNet-5 runs on each lane like the reference; every node's output and teacher forcing (each
/// layer fed the float64 reference's outputs rounded to float32) come back one per node; a run in
/// float64 is declined (the lanes run models in their own dtypes only).
inline void every_node_and_teacher_forcing(const std::vector<lane>& lanes, const every_node_options& o = {}) {
    memo::reference::interpreter ref;
    const auto& m = lenet();
    const auto in = memo::make_inputs(m);
    const auto truth = ref.run(m, in, {true, {}, memo::dtype::float64});
    ASSERT_TRUE(truth.ok());
    auto fed = truth.outputs;
    for (auto& t : fed)
        for (auto& v : t.data) v = memo::round_to(memo::dtype::float32, v);
    for (const auto& l : lanes) {
        SCOPED_TRACE(l.name);
        const auto plain = l.run(m, in, {});
        ASSERT_TRUE(plain.ok()) << plain.message;
        ASSERT_EQ(plain.outputs.size(), m.outputs.size());
        EXPECT_LE(relative_error(plain.outputs[0], truth.outputs[static_cast<std::size_t>(m.outputs[0])]), 1e-4);
        const auto every = l.run(m, in, {true, {}, {}});
        ASSERT_TRUE(every.ok()) << every.message;
        ASSERT_EQ(every.outputs.size(), m.size());
        const auto forced = l.run(m, in, {true, fed, {}});
        ASSERT_TRUE(forced.ok()) << forced.message;
        ASSERT_EQ(forced.outputs.size(), m.size());
        for (std::size_t i = 0; i < m.size(); ++i) {
            EXPECT_EQ(every.outputs[i].dims, truth.outputs[i].dims) << i;
            if (o.every_node_within > 0) {
                EXPECT_LE(relative_error(every.outputs[i], truth.outputs[i]), o.every_node_within) << "node " << i;
            }
            EXPECT_LE(relative_error(forced.outputs[i], truth.outputs[i]), 1e-5) << "node " << i;
        }
        EXPECT_EQ(l.run(m, in, {false, {}, memo::dtype::float64}).status, memo::run_status::unsupported);
    }
}

}  // namespace test
