// The search: Metropolis-Hastings acceptance as Eq. 4 says, UpdateSeeds, and determinism.
#include <cmath>
#include <filesystem>

#include <memo/search/search.hpp>

#include "../support.hpp"

namespace test_search_search_test {

namespace {

std::vector<memo::model> small_seeds() {
    std::vector<memo::model> out;
    for (auto name : {"lenet5-mnist_orig-simplified.json", "lstm2-price_orig-simplified.json"})
        out.push_back(memo::io::load_keras(std::string(MEMO_TEST_DATA_DIR) + "/memo/synthesized_models/" + name, test::reg()));
    return out;
}

using memo_search = memo::search<memo::model, memo::mutation::memo_operators, memo::memo_coverage, memo::mh_selector>;

}  // namespace

TEST(MhSelector, AcceptsRankStepsWithProbabilityOneMinusPToTheDistance) {
    // From rank 0, a pick lands on rank k with probability proportional to (1 - p)^k.
    const double p = 0.05;
    memo::mh_selector s(p);
    std::vector<double> fitness(40);
    for (std::size_t i = 0; i < fitness.size(); ++i) fitness[i] = static_cast<double>(fitness.size() - i);  // index == rank
    memo::rng r(1);
    std::vector<double> freq(fitness.size());
    const int n = 400000;
    for (int k = 0; k < n; ++k) {
        s.set_last_rank(0);
        freq[s.pick(fitness, r)] += 1;
    }
    double z = 0;
    for (std::size_t k = 0; k < fitness.size(); ++k) z += std::pow(1 - p, static_cast<double>(k));
    for (std::size_t k : {0u, 5u, 20u, 39u}) {
        const double want = std::pow(1 - p, static_cast<double>(k)) / z;
        EXPECT_NEAR(freq[k] / n, want, want * 0.06) << "rank " << k;
    }
}

TEST(MhSelector, MovingUpTheRankingIsAlwaysAccepted) {
    // From the worst rank every proposal is at a better or equal rank, so the first is accepted:
    // picks are uniform over the ranks, whatever p is.
    memo::mh_selector s(0.5);
    const std::vector<double> fitness{3, 2, 1};
    memo::rng r(2);
    std::vector<double> freq(3);
    const int n = 30000;
    for (int k = 0; k < n; ++k) {
        s.set_last_rank(2);
        freq[s.pick(fitness, r)] += 1;
    }
    for (double f : freq) EXPECT_NEAR(f / n, 1.0 / 3, 0.02);
}

TEST(Search, SameSeedSameModels) {
    auto run = [](std::uint64_t seed) {
        memo_search s(small_seeds(), memo::memo_coverage(test::reg()), memo::mh_selector(0.05), seed);
        std::vector<std::uint64_t> hashes;
        for (int i = 0; i < 400; ++i)
            if (auto r = s.step(); r.mutant) hashes.push_back(memo::structural_hash(*r.mutant));
        return hashes;
    };
    const auto a = run(7), b = run(7), c = run(8);
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
}

TEST(Search, DiverseMutantReplacesItsParent) {
    memo_search s(small_seeds(), memo::memo_coverage(test::reg()), memo::mh_selector(0.05), 3);
    EXPECT_EQ(s.seed_count(), 2u * memo::mutation::memo_operators::size);
    for (int i = 0; i < 200; ++i) {
        const auto before = s.coverage().covered();
        const auto r = s.step();
        EXPECT_EQ(r.valid, r.mutant != nullptr);
        if (!r.gain) {
            EXPECT_EQ(s.coverage().covered(), before);
            continue;
        }
        EXPECT_GT(r.gain, 0u);
        EXPECT_GT(s.coverage().covered(), before);
        // UpdateSeeds: every seed of the slot now holds the mutant.
        EXPECT_EQ(memo::structural_hash(s.models()[r.slot]), memo::structural_hash(*r.mutant));
        EXPECT_TRUE(memo::validate(s.models()[r.slot]));
    }
}

TEST(Search, RandomSelectorRuns) {
    memo::search<memo::model, memo::mutation::lemon_operators, memo::memo_coverage, memo::random_selector> s(small_seeds(), memo::memo_coverage(test::reg()),
                                                                                                             memo::random_selector{}, 1);
    int valid = 0;
    for (int i = 0; i < 200; ++i) valid += s.step().valid;
    EXPECT_GT(valid, 100);
}

/// A filter keeps the search on the models it accepts: no rejected mutant is ever valid, kept or
/// offered, and the steps it rejects count as invalid.
TEST(Search, FilterRejectsMutants) {
    auto float32_only = [](const memo::model& m) -> memo::expected<void> {
        for (const auto& n : m.nodes)
            if (n.type != memo::dtype::float32) return memo::fail("not float32");
        return {};
    };
    memo_search plain(small_seeds(), memo::memo_coverage(test::reg()), memo::mh_selector(0.05), 4);
    memo_search filtered(small_seeds(), memo::memo_coverage(test::reg()), memo::mh_selector(0.05), 4);
    int rejected = 0;
    filtered.set_filter([&](const memo::model& m) {
        auto ok = float32_only(m);
        rejected += !ok;
        return ok;
    });
    int plain_other_dtype = 0, valid = 0;
    for (int i = 0; i < 400; ++i) {
        const auto a = plain.step();
        if (a.mutant && !float32_only(*a.mutant)) ++plain_other_dtype;
        const auto b = filtered.step();
        valid += b.valid;
        if (b.mutant) {
            EXPECT_TRUE(float32_only(*b.mutant)) << "step " << i;
        }
    }
    EXPECT_GT(plain_other_dtype, 0);  // without the filter, such mutants do appear
    EXPECT_GT(rejected, 0);
    EXPECT_GT(valid, 100);
    for (const auto& m : filtered.models()) EXPECT_TRUE(float32_only(m));
}

TEST(Search, RestoredStateMakesTheSameSteps) {
    // Save after 300 steps; the original and a fresh search restored from the save make the same
    // next 300 mutants.
    const auto seeds = small_seeds();
    memo_search a(seeds, memo::memo_coverage(test::reg()), memo::mh_selector(0.05), 17);
    for (int i = 0; i < 300; ++i) a.step();
    const auto saved = a.save();
    const memo::memo_coverage cov = a.coverage();
    std::vector<std::uint64_t> next_a, next_b;
    for (int i = 0; i < 300; ++i)
        if (const auto r = a.step(); r.valid) next_a.push_back(memo::structural_hash(*r.mutant));
    memo_search b(seeds, memo::memo_coverage(test::reg()), memo::mh_selector(0.05), 99);  // another seed: restore overrides it
    b.restore(saved, cov);
    for (int i = 0; i < 300; ++i)
        if (const auto r = b.step(); r.valid) next_b.push_back(memo::structural_hash(*r.mutant));
    EXPECT_GT(next_a.size(), 100u);
    EXPECT_EQ(next_a, next_b);
    memo_search c(std::vector<memo::model>{seeds[0]}, memo::memo_coverage(test::reg()), memo::mh_selector(0.05), 1);
    EXPECT_THROW(c.restore(saved, cov), memo::error);  // another seed pool
}

TEST(Search, AdoptsModelsThatRaiseItsCoverageAndRestoresThem) {
    // A model from elsewhere becomes a slot (a seed per operator) when it raises coverage; a model
    // it covers already does not, nor any beyond the pool's limit; a restored search with the
    // adopted slots makes the same steps.
    const auto seeds = small_seeds();
    memo_search a(std::vector<memo::model>{seeds[0]}, memo::memo_coverage(test::reg()), memo::mh_selector(0.05), 5);
    const auto seed_count = a.seed_count();
    EXPECT_EQ(a.adopt(seeds[0], 8), 0u);  // nothing new
    EXPECT_GT(a.adopt(seeds[1], 8), 0u);
    EXPECT_EQ(a.models().size(), 2u);
    EXPECT_EQ(a.seed_count(), 2 * seed_count);
    EXPECT_EQ(a.adopt(seeds[1], 8), 0u);  // covered now
    memo_search other(std::vector<memo::model>{seeds[1]}, memo::memo_coverage(test::reg()), memo::mh_selector(0.05), 6);
    for (int i = 0; i < 200; ++i) other.step();
    EXPECT_EQ(a.adopt(other.models()[0], 2), 0u);  // the pool is full
    for (int i = 0; i < 100; ++i) a.step();
    const auto saved = a.save();
    const memo::memo_coverage cov = a.coverage();
    std::vector<std::uint64_t> next_a, next_b;
    for (int i = 0; i < 200; ++i)
        if (const auto r = a.step(); r.valid) next_a.push_back(memo::structural_hash(*r.mutant));
    memo_search b(std::vector<memo::model>{seeds[0]}, memo::memo_coverage(test::reg()), memo::mh_selector(0.05), 5);
    b.restore(saved, cov);
    for (int i = 0; i < 200; ++i)
        if (const auto r = b.step(); r.valid) next_b.push_back(memo::structural_hash(*r.mutant));
    EXPECT_EQ(next_a, next_b);
    memo_search c(seeds, memo::memo_coverage(test::reg()), memo::mh_selector(0.05), 1);
    EXPECT_THROW(c.restore(saved, cov), memo::error);  // two seeds of its own, not one and one adopted
}

}  // namespace test_search_search_test
