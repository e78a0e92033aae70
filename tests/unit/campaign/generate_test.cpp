// A generation campaign's directory: stats.json, coverage.csv, queue/, seeds/; determinism of the
// queue for a fixed seed and iteration count; and report.html (charts drawn from the data, coverage
// recomputed from the directory equal to the search's own, a stopped campaign still reported); and
// the campaign store (a second run executes nothing, resume equals one run in one go, SIGKILL
// included, replay flags exactly the runs a flaky backend changed).
// One translation unit for both: each that includes the whole search costs minutes under ASan.
#include <bit>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include <sys/wait.h>
#include <unistd.h>

#include <memo/campaign/generate.hpp>

#include "../backends/faulty.hpp"
#include "../support.hpp"

namespace test_campaign_generate_test {

namespace {

namespace fs = std::filesystem;

std::vector<memo::model> seeds() {
    std::vector<memo::model> out;
    for (auto name : {"lenet5-mnist_orig-simplified.json", "lstm0-sinewave_orig-simplified.json"})
        out.push_back(memo::io::load_keras(std::string(MEMO_TEST_DATA_DIR) + "/memo/synthesized_models/" + name, test::reg()));
    return out;
}

std::string queue_bytes(const fs::path& dir) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir / "queue")) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    std::string all;
    for (const auto& f : files) all += f.filename().string() + memo::io::read_file(f.string());
    return all;
}

// Under the system's temporary directory, named by process, so runs from any directory (and the
// sanitizer twin running beside this one) never write into the tree or into each other.
fs::path fresh_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("memo-test-" + std::to_string(::getpid()) + "-" + name);
    fs::remove_all(d);
    return d;
}

/// `iterations` more steps of the campaign in `dir`, checkpointed every 10 ms: a fresh one from
/// `seeds` with `fresh`'s options, or (resume) the stored one continued. Returns its stats.json.
memo::io::json steps(const fs::path& dir, std::uint64_t iterations, bool resume, std::vector<memo::model> seeds, memo::campaign::generation_options fresh) {
    auto o = std::move(fresh);
    if (resume) {
        auto r = memo::campaign::resume_options(dir.string(), test::reg());
        o = r.options;
        seeds = r.seeds;
    }
    o.out = dir.string();
    o.iterations = iterations;
    o.seconds = 1e6;
    o.quiet = true;
    o.checkpoint_seconds = 0.01;
    (void)memo::campaign::generate(seeds, test::reg(), o);
    return memo::io::parse_json_file((dir / "stats.json").string());
}

std::size_t count(const std::string& s, const std::string& what) {
    std::size_t n = 0;
    for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
}

}  // namespace

TEST(Generation, WritesItsDirectory) {
    memo::campaign::generation_options o;
    o.out = fresh_dir("gen-dir").string();
    o.iterations = 600;
    o.seconds = 60;
    o.seed = 5;
    o.quiet = true;
    const auto sum = memo::campaign::generate(seeds(), test::reg(), o);
    EXPECT_EQ(sum.generated, 600u);
    const auto stats = memo::io::parse_json_file(o.out + "/stats.json");
    for (auto key : {"seconds", "seed", "models_generated", "models_valid", "models_per_second", "coverage"}) EXPECT_TRUE(stats.contains(key)) << key;
    EXPECT_EQ(stats["models_generated"], 600);
    for (auto c : memo::all_criteria) {
        EXPECT_TRUE(stats["coverage"].contains(std::string(name_of(c))));
        EXPECT_GT(stats["coverage"][std::string(name_of(c))]["covered"].get<int>(), 0);
    }
    std::ifstream csv(o.out + "/coverage.csv");
    std::string header;
    std::getline(csv, header);
    EXPECT_EQ(header,
              "seconds,models,valid,executed,layer_type,layer_pair,layer_pair_connectable,layer_param,layer_param_effective,layer_input,graph_pair,"
              "graph_pair_connectable");
    std::size_t queued = 0;
    for (const auto& e : fs::directory_iterator(fs::path(o.out) / "queue")) {
        ++queued;
        const auto m = memo::io::load_model(e.path().string(), test::reg());  // every queue entry is a valid model
        EXPECT_TRUE(memo::validate(m));
    }
    EXPECT_EQ(queued, sum.diverse);
    EXPECT_GT(queued, 10u);
    fs::remove_all(o.out);
}

