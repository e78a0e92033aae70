// The model graph: validation names the first broken node, the structural hash sees structure
// only, and our JSON format round-trips exactly.
#include "../support.hpp"

namespace test_core_model_test {

namespace {

memo::model lenet_like() {
    memo::builder b(test::reg());
    auto x = b.input({28, 28, 1});
    auto c = b.add("Conv2D", {x}, {{"filters", 6}, {"kernel_size", memo::ints{5, 5}}, {"padding", "same"}, {"activation", "relu"}}, "conv");
    auto p = b.add("MaxPooling2D", {c}, {}, "pool");
    auto f = b.add("Flatten", {p}, {}, "flat");
    auto d = b.add("Dense", {f}, {{"units", 10}}, "dense");
    b.output(d);
    b.seed(42);
    return b.finish();
}

}  // namespace

TEST(Model, BuilderInfersShapes) {
    const auto m = lenet_like();
    EXPECT_EQ(m.size(), 5u);
    EXPECT_EQ(m[2].out.str(), "(None, 14, 14, 6)");
    EXPECT_EQ(m[4].out.str(), "(None, 10)");
    EXPECT_TRUE(memo::validate(m));
    EXPECT_EQ(m.layer_count(), 4u);
    EXPECT_EQ(m.input_nodes(), std::vector<int>{0});
}

TEST(Model, BuilderRejectsInvalidLayerWithReason) {
    memo::builder b(test::reg());
    auto x = b.input({4, 4, 1});
    try {
        b.add("Conv2D", {x}, {{"kernel_size", memo::ints{5, 5}}});
        FAIL() << "accepted a 5x5 kernel on a 4x4 input";
    } catch (const memo::error& e) {
        EXPECT_NE(std::string(e.what()).find("Conv2D"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("larger than input"), std::string::npos);
    }
}

TEST(Model, ValidationReportsFirstBrokenNode) {
    auto m = lenet_like();
    m[2].set("pool_size", memo::ints{40, 40});  // breaks node 2 and, through it, everything after
    auto r = memo::validate(m);
    ASSERT_FALSE(r);
    EXPECT_NE(r.reason().find("node 2 'pool' (MaxPooling2D)"), std::string::npos) << r.reason();

    m = lenet_like();
    m[3].out[1] = 99;  // a stale stored shape
    r = memo::validate(m);
    ASSERT_FALSE(r);
    EXPECT_NE(r.reason().find("node 3 'flat'"), std::string::npos) << r.reason();
    EXPECT_NE(r.reason().find("stored shape"), std::string::npos) << r.reason();

    m = lenet_like();
    m[1].inputs = {3};  // an edge that points forward
    r = memo::validate(m);
    ASSERT_FALSE(r);
    EXPECT_NE(r.reason().find("node 1"), std::string::npos) << r.reason();

    m = lenet_like();
    m[1].set("padding", "causal");  // outside Conv2D's domain
    r = memo::validate(m);
    ASSERT_FALSE(r);
    EXPECT_NE(r.reason().find("padding"), std::string::npos) << r.reason();

    m = lenet_like();
    m[3].inputs = {0, 1};  // Flatten takes one input
    EXPECT_FALSE(memo::validate(m));
}

TEST(Model, StructuralHashIgnoresNamesAndSeedOnly) {
    const auto base = lenet_like();
    const auto h = memo::structural_hash(base);
    auto renamed = base;
    for (auto& n : renamed.nodes) n.name += "_x";
    renamed.seed = 7;
    EXPECT_EQ(memo::structural_hash(renamed), h);

    auto param = base;
    param[1].set("activation", "tanh");
    EXPECT_NE(memo::structural_hash(param), h);

    auto shape = base;
    shape[0].out[1] = 27;
    EXPECT_NE(memo::structural_hash(shape), h);

    auto type = base;
    type[3].type = memo::dtype::float64;
    EXPECT_NE(memo::structural_hash(type), h);

    memo::builder b(test::reg());  // same layers, one more edge
    auto x = b.input({4});
    auto r1 = b.add("ReLU", {x});
    auto r2 = b.add("ReLU", {x});
    b.output(b.add("Add", {r1, r2}));
    auto two = b.finish();
    auto one_edge = two;
    one_edge[2].inputs = {1};
    one_edge[3].inputs = {1, 1};
    EXPECT_NE(memo::structural_hash(two), memo::structural_hash(one_edge));
}

TEST(ModelJson, RoundTripsExactly) {
    const auto m = lenet_like();
    const auto j = memo::io::model_to_json(m);
    const auto back = memo::io::model_from_json(j, test::reg(), "lenet");
    EXPECT_EQ(memo::io::model_to_json(back), j);
    EXPECT_EQ(memo::structural_hash(back), memo::structural_hash(m));
    EXPECT_EQ(back.seed, 42u);
}

TEST(ModelJson, RandomModelsOfEveryLayerRoundTrip) {
    memo::rng r(11);
    const auto& reg = test::reg();
    std::size_t made = 0;
    for (const auto& L : reg) {
        if (L.arity.max == 0) continue;  // InputLayer appears in every model anyway
        for (int k = 0; k < 20; ++k) {
            auto m = test::random_single_layer_model(L, r);
            if (!m) continue;
            ++made;
            const auto text = memo::io::model_to_json(*m).dump();
            const auto back = memo::io::model_from_json(memo::io::json::parse(text), reg, std::string(L.name));
            ASSERT_EQ(memo::io::model_to_json(back).dump(), text) << L.name;
            ASSERT_EQ(memo::structural_hash(back), memo::structural_hash(*m)) << L.name;
        }
    }
    // Adapters that need explicit amounts (pad, crop, reshape) are not drawn by the generic generator.
    EXPECT_GT(made, 20u * 60u);
}

TEST(ModelJson, ErrorsNameTheInputAndCause) {
    auto j = memo::io::model_to_json(lenet_like());
    j["nodes"][1]["layer"] = "Conv9D";
    try {
        (void)memo::io::model_from_json(j, test::reg(), "bad.json");
        FAIL();
    } catch (const memo::error& e) {
        EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("Conv9D"), std::string::npos);
    }
    EXPECT_THROW(memo::io::load_model("/nonexistent/model.json", test::reg()), memo::error);
}

// A model's weights are a pure function of it: drawn afresh or copied from a weight cache (which
// starts over when full), every layer's weights are the same bits.
TEST(Weights, CacheGivesTheWeightsDrawnAfresh) {
    memo::rng r(0xcace);
    memo::weight_cache roomy, tiny(64);
    int compared = 0;
    for (const auto& L : test::reg()) {
        if (L.arity.max == 0) continue;
        auto m = test::random_single_layer_model(L, r);
        if (!m) continue;
        const int out = m->outputs[0];
        const auto fresh = memo::weights_of(*m, out);
        for (int round = 0; round < 2; ++round)  // the second round copies from the cache
            for (auto* cache : {&roomy, &tiny}) {
                const auto got = memo::weights_of(*m, out, cache);
                ASSERT_EQ(got.size(), fresh.size()) << L.name;
                for (std::size_t k = 0; k < got.size(); ++k) {
                    EXPECT_EQ(got[k].name, fresh[k].name) << L.name;
                    EXPECT_EQ(got[k].value.dims, fresh[k].value.dims) << L.name;
                    EXPECT_EQ(got[k].value.data, fresh[k].value.data) << L.name << " " << fresh[k].name;
                }
            }
        compared += !fresh.empty();
    }
    EXPECT_GE(compared, 20);  // the layer classes that have weights
}

// The normal initializers keep Keras' distributions: RandomNormal N(0, 0.05) (68.3 % within one
// standard deviation), he_normal truncated at two standard deviations yet of standard deviation
// sqrt(2 / fan_in), and Orthogonal's columns orthonormal.
TEST(Weights, NormalInitializersKeepKerasDistributions) {
    auto moments = [](const memo::tensor& t) {
        double sum = 0, sq = 0, most = 0;
        for (double x : t.data) sum += x, sq += x * x, most = std::max(most, std::abs(x));
        const double n = static_cast<double>(t.size()), mean = sum / n;
        return std::array<double, 3>{mean, std::sqrt(sq / n - mean * mean), most};
    };
    memo::rng r(7);
    memo::tensor normal({200, 500}, memo::dtype::float64);
    memo::initialize("RandomNormal", normal, r);
    const auto [mean, sd, most] = moments(normal);
    EXPECT_NEAR(mean, 0.0, 1e-3);
    EXPECT_NEAR(sd, 0.05, 0.05 * 0.02);
    EXPECT_GT(most, 0.05 * 3.5);  // tails, not a bounded distribution
    const auto within = std::count_if(normal.data.begin(), normal.data.end(), [](double x) { return std::abs(x) <= 0.05; });
    EXPECT_NEAR(static_cast<double>(within) / static_cast<double>(normal.size()), 0.6827, 0.01);

    memo::tensor he({200, 500}, memo::dtype::float64);  // fan_in 200
    memo::initialize("he_normal", he, r);
    const auto [he_mean, he_sd, he_most] = moments(he);
    EXPECT_NEAR(he_mean, 0.0, 2e-3);
    EXPECT_NEAR(he_sd, 0.1, 0.1 * 0.02);
    EXPECT_LE(he_most, 2.0 * 0.1 / 0.87962566103423978 + 1e-12);

    memo::tensor q({64, 32}, memo::dtype::float64);
    memo::initialize("Orthogonal", q, r);
    for (int a = 0; a < 32; ++a)
        for (int b = 0; b < 32; ++b) {
            double dot = 0;
            for (int i = 0; i < 64; ++i) dot += q[i * 32 + a] * q[i * 32 + b];
            ASSERT_NEAR(dot, a == b ? 1.0 : 0.0, 1e-12) << a << " " << b;
        }
}

}  // namespace test_core_model_test
