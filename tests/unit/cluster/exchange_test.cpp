// The exchange between the ranks of one campaign, over a communicator of threads (one per rank):
// merged coverage is the union of what the ranks covered themselves, models move into the seed
// pools they are new to, and rank 0 stores each bug once with every rank's sightings. (The same
// over MPI processes is tests/cli/mpi.sh's.) Sending a rank's bugs again, as a resumed rank
// does, counts nothing twice.
#include <barrier>
#include <filesystem>
#include <thread>

#include <memo/cluster/exchange.hpp>
#include <memo/search/search.hpp>

#include "../support.hpp"

namespace test_cluster_exchange_test {

namespace {

/// N ranks as threads: each collective writes its rank's slot, waits for all, reads, waits again.
class thread_world {
public:
    explicit thread_world(int n) : n_(n), barrier_(n), bytes_(static_cast<std::size_t>(n)), words_(static_cast<std::size_t>(n)) {}

    class comm final : public memo::cluster::communicator {
    public:
        comm(thread_world& w, int rank) : w_(w), rank_(rank) {}
        int rank() const override { return rank_; }
        int size() const override { return w_.n_; }
        void bitwise_or(std::vector<std::uint64_t>& words) override {
            reduce(words, [](std::uint64_t a, std::uint64_t b) { return a | b; });
        }
        void sum(std::vector<std::uint64_t>& values) override {
            reduce(values, [](std::uint64_t a, std::uint64_t b) { return a + b; });
        }
        std::vector<std::string> all_gather(const std::string& bytes) override {
            w_.bytes_[static_cast<std::size_t>(rank_)] = bytes;
            w_.barrier_.arrive_and_wait();
            auto r = w_.bytes_;
            w_.barrier_.arrive_and_wait();
            return r;
        }
        std::vector<std::string> gather(const std::string& bytes) override {
            auto r = all_gather(bytes);
            return rank_ == 0 ? r : std::vector<std::string>{};
        }

    private:
        template <class F>
        void reduce(std::vector<std::uint64_t>& v, F f) {
            w_.words_[static_cast<std::size_t>(rank_)] = v;
            w_.barrier_.arrive_and_wait();
            for (std::size_t r = 0; r < w_.words_.size(); ++r)
                if (static_cast<int>(r) != rank_)
                    for (std::size_t i = 0; i < v.size(); ++i) v[i] = f(v[i], w_.words_[r][i]);
            w_.barrier_.arrive_and_wait();
        }
        thread_world& w_;
        int rank_;
    };

