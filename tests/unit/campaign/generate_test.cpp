// A generation campaign's directory: stats.json, coverage.csv, queue/, seeds/; and determinism
// of the queue for a fixed seed and iteration count.
#include <filesystem>
#include <fstream>

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
