// Every operator keeps models valid: on MEMO's seeds and on small models, each result is either
// a valid model or a rejection, never an invalid model; and each does what it says.
#include <filesystem>

#include <memo/mutation/operators.hpp>

#include "../support.hpp"

namespace test_mutation_operators_test {

using memo::criterion;

namespace {

std::vector<memo::model> seeds() {
    std::vector<memo::model> out;
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(std::string(MEMO_TEST_DATA_DIR) + "/memo/synthesized_models")) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) out.push_back(memo::io::load_keras(f.string(), test::reg()));
    memo::builder b(test::reg());  // a small 1D model and a two-input model
    auto x = b.input({16, 4});
    auto y = b.add("Conv1D", {x}, {{"filters", 4}, {"kernel_size", memo::ints{3}}, {"padding", "same"}});
    auto z = b.input({16, 4});
    b.output(b.add("Add", {y, z}));
    out.push_back(b.finish());
    return out;
}

// Each operator must succeed at least `share` of the time (LEMON's LS and AFRm need layers with
// equal shapes or non-linear activations, which the seeds seldom have).
template <class Ops>
void every_operator_keeps_models_valid(int rounds, double share) {
    const auto models = seeds();
    const memo::memo_coverage cov(test::reg());
    const memo::mutation::context ctx(cov);
    memo::rng r(21);
    for (std::size_t op = 0; op < Ops::size; ++op) {
        int made = 0;
        for (int k = 0; k < rounds; ++k) {
            const auto& m = models[static_cast<std::size_t>(k) % models.size()];
            auto x = Ops::apply(op, m, r, ctx);
            if (!x) continue;
            ++made;
            auto ok = memo::validate(*x);
            ASSERT_TRUE(ok) << Ops::names[op] << " made an invalid model: " << ok.reason();
            // Our JSON keeps every mutant exactly.
            const auto back = memo::io::model_from_json(memo::io::model_to_json(*x), test::reg(), "mutant");
            ASSERT_EQ(memo::io::model_to_json(back), memo::io::model_to_json(*x));
        }
        EXPECT_GT(made, static_cast<int>(rounds * share)) << Ops::names[op] << " rejected too often";
    }
}

std::size_t count_class(const memo::model& m, std::string_view cls) {
    return static_cast<std::size_t>(std::count_if(m.nodes.begin(), m.nodes.end(), [&](const auto& n) { return n.layer->name == cls; }));
}

}  // namespace

TEST(MemoOperators, KeepModelsValid) { every_operator_keeps_models_valid<memo::mutation::memo_operators>(110, 0.8); }
TEST(LemonOperators, KeepModelsValid) { every_operator_keeps_models_valid<memo::mutation::lemon_operators>(110, 0.15); }

TEST(MemoOperators, NlaInsertsClassesTheModelDoesNotUse) {
    const auto m = seeds()[4];  // lenet5
    const memo::memo_coverage cov(test::reg());
    const memo::mutation::context ctx(cov);
    memo::rng r(3);
    for (int k = 0; k < 20; ++k) {
        auto x = memo::mutation::nla{}(m, r, ctx);
        ASSERT_TRUE(x) << x.reason();
        std::set<std::string_view> before, after;
        for (const auto& n : m.nodes) before.insert(n.layer->name);
        for (const auto& n : x->nodes)
            if (ctx.in_universe(*n.layer)) after.insert(n.layer->name);
        std::size_t fresh = 0;
        for (auto c : after) fresh += !before.count(c);
        EXPECT_GE(fresh, 1u);
    }
}