TEST(Generation, SameSeedSameQueue) {
    auto run = [](const std::string& name, std::uint64_t seed) {
        memo::campaign::generation_options o;
        o.out = fresh_dir(name).string();
        o.iterations = 500;
        o.seconds = 60;
        o.seed = seed;
        o.quiet = true;
        (void)memo::campaign::generate(seeds(), test::reg(), o);
        auto bytes = queue_bytes(o.out);
        fs::remove_all(o.out);
        return bytes;
    };
    const auto a = run("gen-a", 11), b = run("gen-b", 11), c = run("gen-c", 12);
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
}

// A stage that takes nothing and never asks the loop to wait (as the execution stage once the
// search stops finding diverse mutants, the queue never full): it counts the waits the loop makes.
class counting_stage final : public memo::campaign::stage {
public:
    std::size_t waits = 0;
    bool wants_any() const override { return false; }
    void offer(const memo::model&, std::uint64_t, bool, std::uint64_t, double) override {}
    bool poll(double) override { return false; }
    void wait(double) override { ++waits; }
    void drain(double) override {}
    std::string progress(double) const override { return {}; }
    void write_stats(memo::io::json&) const override {}
};

// A search that raised nothing for pace_after_seconds steps in slices, waiting on the stage between
// them: it keeps a core from the libraries' workers no longer. Unpaced, the loop never waits.
TEST(Generation, ASearchThatFindsNothingWaitsOnTheStageBetweenSlices) {
    auto waits = [](const std::string& name, double pace_after) {
        memo::campaign::generation_options o;
        o.out = fresh_dir(name).string();
        o.iterations = 400;
        o.seconds = 60;
        o.seed = 3;
        o.quiet = true;
        o.pace_after_seconds = pace_after;  // "nothing new for a microsecond": always, here
        o.pace_slice_ms = 0;                // a wait after every step
        counting_stage stage;
        const auto sum = memo::campaign::generate(seeds(), test::reg(), o, &stage);
        fs::remove_all(o.out);
        EXPECT_EQ(sum.generated, 400u);
        return stage.waits;
    };
    EXPECT_EQ(waits("gen-unpaced", 0), 0u);
    EXPECT_GT(waits("gen-paced", 1e-6), 100u);
}

// --coverage memo,rnn-state: the RNN-state criteria in stats.json, coverage.csv and report.html,
// and a resumed campaign that equals one run in one go (the states seen are in the checkpoint).
TEST(Generation, RnnStateCoverageIsReportedAndResumesExactly) {
    const auto whole = fresh_dir("rnn-whole"), halves = fresh_dir("rnn-halves");
    const auto rnns = memo::campaign::load_seeds("zoo:lstm0-sinewave,lstm2-price", test::reg());
    memo::campaign::generation_options fresh;
    fresh.coverage = {.rnn_state = true};
    fresh.seed = 2;
    const auto run = [&](const fs::path& dir, std::uint64_t iterations, bool resume) { return steps(dir, iterations, resume, rnns, fresh); };
    const auto a = run(whole, 200, false);
    (void)run(halves, 100, false);
    const auto c = run(halves, 100, true);
    const auto& cov = a["coverage"];
    for (const char* k :
         {"rnn_state_basic", "rnn_state_boundary", "rnn_state_weighted", "rnn_transition_basic", "rnn_transition_weighted", "rnn_states", "rnn_transitions"})
        EXPECT_TRUE(cov.contains(k)) << k;
    // The seeds are the profile, and the campaign starts from them.
    EXPECT_EQ(cov["rnn_state_basic"]["covered"], cov["rnn_state_basic"]["total"]);
    EXPECT_GT(cov["rnn_states"]["covered"].get<std::uint64_t>(), cov["rnn_state_basic"]["total"].get<std::uint64_t>())
        << "200 iterations reached no state beyond the seeds'";
    EXPECT_EQ(a["coverage_metrics"], "memo,rnn-state");
    EXPECT_EQ(c["coverage"], cov);
    EXPECT_EQ(queue_bytes(whole), queue_bytes(halves));
    const auto csv = memo::io::read_file((whole / "coverage.csv").string());
    const auto header = csv.substr(0, csv.find('\n'));
    EXPECT_NE(header.find(",rnn_states,"), std::string::npos) << header;
    EXPECT_NE(header.find(",rnn_transitions"), std::string::npos) << header;
    EXPECT_NE(memo::io::read_file((whole / "report.html").string()).find("rnn_state_boundary"), std::string::npos);
    fs::remove_all(whole);
    fs::remove_all(halves);
}

