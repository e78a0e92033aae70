// The metamorphic relations and tester: variants keep the reference's outputs, a planted gate
// fault is caught and localised, a clean backend stays quiet, the self-check discards what the
// reference breaks, and a campaign stores a metamorphic bug with both its models.
#include <filesystem>

#include <memo/backends/reference/interpreter.hpp>
#include <memo/campaign/execute.hpp>
#include <memo/campaign/generate.hpp>
#include <memo/oracle/metamorphic.hpp>
#include <memo/search/search.hpp>

#include "../backends/faulty.hpp"
#include "../support.hpp"

namespace test_oracle_metamorphic_test {

namespace {

#ifdef __SANITIZE_ADDRESS__
constexpr int generated_models = 250;  // the same checks, fewer models, under the sanitizers
#else
constexpr int generated_models = 1000;
#endif

/// Valid mutants of MEMO's search from the LeNet-5 and LSTM seeds (each distinct).
std::vector<memo::model> mutants_for_metamorphic(std::size_t n, std::uint64_t seed) {
    std::vector<memo::model> seeds;
    for (auto name : {"lenet5-mnist_orig-simplified.json", "lstm2-price_orig-simplified.json"})
        seeds.push_back(
            memo::campaign::fit_to_cost(memo::io::load_keras(std::string(MEMO_TEST_DATA_DIR) + "/memo/synthesized_models/" + name, test::reg()), 200000));
    memo::search<memo::model, memo::mutation::memo_operators, memo::memo_coverage, memo::mh_selector> s(seeds, memo::memo_coverage(test::reg()),
                                                                                                        memo::mh_selector(0.05), seed);
    s.context().max_cost = 2000000;  // small models, as a campaign runs them
    std::vector<memo::model> out;
    std::set<std::uint64_t> seen;
    for (int i = 0; out.size() < n && i < 40 * static_cast<int>(n); ++i)
        if (auto r = s.step(); r.mutant && seen.insert(memo::structural_hash(*r.mutant)).second) out.push_back(*r.mutant);
    return out;
}

/// Whether any node of `v` after the model's own computes a non-finite value (F overflowing, so
/// that the product is 0 x Inf): the one reason a variant may change the reference's outputs.
bool spliced_part_non_finite(const memo::metamorphic::variant& v, std::span<const memo::tensor> in) {
    memo::reference::interpreter ref;
    const auto all = ref.run(v.m, in, {true, {}, {}});
    if (!all.ok()) return true;
    for (std::size_t i = static_cast<std::size_t>(v.first_new); i < all.outputs.size(); ++i)
        if (all.outputs[i].has_non_finite()) return true;
    return false;
}

memo::mutation::context unguided(const memo::memo_coverage& cov) {
    memo::mutation::context ctx(test::reg(), cov);
    ctx.guided = false;
    return ctx;
}

}  // namespace

TEST(Metamorphic, EveryRelationsVariantKeepsTheReferenceOutputs) {
    const auto models = mutants_for_metamorphic(generated_models, 3);
    ASSERT_EQ(models.size(), static_cast<std::size_t>(generated_models));
    memo::memo_coverage cov(test::reg());
    const auto ctx = unguided(cov);
    memo::reference::interpreter ref;
    memo::rng r(5);
    for (auto rel : memo::metamorphic::all_relations) {
        int made = 0, same = 0, overflowed = 0, model_failed = 0;
        for (const auto& m : models) {
            const auto in = memo::make_inputs(m, {});
            const auto original = ref.run(m, in, {});
            if (!original.ok()) {
                ++model_failed;
                continue;
            }
            auto v = memo::metamorphic::splice(m, rel, ctx, r);
            if (!v) continue;
            ++made;
            // The model's own nodes keep their indices, hence their weights.
            ASSERT_GE(v->first_new, static_cast<int>(m.size()));
            for (std::size_t i = 0; i < m.size(); ++i) ASSERT_EQ(v->m.nodes[i].layer, m.nodes[i].layer);
            const auto got = ref.run(v->m, in, {});
            if (got.ok() && memo::oracle::same_outputs(original.outputs, got.outputs)) ++same;
            else if (spliced_part_non_finite(*v, in)) ++overflowed;
            else ADD_FAILURE() << memo::metamorphic::name_of(rel) << ": the variant changes finite outputs of model " << memo::structural_hash(m);
        }
        EXPECT_GE(made, static_cast<int>(0.95 * (generated_models - model_failed))) << memo::metamorphic::name_of(rel);
        EXPECT_EQ(same + overflowed, made);
        std::printf("%-18s %d variants of %d models: %d keep the outputs, %d overflow (0 x Inf)\n", std::string(memo::metamorphic::name_of(rel)).c_str(), made,
                    generated_models - model_failed, same, overflowed);
    }
}

TEST(Metamorphic, PlantedGateFaultsAreCaughtAndLocalised) {
    // A ReLU that lets 1e-3 through where it should give 0 breaks the three relu gates; a
    // StopGradient that is not an exact copy breaks the fourth. The share caught is measured over
    // three searches' models: one search's dozen variants through a StopGradient gate ranged from
    // half caught to five in six (seeds 11 to 15).
    std::vector<memo::model> models;
    for (std::uint64_t seed : {11, 12, 13})
        for (auto& m : mutants_for_metamorphic(60, seed)) models.push_back(std::move(m));
    for (std::string layer : {"ReLU", "StopGradient"}) {
        auto faulty = memo::make_in_process(test::faulty_backend(test::fault::small_error, layer, "faulty"));
        memo::in_process<memo::reference::interpreter> ref{memo::reference::interpreter()};
        memo::oracle::metamorphic_tester t({faulty.get()}, ref, test::reg());
        int caught = 0, exposed = 0;
        for (const auto& m : models) {
            const auto v = t.check(m);
            const auto& x = t.last_variant();
            if (!x) continue;
            bool uses = false;
            for (int g : x->gate) uses = uses || x->m[g].layer->name == layer;
            exposed += uses;
            if (!v) continue;
            ++caught;
            EXPECT_EQ(v.what, memo::oracle::kind::metamorphic);
            EXPECT_EQ(v.culprits, std::vector<std::string>{"faulty"});
            EXPECT_EQ(v.layer, layer) << v.message;
            ASSERT_TRUE(v.broken());
            EXPECT_TRUE(uses);
        }
        EXPECT_GT(exposed, 5) << layer;
        EXPECT_GE(3 * caught, 2 * exposed) << layer << ": " << caught << " of " << exposed << " variants through the faulty layer caught";
    }
}

TEST(Metamorphic, CleanBackendStaysUnderTheFalsePositiveRate) {
    // Another implementation of every layer: the reference computing every node in float64.
    const auto models = mutants_for_metamorphic(100, 17);
    auto clean = memo::make_in_process(memo::reference::interpreter(memo::dtype::float64, "clean"));
    memo::in_process<memo::reference::interpreter> ref{memo::reference::interpreter()};
    memo::oracle::metamorphic_tester t({clean.get()}, ref, test::reg());
    int flagged = 0, judged = 0;
    for (const auto& m : models) {
        flagged += static_cast<bool>(t.check(m));
        judged += !t.last_skipped();
    }
    EXPECT_GE(judged, 90);
    EXPECT_LE(flagged, judged / 100) << flagged << " of " << judged;  // at most 1 %
}

TEST(Metamorphic, SelfCheckDiscardsVariantsTheReferenceBreaks) {
    // With a reference whose ReLU is not exact, every relu gate fails the self-check; the variants
    // that remain use the stop-gradient gate, and nothing is reported against a clean backend.
    const auto models = mutants_for_metamorphic(30, 23);
    auto clean = memo::make_in_process(memo::reference::interpreter(std::nullopt, "clean"));
    memo::in_process<memo::reference::interpreter> broken{test::faulty_backend(test::fault::small_error, "ReLU", "reference")};
    memo::oracle::metamorphic_tester t({clean.get()}, broken, test::reg());
    for (const auto& m : models) EXPECT_FALSE(t.check(m));
    // A relu gate passes only where F happens to be all zeros, so that 1e-3 x F is still 0.
    std::uint64_t used = 0;
    for (auto n : t.used()) used += n;
    EXPECT_GT(t.discarded(), 0u);
    EXPECT_GT(2 * t.used()[static_cast<std::size_t>(memo::metamorphic::relation::stop_gradient)], used);
}

TEST(Metamorphic, CampaignStoresTheBugWithBothModels) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "memo-metamorphic-campaign";
    fs::remove_all(dir);
    auto faulty = memo::make_in_process(test::faulty_backend(test::fault::small_error, "ReLU", "faulty"));
    memo::in_process<memo::reference::interpreter> ref{memo::reference::interpreter()};
    memo::oracle::metamorphic_tester t({faulty.get()}, ref, test::reg());
    memo::campaign::execution_options eo;
    eo.minimise = false;
    eo.max_cost = 20'000'000;  // the seed runs at full size (memo-fuzz run would shrink it to the default limit)
    memo::campaign::execution exec(t, test::reg(), dir, eo);
    std::vector<memo::model> seeds{
        memo::io::load_keras(std::string(MEMO_TEST_DATA_DIR) + "/memo/synthesized_models/lenet5-mnist_orig-simplified.json", test::reg())};
    memo::campaign::generation_options o;
    o.out = dir.string();
    o.iterations = 150;
    o.seconds = 120;
    o.quiet = true;
    memo::campaign::generate(seeds, test::reg(), o, &exec);
    const auto stats = memo::io::parse_json_file((dir / "stats.json").string());
    EXPECT_EQ(stats.at("oracle").at("tester"), "metamorphic");
    EXPECT_GT(stats.at("bugs").at("metamorphic").get<int>(), 0);
    ASSERT_GT(stats.at("bugs").at("unique_metamorphic").get<int>(), 0);
    for (const auto& b : fs::directory_iterator(dir / "bugs" / "metamorphic")) {
        for (auto f : {"model.json", "variant.json", "bug.json", "repro.sh"}) EXPECT_TRUE(fs::exists(b.path() / f)) << b.path() << " " << f;
        const auto bug = memo::io::parse_json_file((b.path() / "bug.json").string());
        EXPECT_EQ(bug.at("tester"), "metamorphic");
        EXPECT_EQ(bug.at("localisation").at("layer"), "ReLU");
        memo::metamorphic::relation rel{};
        EXPECT_TRUE(memo::metamorphic::relation_from(bug.at("variant").at("relation").get<std::string>(), rel));
        const auto m = memo::io::load_model((b.path() / "model.json").string(), test::reg());
        const auto v = memo::io::load_model((b.path() / "variant.json").string(), test::reg());
        EXPECT_GT(v.size(), m.size());
    }
    fs::remove_all(dir);
}

}  // namespace test_oracle_metamorphic_test
