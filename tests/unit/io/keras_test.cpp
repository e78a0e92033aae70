// Keras model files: MEMO's seed models import, our models export and import back unchanged,
// Keras' encodings are read, and bad input fails with a message naming the file and the layer.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "memo/io/keras.hpp"
#include "memo/layers/all.hpp"

namespace test_io_keras_test {

namespace {

using memo::io::json;
namespace fs = std::filesystem;

const memo::registry& reg() { return memo::default_registry(); }

std::vector<std::string> seed_files() {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(std::string(MEMO_TEST_DATA_DIR) + "/memo/synthesized_models"))
        if (e.path().extension() == ".json") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    return files;
}

json read_json(const std::string& path) {
    std::ifstream in(path);
    return json::parse(in);
}

std::string write_temp(const std::string& name, const std::string& text) {
    const auto path = ::testing::TempDir() + "memo_keras_" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

/// The message of the memo::error that f throws ("" when it throws none).
template <class F>
std::string error_of(F f) {
    try {
        f();
    } catch (const memo::error& e) {
        return e.what();
    }
    return "";
}

const memo::node& by_name(const memo::model& m, const std::string& name) {
    for (const auto& n : m.nodes)
        if (n.name == name) return n;
    throw std::runtime_error("no node " + name);
}

memo::model round_trip(const memo::model& m) { return memo::io::keras_from_json(memo::io::keras_to_json(m), reg(), "round trip"); }

/// A Functional model file from a list of layers: {class, name, config, inputs}.
json functional(json layers, std::vector<std::string> outputs) {
    json outs = json::array();
    for (const auto& o : outputs) outs.push_back({o, 0, 0});
    return {{"class_name", "Functional"}, {"config", {{"name", "m"}, {"layers", std::move(layers)}, {"input_layers", json::array()}, {"output_layers", outs}}}};
}
json layer(const std::string& cls, const std::string& name, json config, std::vector<std::string> inputs) {
    json edges = json::array();
    for (const auto& s : inputs) edges.push_back({s, 0, 0, json::object()});
    config["name"] = name;
    return {{"class_name", cls}, {"name", name}, {"config", std::move(config)}, {"inbound_nodes", inputs.empty() ? json::array() : json::array({edges})}};
}
json input(const std::string& name, json batch_shape, const std::string& dtype = "float32") {
    return layer("InputLayer", name, {{"batch_input_shape", std::move(batch_shape)}, {"dtype", dtype}}, {});
}

TEST(KerasImport, AllSeedModelsImportWithOneNodePerLayer) {
    const auto files = seed_files();
    ASSERT_EQ(files.size(), 10u);
    for (const auto& f : files) {
        SCOPED_TRACE(f);
        const json j = read_json(f);
        const auto m = memo::io::load_keras(f, reg());
        EXPECT_EQ(m.nodes.size(), j["config"]["layers"].size());
        const auto ok = memo::validate(m);
        EXPECT_TRUE(ok) << (ok ? "" : ok.reason());
        EXPECT_EQ(m.outputs.size(), j["config"]["output_layers"].size());

        std::map<std::string, int> file_classes, our_classes;
        for (const auto& l : j["config"]["layers"]) ++file_classes[l["class_name"].get<std::string>()];
        for (const auto& n : m.nodes) ++our_classes[std::string(n.layer->name)];
        EXPECT_EQ(our_classes, file_classes);
        for (const auto& l : j["config"]["layers"]) EXPECT_EQ(by_name(m, l["name"]).layer->name, l["class_name"].get<std::string>());
    }
}

TEST(KerasImport, SeedModelsRoundTripThroughExport) {
    for (const auto& f : seed_files()) {
        SCOPED_TRACE(f);
        const auto m = memo::io::load_keras(f, reg());
        const auto back = round_trip(m);
        EXPECT_EQ(memo::structural_hash(back), memo::structural_hash(m));
        for (std::size_t i = 0; i < m.nodes.size(); ++i) EXPECT_EQ(back.nodes[i].name, m.nodes[i].name);
    }
}

TEST(KerasImport, SeedValuesAreReadInOurForm) {
    const auto m = memo::io::load_keras(std::string(MEMO_TEST_DATA_DIR) + "/memo/synthesized_models/alexnet-cifar10_orig-simplified.json", reg());
    const auto& conv = by_name(m, "conv2d_1_1");
    EXPECT_EQ(conv.param("kernel_size"), memo::value(memo::ints{3, 3}));
    EXPECT_EQ(conv.param("kernel_initializer"), memo::value("VarianceScaling"));
    EXPECT_EQ(conv.param("kernel_regularizer"), memo::value(memo::none));
    EXPECT_EQ(conv.out, (memo::shape{-1, 16, 16, 96}));
    // "axis": [3] on a rank-4 input
    EXPECT_EQ(by_name(m, "batch_normalization_11_insert").param("axis"), memo::value(std::int64_t{-1}));
    // padding [[3, 3], [4, 4], [0, 0]], constant_values 2
    const auto& pad = by_name(m, "custom_pad_layer");
    EXPECT_EQ(pad.param("padding"), memo::value(memo::ints{3, 3, 4, 4, 0, 0}));
    EXPECT_EQ(pad.param("constant_values"), memo::value(2.0));
    EXPECT_EQ(by_name(m, "custom_crop_layer").param("cropping"), memo::value(memo::ints{0, 0, 0, 0, 7, 8}));
}

TEST(KerasImport, ReadsKerasEncodingsInAnyLayerOrder) {
    // Listed outputs first: the importer sorts the layers by their edges.
    json layers = json::array({
        layer("Reshape", "flat", {{"target_shape", {-1, 8}}}, {"cat"}),
        layer("Softmax", "soft", {{"axis", 3}}, {"cat"}),
        layer("Concatenate", "cat", {{"axis", 3}}, {"conv", "bn"}),
        layer("BatchNormalization", "bn", {{"axis", {3}}, {"epsilon", 1}}, {"conv"}),
        layer("Cropping2D", "crop", {{"cropping", {1, 2}}}, {"pad"}),
        layer("ZeroPadding2D", "pad", {{"padding", 1}}, {"conv"}),
        layer("Conv2D", "conv",
              {{"filters", 4},
               {"kernel_size", 3},
               {"padding", "same"},
               {"groups", 1},
               {"kernel_initializer", {{"class_name", "GlorotUniform"}, {"config", {{"seed", nullptr}}}, {"shared_object_id", 4}}},
               {"kernel_regularizer", {{"class_name", "L1L2"}, {"config", {{"l1", 0.0}, {"l2", 0.01}}}}},
               {"bias_regularizer", {{"class_name", "L1"}, {"config", {{"l1", 0.01}}}}},
               {"kernel_constraint", {{"class_name", "MaxNorm"}, {"config", {{"max_value", 2}}}}}},
              {"in"}),
        input("in", {nullptr, 16, 16, 3}),
    });
    const auto m = memo::io::keras_from_json(functional(layers, {"soft", "crop", "flat"}), reg(), "encodings.json");
    ASSERT_EQ(m.nodes.size(), 8u);
    EXPECT_EQ(m.nodes[0].name, "in");
    const auto& conv = by_name(m, "conv");
    EXPECT_EQ(conv.param("kernel_size"), memo::value(memo::ints{3, 3}));
    EXPECT_EQ(conv.param("strides"), memo::value(memo::ints{1, 1}));  // Keras' default
    EXPECT_EQ(conv.param("kernel_initializer"), memo::value("glorot_uniform"));
    EXPECT_EQ(conv.param("kernel_regularizer"), memo::value("l2"));
    EXPECT_EQ(conv.param("bias_regularizer"), memo::value("l1"));
    EXPECT_EQ(conv.param("kernel_constraint"), memo::value("MaxNorm"));
    EXPECT_EQ(conv.out, (memo::shape{-1, 16, 16, 4}));
    EXPECT_EQ(by_name(m, "pad").param("padding"), memo::value(memo::ints{1, 1, 1, 1}));
    EXPECT_EQ(by_name(m, "crop").param("cropping"), memo::value(memo::ints{1, 1, 2, 2}));
    EXPECT_EQ(by_name(m, "crop").out, (memo::shape{-1, 16, 14, 4}));
    EXPECT_EQ(by_name(m, "bn").param("axis"), memo::value(std::int64_t{-1}));
    EXPECT_EQ(by_name(m, "bn").param("epsilon"), memo::value(1.0));
    EXPECT_EQ(by_name(m, "cat").param("axis"), memo::value(std::int64_t{-1}));
    EXPECT_EQ(by_name(m, "cat").out, (memo::shape{-1, 16, 16, 8}));
    EXPECT_EQ(by_name(m, "soft").param("axis"), memo::value(std::int64_t{-1}));
    EXPECT_EQ(by_name(m, "flat").param("target_shape"), memo::value(memo::ints{256, 8}));
    ASSERT_EQ(m.outputs.size(), 3u);
    EXPECT_EQ(m[m.outputs[0]].name, "soft");
    EXPECT_EQ(memo::structural_hash(round_trip(m)), memo::structural_hash(m));
}

TEST(KerasImport, SequentialModelsImport) {
    const json seq = {{"class_name", "Sequential"},
                      {"config",
                       {{"name", "seq"},
                        {"layers",
                         {{{"class_name", "Conv2D"},
                           {"config", {{"name", "c"}, {"batch_input_shape", {nullptr, 8, 8, 3}}, {"dtype", "float64"}, {"filters", 2}, {"kernel_size", 3}}}},
                          {{"class_name", "MaxPooling2D"}, {"config", {{"name", "p"}, {"pool_size", 2}}}},
                          {{"class_name", "Flatten"}, {"config", {{"name", "f"}}}},
                          {{"class_name", "Dense"}, {"config", {{"name", "d"}, {"units", 5}}}}}}}}};
    const auto m = memo::io::keras_from_json(seq, reg(), "seq.json");
    ASSERT_EQ(m.nodes.size(), 5u);  // an InputLayer from batch_input_shape, then the four layers
    EXPECT_EQ(m.nodes[0].layer->name, "InputLayer");
    EXPECT_EQ(m.nodes[0].type, memo::dtype::float64);
    EXPECT_EQ(m.nodes[1].inputs, std::vector<int>{0});
    EXPECT_EQ(m.nodes[4].inputs, std::vector<int>{3});
    EXPECT_EQ(m.nodes[2].out, (memo::shape{-1, 3, 3, 2}));
    EXPECT_EQ(m.nodes[4].out, (memo::shape{-1, 5}));
    EXPECT_EQ(m.nodes[4].type, memo::dtype::float64);
    EXPECT_EQ(m.outputs, std::vector<int>{4});

    // The same with an InputLayer listed first, as Keras 2 writes it.
    json with_input = seq;
    const json x = {{"class_name", "InputLayer"}, {"config", {{"name", "x"}, {"batch_input_shape", {nullptr, 8, 8, 3}}, {"dtype", "float64"}}}};
    with_input["config"]["layers"].insert(with_input["config"]["layers"].begin(), x);
    const auto m2 = memo::io::keras_from_json(with_input, reg(), "seq2.json");
    EXPECT_EQ(m2.nodes[0].name, "x");
    EXPECT_EQ(memo::structural_hash(m2), memo::structural_hash(m));
}

TEST(KerasImport, WrappersImport) {
    json layers = json::array({
        input("in", {nullptr, 10, 4}),
        layer("Bidirectional", "bi",
              {{"merge_mode", "concat"},
               {"layer", {{"class_name", "LSTM"}, {"config", {{"name", "lstm"}, {"units", 6}, {"return_sequences", true}, {"activation", nullptr}}}}}},
              {"in"}),
        layer("TimeDistributed", "td", {{"layer", {{"class_name", "ReLU"}, {"config", {{"name", "re_lu"}}}}}}, {"bi"}),
    });
    const auto m = memo::io::keras_from_json(functional(layers, {"td"}), reg(), "wrappers.json");
    ASSERT_EQ(m.nodes.size(), 3u);
    const auto& bi = by_name(m, "bi");
    EXPECT_EQ(bi.param("merge_mode"), memo::value("concat"));
    EXPECT_EQ(bi.param("units"), memo::value(std::int64_t{6}));
    EXPECT_EQ(bi.param("return_sequences"), memo::value(true));
    EXPECT_EQ(bi.out, (memo::shape{-1, 10, 12}));
    EXPECT_EQ(by_name(m, "td").layer->name, "TimeDistributed");
    EXPECT_EQ(by_name(m, "td").out, (memo::shape{-1, 10, 12}));

    const json out = memo::io::keras_to_json(m);
    const auto& bi_config = out["config"]["layers"][1]["config"];
    EXPECT_EQ(bi_config["merge_mode"], "concat");
    EXPECT_EQ(bi_config["layer"]["class_name"], "LSTM");
    EXPECT_EQ(bi_config["layer"]["config"]["units"], 6);
    EXPECT_EQ(bi_config["layer"]["config"]["return_sequences"], true);
    EXPECT_EQ(out["config"]["layers"][2]["config"]["layer"]["class_name"], "ReLU");
    EXPECT_EQ(memo::structural_hash(round_trip(m)), memo::structural_hash(m));

    // A Bidirectional around anything but an LSTM is not ours.
    layers[1]["config"]["layer"]["class_name"] = "GRU";
    const auto msg = error_of([&] { (void)memo::io::keras_from_json(functional(layers, {"td"}), reg(), "gru.json"); });
    EXPECT_NE(msg.find("gru.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'bi'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("GRU"), std::string::npos) << msg;
}

TEST(KerasImport, UnknownClassNamesTheFileAndLayer) {
    const auto seed = std::string(MEMO_TEST_DATA_DIR) + "/memo/synthesized_models/lenet5-mnist_orig-simplified.json";
    json j = read_json(seed);
    auto& l = j["config"]["layers"][2];
    l["class_name"] = "FancyLayer";
    const auto name = l["name"].get<std::string>();
    const auto path = write_temp("unknown_class.json", j.dump());
    const auto msg = error_of([&] { (void)memo::io::load_keras(path, reg()); });
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("layer '" + name + "' (class FancyLayer): unknown layer class"), std::string::npos) << msg;
}

TEST(KerasImport, OutOfDomainValueNamesLayerParameterValueAndDomain) {
    const auto seed = std::string(MEMO_TEST_DATA_DIR) + "/memo/synthesized_models/lenet5-mnist_orig-simplified.json";
    json j = read_json(seed);
    std::string name;
    for (auto& l : j["config"]["layers"])
        if (l["class_name"] == "Conv2D") {
            l["config"]["kernel_size"] = {0, 3};
            name = l["name"];
            break;
        }
    ASSERT_FALSE(name.empty());
    const auto path = write_temp("out_of_domain.json", j.dump());
    const auto msg = error_of([&] { (void)memo::io::load_keras(path, reg()); });
    const auto& conv = *reg().find("Conv2D");
    const auto domain = conv.params[static_cast<std::size_t>(conv.param_index("kernel_size"))].dom.describe();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("'" + name + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("kernel_size = [0,3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find(domain), std::string::npos) << msg;
}

TEST(KerasImport, MalformedAndMissingFilesNameTheFile) {
    const auto not_json = write_temp("not_json.json", "{\"class_name\": \"Functional\", \"config\": ");
    auto msg = error_of([&] { (void)memo::io::load_keras(not_json, reg()); });
    EXPECT_NE(msg.find(not_json), std::string::npos) << msg;

    const auto no_layers = write_temp("no_layers.json", R"({"class_name": "Functional", "config": {"name": "m"}})");
    msg = error_of([&] { (void)memo::io::load_keras(no_layers, reg()); });
    EXPECT_NE(msg.find(no_layers), std::string::npos) << msg;
    EXPECT_NE(msg.find("config.layers"), std::string::npos) << msg;

    const auto wrong_type = write_temp("wrong_type.json", R"({"class_name": "Functional", "config": {"layers": [{"class_name": 3}]}})");
    msg = error_of([&] { (void)memo::io::load_keras(wrong_type, reg()); });
    EXPECT_NE(msg.find(wrong_type), std::string::npos) << msg;

    const auto missing = ::testing::TempDir() + "memo_keras_no_such_file.json";
    msg = error_of([&] { (void)memo::io::load_keras(missing, reg()); });
    EXPECT_NE(msg.find(missing), std::string::npos) << msg;
}

TEST(KerasImport, GraphErrorsNameTheLayer) {
    json layers = json::array({input("in", {nullptr, 8}), layer("Dense", "d", {{"units", 3}}, {"in"}), layer("Dense", "e", {{"units", 3}}, {"nowhere"})});
    auto msg = error_of([&] { (void)memo::io::keras_from_json(functional(layers, {"e"}), reg(), "edges.json"); });
    EXPECT_NE(msg.find("edges.json: layer 'e' (class Dense)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'nowhere'"), std::string::npos) << msg;

    // A layer applied twice (two inbound nodes) is a shared layer, which a node cannot express.
    layers[2] = layer("Dense", "e", {{"units", 3}}, {"d"});
    layers[1]["inbound_nodes"].push_back(layers[1]["inbound_nodes"][0]);
    msg = error_of([&] { (void)memo::io::keras_from_json(functional(layers, {"e"}), reg(), "shared.json"); });
    EXPECT_NE(msg.find("shared.json: layer 'd' (class Dense)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("shared"), std::string::npos) << msg;

    // Shapes that do not fit: a kernel larger than the input.
    json conv = json::array({input("in", {nullptr, 4, 4, 1}), layer("Conv2D", "big", {{"filters", 2}, {"kernel_size", 5}}, {"in"})});
    msg = error_of([&] { (void)memo::io::keras_from_json(functional(conv, {"big"}), reg(), "shape.json"); });
    EXPECT_NE(msg.find("shape.json: layer 'big' (class Conv2D)"), std::string::npos) << msg;
}

TEST(KerasExport, WritesKerasEncodings) {
    const auto m = memo::io::load_keras(std::string(MEMO_TEST_DATA_DIR) + "/memo/synthesized_models/densenet121-imagenet_orig-simplified.json", reg());
    const json j = memo::io::keras_to_json(m);
    EXPECT_EQ(j["class_name"], "Functional");
    EXPECT_EQ(j["keras_version"], "2.8.0");
    EXPECT_EQ(j["backend"], "tensorflow");
    ASSERT_EQ(j["config"]["layers"].size(), m.nodes.size());
    EXPECT_EQ(j["config"]["input_layers"], json::array({{"input_18", 0, 0}}));
    std::map<std::string, json> configs;
    for (const auto& l : j["config"]["layers"]) {
        EXPECT_EQ(l["config"]["name"], l["name"]);
        configs[l["name"]] = l["config"];
    }
    const auto& in = configs["input_18"];
    EXPECT_EQ(in["batch_input_shape"], json::parse("[null, 224, 224, 3]"));
    EXPECT_EQ(in["dtype"], "float32");
    EXPECT_FALSE(in.contains("trainable"));
    EXPECT_EQ(configs["zero_padding2d_1"]["padding"], json::parse("[[3, 3], [3, 3]]"));
    EXPECT_EQ(configs["cropping2d_1"]["cropping"], json::parse("[[22, 22], [22, 22]]"));
    EXPECT_EQ(configs["concatenate_1_copy_ML"]["axis"], -1);
    for (const auto& [name, c] : configs) {
        if (name.starts_with("custom_pad_layer")) {
            EXPECT_TRUE(c["padding"][0].is_array()) << name;
        }
    }

    // Initializers, regularizers and constraints as Keras serializes them.
    memo::model small;
    small.nodes.push_back(memo::make_node(*reg().find("InputLayer")));
    small.nodes[0].set("shape", memo::ints{6});
    memo::node dense = memo::make_node(*reg().find("Dense"));
    dense.inputs = {0};
    dense.set("kernel_regularizer", "l1");
    dense.set("kernel_constraint", "MaxNorm");
    small.nodes.push_back(dense);
    small.nodes.push_back(dense);  // no names: the export makes unique ones
    small.nodes[2].inputs = {1};
    small.outputs = {2};
    ASSERT_TRUE(memo::infer_shapes(small));
    const json s = memo::io::keras_to_json(small);
    const auto& d = s["config"]["layers"][1]["config"];
    EXPECT_EQ(d["kernel_initializer"], json::parse(R"({"class_name": "GlorotUniform", "config": {}})"));
    EXPECT_EQ(d["bias_initializer"], json::parse(R"({"class_name": "Zeros", "config": {}})"));
    EXPECT_EQ(d["kernel_regularizer"], json::parse(R"({"class_name": "L1", "config": {"l1": 0.01}})"));
    EXPECT_TRUE(d["bias_regularizer"].is_null());
    EXPECT_EQ(d["kernel_constraint"], json::parse(R"({"class_name": "MaxNorm", "config": {}})"));
    EXPECT_EQ(d["trainable"], true);
    EXPECT_EQ(d["dtype"], "float32");
    EXPECT_EQ(s["config"]["layers"][1]["name"], "dense_1");
    EXPECT_EQ(s["config"]["layers"][2]["name"], "dense_2");
    EXPECT_EQ(s["config"]["layers"][2]["inbound_nodes"], json::parse(R"([[["dense_1", 0, 0, {}]]])"));
    EXPECT_EQ(memo::structural_hash(round_trip(small)), memo::structural_hash(small));
}

TEST(KerasExport, DtypesFollowInputsAndCasts) {
    json layers = json::array({input("in", {nullptr, 6, 4}, "float16"), layer("Dense", "d", {{"units", 3}, {"dtype", "float64"}}, {"in"}),
                               layer("CustomCastLayer", "cast", {{"target_dtype", "float64"}, {"dtype", "float16"}}, {"d"}), layer("ReLU", "r", {}, {"cast"})});
    const auto m = memo::io::keras_from_json(functional(layers, {"r"}), reg(), "dtypes.json");
    EXPECT_EQ(m.nodes[0].type, memo::dtype::float16);
    EXPECT_EQ(m.nodes[1].type, memo::dtype::float16);  // a layer's config dtype does not set it
    EXPECT_EQ(m.nodes[2].type, memo::dtype::float64);
    EXPECT_EQ(m.nodes[3].type, memo::dtype::float64);
    const json j = memo::io::keras_to_json(m);
    EXPECT_EQ(j["config"]["layers"][0]["config"]["dtype"], "float16");
    EXPECT_EQ(j["config"]["layers"][3]["config"]["dtype"], "float64");
    EXPECT_EQ(memo::structural_hash(round_trip(m)), memo::structural_hash(m));
}

TEST(KerasExport, SaveThenLoad) {
    const auto m = memo::io::load_keras(std::string(MEMO_TEST_DATA_DIR) + "/memo/synthesized_models/xception-imagenet_orig-simplified.json", reg());
    const auto path = ::testing::TempDir() + "memo_keras_saved.json";
    memo::io::save_keras(m, path);
    EXPECT_EQ(memo::structural_hash(memo::io::load_keras(path, reg())), memo::structural_hash(m));
}

/// One model per layer class: an input of an accepted rank, the layer with drawn parameter values.
memo::model one_layer_model(const memo::layer_def& L, memo::rng& r) {
    std::vector<int> ranks;
    L.ranks.for_each([&](int k) { ranks.push_back(k); });
    const int rank = ranks[r.index(ranks.size())];
    memo::model m;
    memo::node in = memo::make_node(*reg().find("InputLayer"));
    memo::ints dims;
    for (int i = 1; i < rank; ++i) dims.push(r.uniform(4, 12));
    in.set("shape", dims);
    in.set("dtype", reg().find("InputLayer")->params[1].dom.init(r));
    m.nodes.push_back(in);
    memo::node n = memo::make_node(L);
    for (std::size_t p = 0; p < L.params.size(); ++p) n.params[p] = L.params[p].dom.init(r);
    // The adapters' lists have no useful draws: give them amounts that fit the input.
    std::int64_t elements = 1;
    for (auto d : dims) elements *= d;
    if (L.param_index("target_shape") >= 0) n.set("target_shape", memo::ints{elements});
    for (const char* p : {"padding", "cropping"})
        if (L.param_index(p) >= 0 && std::holds_alternative<memo::int_list>(L.params[static_cast<std::size_t>(L.param_index(p))].dom.d))
            n.set(p, memo::ints::filled(2 * (rank - 1), r.uniform(0, 1)));
    n.inputs.assign(static_cast<std::size_t>(L.arity.min), 0);
    m.nodes.push_back(n);
    m.outputs = {1};
    return m;
}

TEST(KerasExport, EveryLayerClassRoundTrips) {
    memo::rng r(42);
    for (const auto& L : reg()) {
        if (L.arity.max == 0) continue;
        SCOPED_TRACE(std::string(L.name));
        int valid = 0;
        for (int trial = 0; trial < 200 && valid < 10; ++trial) {
            auto m = one_layer_model(L, r);
            if (!memo::infer_shapes(m)) continue;
            ++valid;
            const json j = memo::io::keras_to_json(m);
            memo::model back;
            ASSERT_NO_THROW(back = memo::io::keras_from_json(j, reg(), "round trip")) << j.dump();
            EXPECT_EQ(memo::structural_hash(back), memo::structural_hash(m)) << j.dump();
        }
        EXPECT_GT(valid, 0) << "no valid model of " << L.name;
    }
}

}  // namespace

}  // namespace test_io_keras_test