// An imported model's weights (megabytes, shared by all its mutants) are written once: the store
// and queue/ refer to them by digest, queue files read back whole through weights/, and a resumed
// campaign finds them in the store (it makes the same queue as one run in one go).
TEST(Generation, AnImportedModelsWeightsAreWrittenOnce) {
    auto imported = seeds();
    std::vector<double> values(100000);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(static_cast<float>(std::sin(static_cast<double>(i))));
    for (auto& m : imported) {
        values[0] = static_cast<double>(&m - imported.data());  // each seed's own weights
        m.nodes[1].weights = memo::give_weights({{{static_cast<std::int64_t>(values.size())}, values}});
    }
    const auto whole = fresh_dir("weights-whole"), halves = fresh_dir("weights-halves");
    memo::campaign::generation_options fresh;
    fresh.seed = 4;
    const auto run = [&](const fs::path& dir, std::uint64_t iterations, bool resume) { (void)steps(dir, iterations, resume, imported, fresh); };
    run(whole, 300, false);
    std::size_t weights_files = 0, queued = 0, with_weights = 0;
    for (const auto& e : fs::directory_iterator(whole / "weights")) weights_files += e.path().extension() == ".json";
    for (const auto& e : fs::directory_iterator(whole / "queue")) {
        ++queued;
        EXPECT_LT(fs::file_size(e.path()), 20000u) << e.path() << " holds its weights";
        const auto m = memo::io::load_model(e.path().string(), test::reg());
        for (const auto& n : m.nodes) with_weights += n.weights && n.weights->weights.at(0).values.size() == values.size();
    }
    EXPECT_EQ(weights_files, 2u);
    EXPECT_GT(queued, 10u);
    EXPECT_GT(with_weights, queued / 2);
    // The store holds each seed's weights once, not once per model (its models' JSON is a few
    // kilobytes each).
    const auto one = memo::io::weights_file_json(*imported[0].nodes[1].weights).dump().size();
    EXPECT_LT(fs::file_size(whole / "store.db"), 10 * one) << queued << " models";
    std::size_t unreadable = 0;
    (void)memo::report::replay_coverage(whole, test::reg(), &unreadable);
    EXPECT_EQ(unreadable, 0u);
    run(halves, 150, false);
    run(halves, 150, true);
    EXPECT_EQ(queue_bytes(whole), queue_bytes(halves));
    fs::remove_all(whole);
    fs::remove_all(halves);
}