TEST(MemoOperators, EachLeavesItsMark) {
    const auto models = seeds();
    const auto& m = models[4];
    const memo::memo_coverage cov(test::reg());
    const memo::mutation::context ctx(cov);
    memo::rng r(5);
    auto nan = memo::mutation::nan_input{}(m, r, ctx);
    ASSERT_TRUE(nan);
    EXPECT_EQ(count_class(*nan, "CustomInjectLayer"), count_class(m, "CustomInjectLayer") + 1);
    auto dt = memo::mutation::mdtype{}(m, r, ctx);
    ASSERT_TRUE(dt);
    EXPECT_GT(count_class(*dt, "CustomCastLayer"), 0u);
    std::size_t merges = 0;
    for (int k = 0; k < 10; ++k)
        if (auto x = memo::mutation::lmerge{}(m, r, ctx)) merges += x->nodes.size() > m.nodes.size();
    EXPECT_EQ(merges, 10u);
    // LConn, CShape, CMode and MDims change the covered items.
    memo::memo_coverage base(test::reg());
    base.add(m);
    for (auto op : {3, 4, 5, 7}) {
        int raised = 0;
        for (int k = 0; k < 20; ++k)
            if (auto x = memo::mutation::memo_operators::apply(static_cast<std::size_t>(op), m, r, ctx)) raised += base.gain(*x).memo_total() > 0;
        EXPECT_GT(raised, 5) << memo::mutation::memo_operators::names[static_cast<std::size_t>(op)];
    }
}

TEST(LemonOperators, WeightRulesAreEditsOnTheSeed) {
    const auto m = seeds()[4];
    const memo::memo_coverage cov(test::reg());
    const memo::mutation::context ctx(cov);
    memo::rng r(9);
    auto x = memo::mutation::gaussian_fuzzing{}(m, r, ctx);
    ASSERT_TRUE(x);
    ASSERT_EQ(x->weight_edits.size(), 1u);
    EXPECT_EQ(x->weight_edits[0].what, memo::weight_edit::kind::gaussian_fuzz);
    EXPECT_EQ(memo::structural_hash(*x), memo::structural_hash(m));  // structure unchanged
    const auto back = memo::io::model_from_json(memo::io::model_to_json(*x), test::reg(), "edits");
    EXPECT_EQ(back.weight_edits, x->weight_edits);
}

/// GPair places the one connectable graph pair left open, whatever its classes: Dense feeding
/// Dense and Dot, ThresholdedReLU feeding itself, an adapter feeding a pooling, an input of a
/// rank the model has none of feeding Conv3D.
TEST(MemoOperators, GPairPlacesAnOpenGraphPairDirectly) {
    const auto m = seeds()[4];  // lenet5
    const auto& reg = test::reg();
    const auto& u = memo::universe::of(reg);
    auto at = [&](std::string_view n) { return reg.index_of(reg.at(n)); };
    for (const auto& [a, b] : {std::pair{"Dense", "Dense"},
                               {"Dense", "Dot"},
                               {"ThresholdedReLU", "ThresholdedReLU"},
                               {"CustomPadLayer", "MaxPooling2D"},
                               {"InputLayer", "Conv3D"}}) {
        SCOPED_TRACE(std::string(a) + " -> " + b);
        memo::memo_coverage cov(reg);
        auto& seen = cov.items(criterion::graph_pair_connectable);
        const auto open = static_cast<std::size_t>(u.graph_connectable_item(at(a), at(b)));
        for (std::size_t i = 0; i < seen.size(); ++i)
            if (i != open) seen.set(i);
        const memo::mutation::context ctx(cov);
        memo::rng r(7);
        int placed = 0;
        for (int k = 0; k < 10; ++k) {
            auto x = memo::mutation::gpair{}(m, r, ctx);
            if (!x) continue;
            ASSERT_TRUE(memo::validate(*x)) << memo::validate(*x).reason();
            bool has = false;
            for (const auto& n : x->nodes)
                for (int i : n.inputs) has = has || (x->nodes[static_cast<std::size_t>(i)].layer->name == a && n.layer->name == b);
            placed += has;
        }
        EXPECT_GE(placed, 7);
    }
}

/// A registry with no merge layer: LMerge declines, it does not pick from an empty pool.
TEST(MemoOperators, LMergeDeclinesWithoutMergeLayers) {
    using small = memo::concat<memo::layer_list<memo::layers::relu>, memo::layers::core_layers, memo::layers::adapter_layers>;
    const auto& reg = memo::registry_of<small>();
    memo::builder b(reg);
    b.add("ReLU", {b.add("Dense", {b.input({6})}, {{"units", std::int64_t{4}}})});
    const auto m = b.finish();
    memo::memo_coverage cov(reg);
    cov.add(m);
    memo::mutation::context ctx(reg, cov);
    memo::rng r(3);
    for (int i = 0; i < 20; ++i) EXPECT_FALSE(memo::mutation::lmerge{}(m, r, ctx));
}

}  // namespace test_mutation_operators_test