    /// Runs f(communicator&) on every rank, each on a thread of its own.
    template <class F>
    void run(F f) {
        std::vector<std::thread> ts;
        for (int r = 0; r < n_; ++r)
            ts.emplace_back([this, r, &f] {
                comm c(*this, r);
                f(c);
            });
        for (auto& t : ts) t.join();
    }

private:
    int n_;
    std::barrier<> barrier_;
    std::vector<std::string> bytes_;
    std::vector<std::vector<std::uint64_t>> words_;
};

using memo_search = memo::search<memo::model, memo::mutation::memo_operators, memo::memo_coverage, memo::mh_selector>;

std::vector<memo::model> seeds_of(const char* name) {
    return {memo::io::load_keras(std::string(MEMO_TEST_DATA_DIR) + "/memo/synthesized_models/" + name, test::reg())};
}

struct temp_dir {
    std::filesystem::path path = std::filesystem::temp_directory_path() / ("memo-exchange-" + std::to_string(::getpid()) + "-" + std::to_string(++count()));
    temp_dir() { std::filesystem::create_directories(path); }
    ~temp_dir() { std::filesystem::remove_all(path); }
    static int& count() {
        static int n = 0;
        return n;
    }
};

/// A bug directory as a rank's execution stage leaves it: bug.json with a count, and a model.
void write_bug(const std::filesystem::path& campaign, const std::string& key, int count) {
    const auto dir = campaign / "bugs" / key;
    std::filesystem::create_directories(dir);
    memo::io::write_file((dir / "bug.json").string(), memo::io::json{{"kind", "nan"}, {"count", count}}.dump());
    memo::io::write_file((dir / "model.onnx").string(), std::string("\x08\x07\0\xff binary", 11));
}

}  // namespace

TEST(Exchange, MergedCoverageIsTheUnionOfTheRanksOwnAndModelsMove) {
    // Three ranks from three different seed models: after some steps and one exchange, every
    // rank's coverage is the OR of the three ranks' own items, and each adopted models of others.
    const char* names[] = {"lenet5-mnist_orig-simplified.json", "lstm2-price_orig-simplified.json", "alexnet-cifar10_orig-simplified.json"};
    thread_world world(3);
    std::vector<memo::io::json> covered(3), own(3);
    std::vector<std::size_t> adopted(3), slots(3);
    std::vector<temp_dir> dirs(3);
    world.run([&](memo::cluster::communicator& c) {
        const auto r = static_cast<std::size_t>(c.rank());
        memo::store::campaign_store st(memo::store::campaign_store::file_in(dirs[r].path.string()));
        memo_search s(seeds_of(names[r]), memo::memo_coverage(test::reg()), memo::mh_selector(0.05), 10 + r);
        memo::cluster::exchange x(c, test::reg(), {.seconds = 1, .share = 4, .max_slots = 64});
        x.seeded(s.models());
        for (int i = 0; i < 300; ++i)
            if (const auto step = s.step(); step.gain) x.found(*step.mutant, step.gain);
        const auto out = x.sync(s, st, {300, 0, 0}, r == 2, 1.0);
        EXPECT_TRUE(out.stop);  // rank 2's budget was spent: all stop
        EXPECT_EQ(x.others()[0], 600u);
        covered[r] = memo::save_coverage(s.coverage());
        own[r] = memo::save_coverage(x.own());
        adopted[r] = out.adopted;
        slots[r] = s.models().size();
        for (std::size_t k = 1; k < s.models().size(); ++k)  // an adopted model is in the store, for checkpoints
            EXPECT_TRUE(st.find_model(memo::model_key(s.models()[k]), test::reg())) << "rank " << r << " slot " << k;
    });
    for (auto k : memo::all_criteria) {
        const std::string name(memo::name_of(k));
        const auto words = own[0].at(name).get<std::vector<std::uint64_t>>().size();
        for (std::size_t w = 0; w < words; ++w) {
            std::uint64_t u = 0;
            for (int r = 0; r < 3; ++r) u |= own[r].at(name)[w].get<std::uint64_t>();
            for (int r = 0; r < 3; ++r) EXPECT_EQ(covered[r].at(name)[w].get<std::uint64_t>(), u) << name << " word " << w << " rank " << r;
        }
    }
    for (int r = 0; r < 3; ++r) {
        EXPECT_GT(adopted[r], 0u) << "rank " << r;
        EXPECT_EQ(slots[r], 1 + adopted[r]);
    }
    // Distinct seeds: each rank's own items are a strict part of the merged coverage.
    for (int r = 0; r < 3; ++r) EXPECT_NE(own[r], covered[r]) << "rank " << r;
}

TEST(Exchange, RankZeroStoresEachBugOnceWithEverySighting) {
    thread_world world(3);
    std::vector<temp_dir> dirs(3);
    write_bug(dirs[1].path, "nan/Dot-1", 2);
    write_bug(dirs[2].path, "nan/Dot-1", 3);
    write_bug(dirs[2].path, "crash/Conv2D-2", 1);
    world.run([&](memo::cluster::communicator& c) {
        const auto r = static_cast<std::size_t>(c.rank());
        memo::store::bug_store bugs(dirs[r].path);
        memo::cluster::exchange x(c, test::reg(), {}, &bugs);
        x.ship_bugs();
        if (r == 1) bugs.count(memo::oracle::kind::nan, "Dot-1");  // one more sighting since
        x.ship_bugs();
        x.ship_bugs();                                               // nothing new: nothing counted twice
        memo::cluster::exchange resumed(c, test::reg(), {}, &bugs);  // knows nothing of what x sent
        resumed.ship_bugs();                                         // sends it all again
    });
    const auto bugs = dirs[0].path / "bugs";
    const auto dot = memo::io::parse_json_file((bugs / "nan/Dot-1/bug.json").string());
    EXPECT_EQ(dot.at("count").get<int>(), 6);
    EXPECT_TRUE(dot.contains("rank"));
    EXPECT_EQ(dot.at("sightings_by_rank"), (memo::io::json{{"1", 3}, {"2", 3}}));
    EXPECT_TRUE(std::filesystem::exists(bugs / "crash/Conv2D-2/bug.json"));
    EXPECT_EQ(memo::io::read_file((bugs / "nan/Dot-1/model.onnx").string()), std::string("\x08\x07\0\xff binary", 11));
    std::size_t dirs_stored = 0;
    for (const auto& k : std::filesystem::directory_iterator(bugs))
        if (k.path().filename() != ".tmp")
            for ([[maybe_unused]] const auto& b : std::filesystem::directory_iterator(k.path())) ++dirs_stored;
    EXPECT_EQ(dirs_stored, 2u);
    memo::store::bug_store reloaded(dirs[0].path);
    EXPECT_EQ(reloaded.unique(), 2u);
}

}  // namespace test_cluster_exchange_test