TEST(Chart, OnePathPerSeriesWithPoints) {
    using memo::report::series;
    const std::string svg =
        memo::report::line_chart({series{"a<b", {{0, 1}, {1, 3}, {2, 4}}}, series{"c", {{0, 0}, {5, 2}}}, series{"empty", {}}}, {"t & u", "s", "n"});
    EXPECT_EQ(count(svg, "<path class=\"series\""), 2u);
    EXPECT_EQ(count(svg, " L"), 3u);  // 2 + 1 segments
    EXPECT_NE(svg.find("a&lt;b"), std::string::npos);
    EXPECT_NE(svg.find("t &amp; u"), std::string::npos);
    EXPECT_EQ(svg.find("a<b"), std::string::npos);
    // Every drawn coordinate lies inside the picture.
    const std::regex point(R"([ML](-?[0-9.]+) (-?[0-9.]+))");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), point); it != std::sregex_iterator(); ++it) {
        const double x = std::stod((*it)[1]), y = std::stod((*it)[2]);
        EXPECT_GE(x, 0);
        EXPECT_LE(x, 560);
        EXPECT_GE(y, 0);
        EXPECT_LE(y, 280);
    }
}

TEST(Chart, TicksAreRound) {
    using memo::report::detail::tick_step;
    EXPECT_DOUBLE_EQ(tick_step(10), 2);
    EXPECT_DOUBLE_EQ(tick_step(4489), 1000);
    EXPECT_DOUBLE_EQ(tick_step(0.3), 0.1);
    EXPECT_DOUBLE_EQ(tick_step(0), 1);
}

/// The coverage the report recomputes from seeds/ and queue/ is the search's own, criterion by
/// criterion, and the missing items it lists are exactly the rest.
TEST(Report, CoverageFromTheDirectoryIsTheSearchs) {
    memo::campaign::generation_options o;
    o.out = fresh_dir("report-cov").string();
    o.iterations = 400;
    o.seconds = 60;
    o.seed = 7;
    o.quiet = true;
    const auto sum = memo::campaign::generate(seeds(), test::reg(), o);
    const auto cov = memo::report::replay_coverage(o.out, test::reg());
    for (auto k : memo::all_criteria) EXPECT_EQ(cov.covered(k), sum.covered[static_cast<std::size_t>(k)]) << memo::name_of(k);

    const std::string html = memo::io::read_file(o.out + "/report.html");
    EXPECT_EQ(count(html, "<svg class=\"chart\""), memo::all_criteria.size() + 1);  // one per criterion, and models per second
    EXPECT_EQ(count(html, "<tr class=\"bug\">"), 0u);
    const auto k = memo::criterion::layer_param;
    EXPECT_NE(html.find(fmt::format("Parameter values ({} of {} missing)", cov.total(k) - cov.covered(k), cov.total(k))), std::string::npos);
    EXPECT_EQ(html.find("<script"), std::string::npos);
    memo::report::write_report(o.out, test::reg());  // again, from what the directory holds
    EXPECT_EQ(memo::io::read_file(o.out + "/report.html"), html);
    fs::remove_all(o.out);
}

/// A campaign stopped before its end (no stats.json, a torn last coverage.csv line) still reports.
TEST(Report, StoppedCampaignStillReports) {
    const auto dir = fresh_dir("report-stopped");
    fs::create_directories(dir);
    memo::io::write_file((dir / "coverage.csv").string(), "seconds,models,valid,layer_type\n0,0,0,3\n1,10,8,5\n2,2");
    const auto c = memo::report::read_campaign(dir);
    EXPECT_FALSE(c.stats);
    EXPECT_EQ(c.coverage.rows.size(), 2u);
    memo::report::write_report(dir, test::reg());
    const std::string html = memo::io::read_file((dir / "report.html").string());
    EXPECT_NE(html.find("No stats.json"), std::string::npos);
    EXPECT_EQ(count(html, "<path class=\"series\""), 3u);  // layer_type, models, valid
    fs::remove_all(dir);
}

