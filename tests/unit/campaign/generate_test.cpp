// A generation campaign's directory: stats.json, coverage.csv, queue/, seeds/; determinism of the
// queue for a fixed seed and iteration count; and report.html (charts drawn from the data, coverage
// recomputed from the directory equal to the search's own, a stopped campaign still reported).
// One translation unit for both: each that includes the whole search costs minutes under ASan.
#include <filesystem>
#include <fstream>
#include <regex>

#include <unistd.h>

#include <memo/campaign/generate.hpp>

#include "../support.hpp"

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
    EXPECT_EQ(header, "seconds,models,valid,executed,layer_type,layer_pair,layer_pair_connectable,layer_param,layer_param_effective,layer_input");
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

TEST(Chart, OnePathPerSeriesWithPoints) {
    using memo::report::series;
    const std::string svg = memo::report::line_chart(
        {series{"a<b", {{0, 1}, {1, 3}, {2, 4}}}, series{"c", {{0, 0}, {5, 2}}}, series{"empty", {}}}, {"t & u", "s", "n"});
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
    EXPECT_EQ(count(html, "<svg class=\"chart\""), 7u);  // one per criterion, and models per second
    EXPECT_EQ(count(html, "<tr class=\"bug\">"), 0u);
    const auto k = memo::criterion::layer_param;
    EXPECT_NE(html.find(fmt::format("Parameter values ({} of {} missing)", cov.total(k) - cov.covered(k), cov.total(k))), std::string::npos);
    EXPECT_EQ(html.find("<script"), std::string::npos);
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
