// The seed zoo: MEMO's ten seed architectures against their Keras definitions.
#include <memo/zoo/zoo.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "../support.hpp"

namespace test_zoo_zoo_test {

namespace {

struct expectation {
    std::string_view name;
    std::size_t nodes;     // Keras' len(model.layers), plus the input for Sequential models
    std::int64_t weights;  // Keras' model.count_params()
    memo::shape output;
};

// Layer counts and weights as Keras 2.8 reports them for include_top=True, weights=None:
//   keras/applications/densenet.py             DenseNet121        429 layers   8,062,504 params
//   keras/applications/inception_resnet_v2.py  InceptionResNetV2  782 layers  55,873,736 params
//   keras/applications/inception_v3.py         InceptionV3        313 layers  23,851,784 params
//   keras/applications/mobilenet_v2.py         MobileNetV2 (1.0)  156 layers   3,538,984 params
//   keras/applications/resnet.py               ResNet50           177 layers  25,636,712 params
//   keras/applications/xception.py             Xception           134 layers  22,910,480 params
// (functional models: model.layers includes the InputLayer). The four Sequential seeds (see
// include/memo/zoo/small.hpp for their sources) have 8, 17, 5 and 3 Keras layers, without input.
const expectation expected[] = {
    {"lenet5-mnist", 9, 61'706, test::sample({10})},
    {"alexnet-cifar10", 18, 21'592'330, test::sample({10})},
    {"densenet121-imagenet", 429, 8'062'504, test::sample({1000})},
    {"inception.resnet.v2-imagenet", 782, 55'873'736, test::sample({1000})},
    {"inception.v3-imagenet", 313, 23'851'784, test::sample({1000})},
    {"mobilenet.v2-imagenet", 156, 3'538'984, test::sample({1000})},
    {"resnet50-imagenet", 177, 25'636'712, test::sample({1000})},
    {"xception-imagenet", 134, 22'910'480, test::sample({1000})},
    {"lstm0-sinewave", 6, 70'901, test::sample({1})},
    {"lstm2-price", 4, 26'626, test::sample({1})},
};

const memo::node& named(const memo::model& m, std::string_view name) {
    for (const auto& n : m.nodes)
        if (n.name == name) return n;
    throw memo::error("no node named " + std::string(name));
}

std::size_t count_class(const memo::model& m, std::string_view cls) {
    return static_cast<std::size_t>(std::count_if(m.nodes.begin(), m.nodes.end(), [&](const auto& n) { return n.layer->name == cls; }));
}

}  // namespace

TEST(Zoo, NamesAreMemosTenSeedsInOrder) {
    const auto names = memo::zoo::names();
    ASSERT_EQ(names.size(), 10u);
    for (std::size_t i = 0; i < names.size(); ++i) EXPECT_EQ(names[i], expected[i].name);
}

TEST(Zoo, EveryModelBuildsValidatesAndMatchesKeras) {
    for (const auto& e : expected) {
        SCOPED_TRACE(std::string(e.name));
        const memo::model m = memo::zoo::build(e.name);
        EXPECT_TRUE(memo::validate(m)) << memo::validate(m).reason();
        EXPECT_EQ(m.nodes.size(), e.nodes);
        EXPECT_EQ(memo::count_weights(m), e.weights);
        ASSERT_EQ(m.outputs.size(), 1u);
        EXPECT_EQ(m[m.outputs[0]].out, e.output) << m[m.outputs[0]].out.str();
        EXPECT_EQ(m.seed, 0u);
        EXPECT_EQ(m.input_nodes().size(), 1u);
        std::set<std::string> names;
        for (const auto& n : m.nodes) {
            EXPECT_FALSE(n.name.empty());
            EXPECT_TRUE(names.insert(n.name).second) << "duplicate layer name " << n.name;
        }
    }
}

TEST(Zoo, BuildingIsDeterministic) {
    for (auto name : memo::zoo::names()) EXPECT_EQ(memo::structural_hash(memo::zoo::build(name)), memo::structural_hash(memo::zoo::build(name))) << name;
}

TEST(Zoo, UnknownNameThrowsListingTheKnownOnes) {
    try {
        (void)memo::zoo::build("vgg16-imagenet");
        FAIL() << "no exception";
    } catch (const memo::error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("vgg16-imagenet"), std::string::npos) << what;
        for (auto name : memo::zoo::names()) EXPECT_NE(what.find(std::string(name)), std::string::npos) << what;
    }
}

TEST(Zoo, ResNet50FollowsKerasLayerForLayer) {
    const memo::model m = memo::zoo::build("resnet50-imagenet");
    EXPECT_EQ(m[0].name, "input_1");
    EXPECT_EQ(m[0].out, test::sample({224, 224, 3}));
    EXPECT_EQ(std::get<memo::ints>(named(m, "conv1_pad").param("padding")), (memo::ints{3, 3, 3, 3}));
    const auto& conv1 = named(m, "conv1_conv");
    EXPECT_EQ(conv1.out, test::sample({112, 112, 64}));
    EXPECT_TRUE(memo::as_bool(conv1.param("use_bias")));
    EXPECT_DOUBLE_EQ(memo::as_real(named(m, "conv1_bn").param("epsilon")), 1.001e-5);
    EXPECT_EQ(named(m, "pool1_pool").out, test::sample({56, 56, 64}));
    EXPECT_EQ(named(m, "conv2_block1_0_conv").out, test::sample({56, 56, 256}));
    EXPECT_EQ(named(m, "conv3_block1_1_conv").out, test::sample({28, 28, 128}));
    EXPECT_EQ(memo::as_str(named(m, "conv4_block6_2_conv").param("padding")), "same");
    const auto& last_add = named(m, "conv5_block3_add");
    ASSERT_EQ(last_add.inputs.size(), 2u);
    EXPECT_EQ(m[last_add.inputs[0]].name, "conv5_block2_out");  // the identity shortcut first
    EXPECT_EQ(named(m, "conv5_block3_out").out, test::sample({7, 7, 2048}));
    EXPECT_EQ(named(m, "avg_pool").out, test::sample({2048}));
    EXPECT_EQ(memo::as_str(named(m, "predictions").param("activation")), "softmax");
    EXPECT_EQ(count_class(m, "Add"), 16u);
    EXPECT_EQ(count_class(m, "Conv2D"), 53u);
    EXPECT_EQ(count_class(m, "BatchNormalization"), 53u);
}

TEST(Zoo, InceptionV3NamesItsUnnamedLayersAsKerasDoes) {
    const memo::model m = memo::zoo::build("inception.v3-imagenet");
    EXPECT_EQ(count_class(m, "Conv2D"), 94u);
    EXPECT_EQ(named(m, "conv2d").out, test::sample({149, 149, 32}));
    EXPECT_EQ(named(m, "conv2d_93").out, test::sample({8, 8, 192}));
    EXPECT_FALSE(memo::as_bool(named(m, "conv2d").param("use_bias")));
    const auto& bn = named(m, "batch_normalization_93");
    EXPECT_FALSE(memo::as_bool(bn.param("scale")));
    EXPECT_DOUBLE_EQ(memo::as_real(bn.param("epsilon")), 1e-3);
    EXPECT_EQ(memo::as_str(named(m, "activation_93").param("activation")), "relu");
    EXPECT_EQ(named(m, "mixed2").out, test::sample({35, 35, 288}));
    EXPECT_EQ(named(m, "mixed7").out, test::sample({17, 17, 768}));
    EXPECT_EQ(named(m, "mixed8").out, test::sample({8, 8, 1280}));
    EXPECT_EQ(named(m, "mixed9_1").out, test::sample({8, 8, 768}));
    EXPECT_EQ(named(m, "concatenate_1").out, test::sample({8, 8, 768}));
    EXPECT_EQ(named(m, "mixed10").out, test::sample({8, 8, 2048}));
    EXPECT_EQ(named(m, "average_pooling2d_8").out, test::sample({8, 8, 2048}));
}

TEST(Zoo, InceptionResNetV2ScalesItsResidualsWithCustomScaleLayer) {
    const memo::model m = memo::zoo::build("inception.resnet.v2-imagenet");
    EXPECT_EQ(count_class(m, "CustomScaleLayer"), 40u);
    EXPECT_EQ(named(m, "mixed_5b").out, test::sample({35, 35, 320}));
    EXPECT_EQ(named(m, "mixed_6a").out, test::sample({17, 17, 1088}));
    EXPECT_EQ(named(m, "mixed_7a").out, test::sample({8, 8, 2080}));
    const struct {
        const char* block;
        double scale;
    } scales[] = {{"block35_10", 0.17}, {"block17_20", 0.1}, {"block8_9", 0.2}, {"block8_10", 1.0}};
    for (const auto& s : scales) {
        const auto& n = named(m, s.block);
        EXPECT_EQ(n.layer->name, "CustomScaleLayer");
        EXPECT_DOUBLE_EQ(memo::as_real(n.param("scale")), s.scale) << s.block;
        ASSERT_EQ(n.inputs.size(), 2u);
        EXPECT_EQ(m[n.inputs[1]].name, std::string(s.block) + "_conv");  // x + up * scale
        EXPECT_TRUE(memo::as_bool(m[n.inputs[1]].param("use_bias")));
    }
    EXPECT_EQ(m[named(m, "conv_7b").inputs[0]].name, "block8_10");  // the last block has no activation
    EXPECT_EQ(named(m, "conv_7b_ac").out, test::sample({8, 8, 1536}));
    EXPECT_EQ(named(m, "conv2d_202").out, test::sample({8, 8, 256}));
}

TEST(Zoo, DenseNet121FollowsKerasLayerForLayer) {
    const memo::model m = memo::zoo::build("densenet121-imagenet");
    EXPECT_EQ(named(m, "zero_padding2d").out, test::sample({230, 230, 3}));
    EXPECT_EQ(named(m, "conv1/conv").out, test::sample({112, 112, 64}));
    EXPECT_EQ(named(m, "zero_padding2d_1").out, test::sample({114, 114, 64}));
    EXPECT_EQ(named(m, "conv2_block6_concat").out, test::sample({56, 56, 256}));
    EXPECT_EQ(named(m, "pool2_pool").out, test::sample({28, 28, 128}));
    EXPECT_EQ(named(m, "pool4_conv").out, test::sample({14, 14, 512}));
    EXPECT_EQ(named(m, "conv5_block16_concat").out, test::sample({7, 7, 1024}));
    EXPECT_DOUBLE_EQ(memo::as_real(named(m, "bn").param("epsilon")), 1.001e-5);
    EXPECT_FALSE(memo::as_bool(named(m, "conv4_block24_2_conv").param("use_bias")));
    EXPECT_EQ(count_class(m, "Concatenate"), 58u);
}

TEST(Zoo, MobileNetV2UsesReLU6AndCorrectPad) {
    const memo::model m = memo::zoo::build("mobilenet.v2-imagenet");
    EXPECT_EQ(count_class(m, "ReLU"), 35u);
    for (const auto& n : m.nodes) {
        if (n.layer->name == "ReLU") {
            EXPECT_DOUBLE_EQ(memo::as_real(n.param("max_value")), 6.0) << n.name;
        }
    }
    EXPECT_EQ(count_class(m, "ZeroPadding2D"), 4u);
    EXPECT_EQ(std::get<memo::ints>(named(m, "block_1_pad").param("padding")), (memo::ints{0, 1, 0, 1}));
    EXPECT_EQ(named(m, "block_13_depthwise").out, test::sample({7, 7, 576}));
    EXPECT_EQ(count_class(m, "Add"), 10u);
    EXPECT_DOUBLE_EQ(memo::as_real(named(m, "Conv_1_bn").param("momentum")), 0.999);
    EXPECT_EQ(named(m, "out_relu").out, test::sample({7, 7, 1280}));
    EXPECT_EQ(named(m, "global_average_pooling2d").out, test::sample({1280}));
}

TEST(Zoo, XceptionFollowsKerasLayerForLayer) {
    const memo::model m = memo::zoo::build("xception-imagenet");
    EXPECT_EQ(named(m, "block1_conv2_act").out, test::sample({147, 147, 64}));
    EXPECT_EQ(named(m, "add").out, test::sample({74, 74, 128}));
    EXPECT_EQ(named(m, "add_2").out, test::sample({19, 19, 728}));
    EXPECT_EQ(named(m, "add_11").out, test::sample({10, 10, 1024}));
    EXPECT_EQ(named(m, "conv2d_3").out, test::sample({10, 10, 1024}));
    EXPECT_EQ(count_class(m, "SeparableConv2D"), 34u);
    EXPECT_EQ(named(m, "block14_sepconv2_act").out, test::sample({10, 10, 2048}));
}

TEST(Zoo, SmallSeedsMatchTheirSources) {
    const memo::model lenet = memo::zoo::build("lenet5-mnist");
    EXPECT_EQ(lenet[0].out, test::sample({28, 28, 1}));
    EXPECT_EQ(memo::as_str(named(lenet, "conv2d").param("activation")), "relu");
    EXPECT_EQ(named(lenet, "flatten").out, test::sample({400}));
    const memo::model alexnet = memo::zoo::build("alexnet-cifar10");
    EXPECT_EQ(named(alexnet, "conv2d").out, test::sample({16, 16, 96}));
    EXPECT_EQ(named(alexnet, "flatten").out, test::sample({256}));
    const memo::model sine = memo::zoo::build("lstm0-sinewave");
    EXPECT_EQ(sine[0].out, test::sample({49, 1}));
    EXPECT_EQ(named(sine, "lstm").out, test::sample({49, 50}));
    EXPECT_EQ(named(sine, "lstm_1").out, test::sample({100}));
    const memo::model price = memo::zoo::build("lstm2-price");
    EXPECT_EQ(price[0].out, test::sample({1, 240}));
    EXPECT_EQ(named(price, "lstm").out, test::sample({25}));
}

TEST(Zoo, CountWeightsCoversTheWeightedLayers) {
    memo::builder b(test::reg());
    const int x = b.input({10, 8});
    const int gru = b.add("GRU", {x}, {{"units", std::int64_t{4}}, {"return_sequences", true}});
    const int rnn = b.add("SimpleRNN", {gru}, {{"units", std::int64_t{3}}, {"return_sequences", true}});
    const int bi = b.add("Bidirectional", {rnn}, {{"units", std::int64_t{2}}, {"return_sequences", true}});
    const int ln = b.add("LayerNormalization", {bi});
    const int prelu = b.add("PReLU", {ln}, {{"shared_axes", std::int64_t{-1}}});
    const int conv = b.add("Conv1D", {prelu}, {{"filters", std::int64_t{5}}, {"kernel_size", memo::ints{3}}, {"use_bias", false}});
    const int lc = b.add("LocallyConnected1D", {conv}, {{"filters", std::int64_t{2}}, {"kernel_size", memo::ints{3}}});
    b.output(lc);
    const memo::model m = b.finish();
    EXPECT_EQ(memo::count_weights(m, static_cast<std::size_t>(gru)), 3 * (4 * (8 + 4) + 2 * 4));  // reset_after
    EXPECT_EQ(memo::count_weights(m, static_cast<std::size_t>(rnn)), 3 * (4 + 3) + 3);
    EXPECT_EQ(memo::count_weights(m, static_cast<std::size_t>(bi)), 2 * 4 * (2 * (3 + 2) + 2));
    EXPECT_EQ(memo::count_weights(m, static_cast<std::size_t>(ln)), 2 * 4);
    EXPECT_EQ(memo::count_weights(m, static_cast<std::size_t>(prelu)), 4);  // (10, 4) sharing the time axis
    EXPECT_EQ(memo::count_weights(m, static_cast<std::size_t>(conv)), 3 * 4 * 5);
    EXPECT_EQ(memo::count_weights(m, static_cast<std::size_t>(lc)), 6 * (3 * 5 * 2) + 6 * 2);
}

TEST(Zoo, KerasJsonRoundTripKeepsStructureAndNames) {
    for (auto name : memo::zoo::names()) {
        SCOPED_TRACE(std::string(name));
        const memo::model m = memo::zoo::build(name);
        const memo::model back = memo::io::keras_from_json(memo::io::keras_to_json(m), test::reg(), std::string(name));
        EXPECT_EQ(memo::structural_hash(back), memo::structural_hash(m));
        ASSERT_EQ(back.nodes.size(), m.nodes.size());
        for (std::size_t i = 0; i < m.nodes.size(); ++i) EXPECT_EQ(back.nodes[i].name, m.nodes[i].name);
    }
}

}  // namespace test_zoo_zoo_test