TEST(Report, NotACampaignIsAClearError) {
    const auto dir = fresh_dir("report-empty");
    fs::create_directories(dir);
    try {
        memo::report::read_campaign(dir);
        FAIL() << "an empty directory was read as a campaign";
    } catch (const memo::error& e) {
        EXPECT_NE(std::string(e.what()).find("not a campaign directory"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find(dir.string()), std::string::npos);
    }
    EXPECT_THROW(memo::report::read_campaign(dir / "nowhere"), memo::error);
    fs::remove_all(dir);
}

// ---- The campaign store: memoisation, resume, replay ---------------------------------------------

namespace {

/// A campaign over the reference and a faulty copy of it (LSTM scaled: inconsistencies), run in
/// this process, with fill off so that the models run depend only on the seed and the budget.
struct bench {
    memo::in_process<memo::reference::interpreter> ref{memo::reference::interpreter(std::nullopt, "reference")};
    memo::in_process<memo::reference::interpreter> bad{test::faulty_backend(test::fault::wrong_value, "LSTM", "faulty")};
    memo::reference::interpreter truth{memo::dtype::float64};
    memo::oracle::differential diff{{&ref, &bad}, truth, test::reg()};

    memo::io::json run(const fs::path& dir, std::uint64_t iterations, bool resume = false) {
        memo::campaign::execution_options eo;
        eo.fill = false;
        eo.max_cost = 200000;
        memo::campaign::execution exec(diff, test::reg(), dir, eo);
        memo::campaign::generation_options o;
        o.max_cost = eo.max_cost;
        std::vector<memo::model> from;
        for (const auto& m : seeds()) from.push_back(memo::campaign::fit_to_cost(m, eo.max_cost / 10));
        if (resume) {
            auto r = memo::campaign::resume_options(dir.string(), test::reg());
            o = r.options;
            from = r.seeds;
        }
        o.out = dir.string();
        if (iterations) o.iterations = iterations;
        o.seconds = 1e6;
        o.seed = 3;
        o.quiet = true;
        o.checkpoint_seconds = 0.01;
        memo::campaign::generate(from, test::reg(), o, &exec);
        return memo::io::parse_json_file((dir / "stats.json").string());
    }
};

std::set<std::string> bug_dirs(const fs::path& dir) {
    std::set<std::string> out;
    if (!fs::exists(dir / "bugs")) return out;
    for (const auto& k : fs::directory_iterator(dir / "bugs"))
        if (k.path().filename() != ".tmp")
            for (const auto& b : fs::directory_iterator(k.path())) out.insert(k.path().filename().string() + "/" + b.path().filename().string());
    return out;
}

std::vector<std::pair<std::int64_t, std::int64_t>> generated_rows(const fs::path& dir) {
    memo::sqlite::database db((dir / "store.db").string());
    auto q = db.prepare("SELECT iteration, model FROM generated ORDER BY iteration");
    std::vector<std::pair<std::int64_t, std::int64_t>> rows;
    while (q.next()) rows.emplace_back(q.i64(0), q.i64(1));
    return rows;
}

}  // namespace

TEST(CampaignStore, SecondRunOnTheStoreExecutesNothing) {
    const auto dir = fresh_dir("memo-twice");
    bench b;
    const auto first = b.run(dir, 160);
    const auto bugs = bug_dirs(dir);
    const auto second = b.run(dir, 160);
    EXPECT_GT(first["memo"]["models_run"].get<int>(), 5);
    EXPECT_EQ(first["memo"]["hits"], 0);
    EXPECT_EQ(second["memo"]["models_run"], 0) << "the second run executed models the store holds";
    EXPECT_EQ(second["memo"]["hits"].get<int>(), first["memo"]["models_run"].get<int>() + first["models_single_backend"].get<int>());
    EXPECT_GT(second["memo"]["saved_seconds"].get<double>(), 0.0);
    EXPECT_EQ(second["models_executed"], first["models_executed"]);
    EXPECT_EQ(second["bugs"]["inconsistency"], first["bugs"]["inconsistency"]);
    EXPECT_FALSE(bugs.empty()) << first.dump();
    EXPECT_EQ(bug_dirs(dir), bugs);
    fs::remove_all(dir);
}

TEST(CampaignStore, ResumedCampaignEqualsOneRunInOneGo) {
    const auto whole = fresh_dir("memo-whole"), halves = fresh_dir("memo-halves");
    bench b1, b2, b3;
    const auto a = b1.run(whole, 240);
    (void)b2.run(halves, 120);
    const auto c = b3.run(halves, 120, true);
    EXPECT_EQ(c["iterations"], 240);
    EXPECT_EQ(queue_bytes(whole), queue_bytes(halves));
    EXPECT_EQ(generated_rows(whole), generated_rows(halves));
    EXPECT_EQ(a["coverage"], c["coverage"]);
    EXPECT_EQ(a["models_executed"], c["models_executed"]);
    EXPECT_EQ(a["bugs"], c["bugs"]);
    EXPECT_EQ(bug_dirs(whole), bug_dirs(halves));
    EXPECT_EQ(memo::campaign::resume_options(halves.string(), test::reg()).finished, true);
    fs::remove_all(whole);
    fs::remove_all(halves);
}

TEST(CampaignStore, KilledCampaignResumesToTheSameResult) {
    // The campaign runs in a child killed with SIGKILL at a random moment after its first
    // checkpoint; resumed here, it ends as the uninterrupted one did.
    const auto whole = fresh_dir("memo-unkilled"), killed = fresh_dir("memo-killed");
    bench b1;
    const auto a = b1.run(whole, 800);
    memo::rng r(static_cast<std::uint64_t>(::getpid()));
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        bench b;
        b.run(killed, 800);
        ::_exit(0);
    }
    while (!fs::exists(killed / "store.db") || memo::store::campaign_store(killed / "store.db").load_checkpoint() == std::nullopt) ::usleep(20000);
    ::usleep(static_cast<useconds_t>(r.uniform(0, 200000)));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    auto resumption = memo::campaign::resume_options(killed.string(), test::reg());
    if (!WIFSIGNALED(status)) GTEST_SKIP() << "the campaign finished before it was killed";
    // Killed after its last checkpoint (all 800 iterations made, the report not yet written):
    // nothing is left to resume, and a resumption with no iterations left would run unbounded.
    if (resumption.finished) GTEST_SKIP() << "the campaign was killed after its last checkpoint";
    bench b2;
    const auto c = b2.run(killed, 0, true);
    EXPECT_EQ(c["iterations"], 800);
    EXPECT_EQ(queue_bytes(whole), queue_bytes(killed));
    EXPECT_EQ(generated_rows(whole), generated_rows(killed));
    EXPECT_EQ(a["coverage"], c["coverage"]);
    EXPECT_EQ(a["models_executed"], c["models_executed"]);
    EXPECT_EQ(bug_dirs(whole), bug_dirs(killed));
    (void)resumption;
    fs::remove_all(whole);
    fs::remove_all(killed);
}

