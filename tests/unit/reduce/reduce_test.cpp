// Seed reduction: the reduced model is valid, no larger, and covers exactly the original's items
// under layer_type, layer_pair, layer_param and layer_input; repeated blocks go; reduction is
// deterministic. Also the weight and multiply-add counts.
#include <memo/reduce/reduce.hpp>
#include <memo/zoo/zoo.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../support.hpp"

namespace test_reduce_reduce_test {

namespace {

using item_set = std::set<std::pair<int, std::size_t>>;

/// The items a model covers under the four criteria, counted here with the universe alone.
item_set items_of(const memo::model& m) {
    const auto& u = memo::universe::of(test::reg());
    item_set s;
    u.items(m, [&](memo::criterion c, std::size_t i) {
        if (c == memo::criterion::layer_type || c == memo::criterion::layer_pair || c == memo::criterion::layer_param || c == memo::criterion::layer_input)
            s.insert({static_cast<int>(c), i});
    });
    return s;
}

std::string describe_difference(const item_set& want, const item_set& got) {
    const auto& u = memo::universe::of(test::reg());
    std::string s;
    for (const auto& [c, i] : want)
        if (!got.count({c, i})) s += "  missing " + u.describe(static_cast<memo::criterion>(c), i) + "\n";
    for (const auto& [c, i] : got)
        if (!want.count({c, i})) s += "  extra " + u.describe(static_cast<memo::criterion>(c), i) + "\n";
    return s;
}

/// The checks every reduction must pass.
void expect_reduction_keeps_coverage(const memo::model& m, const std::string& name) {
    SCOPED_TRACE(name);
    const auto r = memo::reduce(m);
    const auto ok = memo::validate(r.reduced);
    EXPECT_TRUE(ok) << (ok ? "" : ok.reason());
    const auto want = items_of(m), got = items_of(r.reduced);
    EXPECT_EQ(want, got) << describe_difference(want, got);
    EXPECT_TRUE(r.coverage_preserved);
    EXPECT_LE(r.reduced.size(), m.size());
    EXPECT_EQ(r.layers_before, m.size());
    EXPECT_EQ(r.layers_after, r.reduced.size());
    EXPECT_EQ(r.weights_after, memo::count_weights(r.reduced));
    EXPECT_EQ(r.flops_after, memo::count_flops(r.reduced));
}

std::vector<std::filesystem::path> memo_seeds() {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(MEMO_TEST_DATA_DIR "/memo/synthesized_models"))
        if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files;
}

TEST(Reduce, KeepsTheCoverageOfMemosTenSeeds) {
    const auto files = memo_seeds();
    ASSERT_EQ(files.size(), 10u);
    std::size_t before = 0, after = 0;
    for (const auto& f : files) {
        const auto m = memo::io::load_keras(f.string(), test::reg());
        expect_reduction_keeps_coverage(m, f.filename().string());
        before += m.size();
        after += memo::reduce(m).reduced.size();
    }
    EXPECT_LT(after, before);  // MEMO's seeds are reduced already, but not as far
}

TEST(Reduce, KeepsTheCoverageOfTheZoo) {
    std::size_t before = 0, after = 0, largest = 0;
    for (auto name : memo::zoo::names()) {
        const auto m = memo::zoo::build(name);
        expect_reduction_keeps_coverage(m, std::string(name));
        before += m.size();
        after += memo::reduce(m).reduced.size();
        largest = std::max(largest, m.size());
    }
    EXPECT_EQ(largest, 782u);  // InceptionResNetV2, every node counted
    // The paper's Table 5: 11.0 layers on average after reduction.
    EXPECT_LE(static_cast<double>(after) / 10.0, 11.0)
        << "average " << static_cast<double>(before) / 10.0 << " -> " << static_cast<double>(after) / 10.0 << " layers";
}

/// Input -> [Conv2D 3x3 -> BatchNormalization -> ReLU] x 4 -> Conv2D 1x1 -> GlobalAveragePooling2D:
/// the four 3x3 blocks are the same block, the 1x1 convolution is not.
memo::model repeated_blocks() {
    memo::builder b(test::reg());
    int x = b.input({16, 16, 8});
    for (int k = 0; k < 4; ++k) {
        x = b.add("Conv2D", {x}, {{"filters", std::int64_t{8}}, {"kernel_size", memo::ints{3, 3}}, {"padding", "same"}});
        x = b.add("BatchNormalization", {x});
        x = b.add("ReLU", {x});
    }
    x = b.add("Conv2D", {x}, {{"filters", std::int64_t{8}}, {"kernel_size", memo::ints{1, 1}}});
    x = b.add("GlobalAveragePooling2D", {x});
    b.output(x);
    return b.finish();
}

std::size_t count_class(const memo::model& m, std::string_view cls) {
    std::size_t k = 0;
    for (const auto& n : m.nodes) k += n.layer->name == cls;
    return k;
}

TEST(Reduce, DropsARepeatedBlock) {
    const auto m = repeated_blocks();
    ASSERT_EQ(m.size(), 15u);
    expect_reduction_keeps_coverage(m, "repeated blocks");
    const auto r = memo::reduce(m);
    // One block covers what the four cover; a second Conv2D reads the ReLU (the pair ReLU ->
    // Conv2D), and it is the 1x1 one, whose kernel bucket nothing else covers.
    EXPECT_EQ(count_class(r.reduced, "BatchNormalization"), 1u);
    EXPECT_EQ(count_class(r.reduced, "ReLU"), 1u);
    EXPECT_LE(count_class(r.reduced, "Conv2D"), 2u);
    bool one_by_one = false;
    for (const auto& n : r.reduced.nodes)
        if (n.layer->name == "Conv2D") one_by_one = one_by_one || n.param("kernel_size") == memo::value{memo::ints{1, 1}};
    EXPECT_TRUE(one_by_one);
    EXPECT_LE(r.reduced.size(), 7u) << "input, conv, bn, relu, conv 1x1, pool (and at most one more input)";
}

TEST(Reduce, IsDeterministic) {
    for (auto name : {"densenet121-imagenet", "mobilenet.v2-imagenet"}) {
        const auto m = memo::zoo::build(name);
        const auto a = memo::reduce(m), b = memo::reduce(m);
        EXPECT_EQ(memo::structural_hash(a.reduced), memo::structural_hash(b.reduced)) << name;
        EXPECT_EQ(memo::io::model_to_json(a.reduced).dump(), memo::io::model_to_json(b.reduced).dump()) << name;
    }
    const auto m = repeated_blocks();
    EXPECT_EQ(memo::structural_hash(memo::reduce(m).reduced), memo::structural_hash(memo::reduce(m).reduced));
}

TEST(Reduce, ReducedModelsRoundTripThroughBothFormats) {
    const auto r = memo::reduce(memo::zoo::build("inception.resnet.v2-imagenet"));
    const auto ours = memo::io::model_from_json(memo::io::model_to_json(r.reduced), test::reg());
    EXPECT_EQ(memo::structural_hash(ours), memo::structural_hash(r.reduced));
    const auto keras = memo::io::keras_from_json(memo::io::keras_to_json(r.reduced), test::reg(), "reduced");
    EXPECT_EQ(memo::structural_hash(keras), memo::structural_hash(r.reduced));
}

TEST(Reduce, AModelWithNothingInTheUniverseBecomesItsInput) {
    memo::builder b(test::reg());
    const int x = b.input({4});
    b.output(b.add("Dense", {x}, {{"units", std::int64_t{10}}}));
    const auto m = b.finish();
    const auto r = memo::reduce(m);
    EXPECT_TRUE(r.coverage_preserved);
    EXPECT_EQ(r.reduced.size(), 1u);
    EXPECT_TRUE(items_of(r.reduced).empty());
}

TEST(Cost, CountsWeightsAndMultiplyAdds) {
    memo::builder b(test::reg());
    int x = b.input({8, 8, 3});
    x = b.add("Conv2D", {x}, {{"filters", std::int64_t{4}}, {"kernel_size", memo::ints{3, 3}}});  // 6x6x4
    x = b.add("BatchNormalization", {x});
    x = b.add("MaxPooling2D", {x}, {{"pool_size", memo::ints{2, 2}}});  // 3x3x4
    x = b.add("Flatten", {x});
    b.output(b.add("Dense", {x}, {{"units", std::int64_t{10}}}));
    const auto m = b.finish();
    // Conv2D 3*3*3*4 + 4 = 112; BatchNormalization 4 * 4 = 16; Dense 36*10 + 10 = 370.
    EXPECT_EQ(memo::count_weights(m), 112 + 16 + 370);
    // Conv2D 36 positions * 27 * 4 = 3888; BatchNormalization 144; pooling 36 * 4 = 144;
    // Dense 10 * 36 = 360.
    EXPECT_EQ(memo::count_flops(m), 3888 + 144 + 144 + 360);
}

TEST(Cost, CountsRecurrentLayers) {
    memo::builder b(test::reg());
    const int x = b.input({49, 1});
    b.output(b.add("LSTM", {x}, {{"units", std::int64_t{50}}, {"return_sequences", true}}));
    const auto m = b.finish();
    EXPECT_EQ(memo::count_weights(m), 4 * (50 * (1 + 50) + 50));
    EXPECT_EQ(memo::count_flops(m), 49 * 4 * 50 * (1 + 50));
}

}  // namespace

}  // namespace test_reduce_reduce_test