namespace {

/// The faulty backend again, but each traced run flips one bit of one node's output with
/// probability p: a library that is not deterministic. It remembers what it flipped.
class bit_flipper final : public memo::executor {
public:
    bit_flipper(memo::executor& inner, double p, std::uint64_t seed) : inner_(&inner), p_(p), r_(seed) {}
    std::string_view name() const override { return inner_->name(); }
    memo::expected<void> supports(const memo::model& m) const override { return inner_->supports(m); }
    void submit(const memo::model& m, std::span<const memo::tensor> in, const memo::run_options& o) override {
        result_ = inner_->run(m, in, o);
        if (!o.every_node || !result_.ok() || !r_.chance(p_)) return;
        std::vector<std::size_t> nonempty;
        for (std::size_t i = 0; i < result_.outputs.size(); ++i)
            if (!result_.outputs[i].data.empty()) nonempty.push_back(i);
        const std::size_t node = nonempty[r_.index(nonempty.size())];
        auto& x = result_.outputs[node].data[r_.index(result_.outputs[node].data.size())];
        x = std::bit_cast<double>(std::bit_cast<std::uint64_t>(x) ^ (std::uint64_t{1} << 40));
        flipped[memo::model_key(m)] = static_cast<int>(node);
    }
    memo::run_result collect() override { return std::move(result_); }
    std::map<std::uint64_t, int> flipped;  // model -> the node flipped

private:
    memo::executor* inner_;
    double p_;
    memo::rng r_;
    memo::run_result result_;
};

}  // namespace

TEST(CampaignStore, ReplayFlagsExactlyTheFlippedRunsAtTheirNode) {
    const auto dir = fresh_dir("memo-replay");
    bench b;
    b.run(dir, 200);
    bit_flipper flaky(b.bad, 0.3, 7);
    memo::executor* xs[] = {&b.ref, &flaky};
    memo::store::campaign_store st(memo::store::campaign_store::file_in(dir));
    const auto sum = memo::store::replay(st, test::reg(), xs);
    EXPECT_GT(sum.replayed, 20u);
    EXPECT_FALSE(flaky.flipped.empty());
    std::map<std::uint64_t, int> flagged;
    for (const auto& d : sum.divergences) {
        EXPECT_EQ(d.backend, "faulty") << "the deterministic reference diverged: " << d.what;
        flagged[d.model] = d.node;
    }
    EXPECT_EQ(flagged, flaky.flipped);
    EXPECT_EQ(sum.same + sum.divergences.size(), sum.replayed);
    EXPECT_EQ(st.divergence_count(), static_cast<std::int64_t>(flaky.flipped.size()));
    fs::remove_all(dir);
}

// A model that meets two wrong kernels (Dense and Activation scaled): the first hides the second
// in the outputs, but every node ran on the same inputs, so each is its own bug, stored with a
// minimal model that shows it alone.
TEST(CampaignBugs, TwoFaultsInOneModelAreTwoBugs) {
    const auto dir = fresh_dir("memo-two-faults");
    memo::in_process<memo::reference::interpreter> ref{memo::reference::interpreter(std::nullopt, "reference")};
    memo::in_process<memo::reference::interpreter> bad{
        test::faulty_backend(test::fault::wrong_value, std::vector<std::string>{"Dense", "Activation"}, "faulty")};
    memo::reference::interpreter truth{memo::dtype::float64};
    memo::oracle::differential diff{{&ref, &bad}, truth, test::reg()};
    memo::builder b(test::reg());
    const int d = b.add("Dense", {b.input({4})}, {{"units", std::int64_t{3}}});
    b.add("Activation", {d}, {{"activation", "tanh"}});
    const auto m = b.finish();

    const auto v = diff.check(m);
    ASSERT_EQ(v.what, memo::oracle::kind::inconsistency);
    EXPECT_EQ(v.layer, "Dense");
    ASSERT_TRUE(v.differs());
    const auto& more = v.differs()->more;
    ASSERT_EQ(more.size(), 1u);
    EXPECT_EQ(more[0].layer, "Activation");
    EXPECT_EQ(more[0].culprits, std::vector<std::string>{"faulty"});

    memo::campaign::execution_options eo;
    eo.fill = false;
    memo::campaign::execution exec(diff, test::reg(), dir, eo);
    memo::campaign::generation_options o;
    o.out = dir.string();
    o.iterations = 1;
    o.seconds = 1e6;
    o.quiet = true;
    memo::campaign::generate({m}, test::reg(), o, &exec);
    std::set<std::string> layers;
    for (const auto& bug : bug_dirs(dir)) layers.insert(bug.substr(0, bug.find('-')));
    EXPECT_TRUE(layers.count("inconsistency/Dense")) << ::testing::PrintToString(bug_dirs(dir));
    EXPECT_TRUE(layers.count("inconsistency/Activation")) << ::testing::PrintToString(bug_dirs(dir));
    fs::remove_all(dir);
}

}  // namespace test_campaign_generate_test
