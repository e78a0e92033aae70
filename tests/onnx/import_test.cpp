// ONNX import: foreign graphs (NCHW, as PyTorch writes them) map onto memo's channels_last
// layers, files memo wrote come back exactly, and bad input fails with memo::error naming the
// node, the operator and the cause -- never with a crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "memo/core/builder.hpp"
#include "memo/io/json.hpp"
#include "memo/layers/all.hpp"
#include "memo/onnx/import.hpp"
#include "memo/tensors/weights.hpp"

namespace test_onnx_import_test {

namespace {

namespace fs = std::filesystem;
using i64 = std::int64_t;

const memo::registry& reg() { return memo::default_registry(); }

/// Builds small ONNX graphs. Dimensions of -1 in inputs are symbolic ("N").
struct graph {
    ::onnx::ModelProto m;
    ::onnx::GraphProto* g;

    explicit graph(i64 opset = 13) {
        m.set_ir_version(8);
        m.set_producer_name("memo-test");
        auto* o = m.add_opset_import();
        o->set_domain("");
        o->set_version(opset);
        g = m.mutable_graph();
        g->set_name("test");
    }
    void input(const std::string& name, std::vector<i64> dims, int elem = ::onnx::TensorProto::FLOAT) {
        auto* vi = g->add_input();
        vi->set_name(name);
        auto* t = vi->mutable_type()->mutable_tensor_type();
        t->set_elem_type(elem);
        auto* s = t->mutable_shape();
        for (auto d : dims) {
            auto* dim = s->add_dim();
            if (d < 0) dim->set_dim_param("N");
            else dim->set_dim_value(d);
        }
    }
    void output(const std::string& name) { g->add_output()->set_name(name); }
    /// A float initializer of this shape (zeros: only the shape matters to memo).
    void weight(const std::string& name, std::vector<i64> dims) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(::onnx::TensorProto::FLOAT);
        i64 n = 1;
        for (auto d : dims) t->add_dims(d), n *= d;
        for (i64 i = 0; i < n; ++i) t->add_float_data(0.0f);
    }
    /// A float weight holding 0, 1, 2, ... in ONNX's order, so a test can tell where each went.
    void counting(const std::string& name, std::vector<i64> dims) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(::onnx::TensorProto::FLOAT);
        i64 n = 1;
        for (auto d : dims) t->add_dims(d), n *= d;
        for (i64 i = 0; i < n; ++i) t->add_float_data(static_cast<float>(i));
    }
    void ints(const std::string& name, std::vector<i64> values) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(::onnx::TensorProto::INT64);
        t->add_dims(static_cast<i64>(values.size()));
        for (auto v : values) t->add_int64_data(v);
    }
    void floats(const std::string& name, std::vector<float> values, bool scalar = false) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(::onnx::TensorProto::FLOAT);
        if (!scalar) t->add_dims(static_cast<i64>(values.size()));
        for (auto v : values) t->add_float_data(v);
    }
    ::onnx::NodeProto& node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out, const std::string& name = "") {
        auto* n = g->add_node();
        n->set_op_type(op);
        n->set_name(name.empty() ? out.at(0) : name);
        for (auto& s : in) n->add_input(s);
        for (auto& s : out) n->add_output(s);
        return *n;
    }
    std::string bytes() const {
        std::string s;
        m.SerializeToString(&s);
        return s;
    }
    memo::model import() const { return memo::onnx::from_onnx_bytes(bytes(), reg(), "test.onnx"); }
};

::onnx::AttributeProto* attr(::onnx::NodeProto& n, const std::string& name, ::onnx::AttributeProto::AttributeType t) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(t);
    return a;
}
void set_int(::onnx::NodeProto& n, const std::string& name, i64 v) { attr(n, name, ::onnx::AttributeProto::INT)->set_i(v); }
void set_float(::onnx::NodeProto& n, const std::string& name, float v) { attr(n, name, ::onnx::AttributeProto::FLOAT)->set_f(v); }
void set_str(::onnx::NodeProto& n, const std::string& name, const std::string& v) { attr(n, name, ::onnx::AttributeProto::STRING)->set_s(v); }
void set_ints(::onnx::NodeProto& n, const std::string& name, std::vector<i64> v) {
    auto* a = attr(n, name, ::onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
}

template <class F>
std::string error_of(F f) {
    try {
        f();
    } catch (const memo::error& e) {
        return e.what();
    }
    return "";
}

std::vector<std::string> classes(const memo::model& m) {
    std::vector<std::string> r;
    for (const auto& n : m.nodes) r.emplace_back(n.layer->name);
    return r;
}
const memo::node& only(const memo::model& m, std::string_view cls, int which = 0) {
    for (const auto& n : m.nodes)
        if (n.layer->name == cls && which-- == 0) return n;
    throw std::runtime_error("no node of class " + std::string(cls));
}
int count(const memo::model& m, std::string_view cls) {
    return static_cast<int>(std::count_if(m.nodes.begin(), m.nodes.end(), [&](const memo::node& n) { return n.layer->name == cls; }));
}
memo::shape sample(std::initializer_list<i64> dims) {
    memo::shape s;
    s.push(memo::shape::unknown);
    for (auto d : dims) s.push(d);
    return s;
}
const memo::shape& output_shape(const memo::model& m, int k = 0) { return m[m.outputs.at(static_cast<std::size_t>(k))].out; }

// A 3x3 convolution of `in` channels to `out`, with bias; pads p on each side.
void conv(graph& g, const std::string& x, const std::string& y, i64 in, i64 out, i64 k, i64 pad, i64 stride = 1, bool bias = true) {
    g.weight(y + "_w", {out, in, k, k});
    std::vector<std::string> ins{x, y + "_w"};
    if (bias) g.weight(y + "_b", {out}), ins.push_back(y + "_b");
    auto& n = g.node("Conv", ins, {y});
    set_ints(n, "kernel_shape", {k, k});
    set_ints(n, "pads", {pad, pad, pad, pad});
    set_ints(n, "strides", {stride, stride});
}

graph lenet() {
    graph g;
    g.input("x", {-1, 1, 28, 28});
    conv(g, "x", "c1", 1, 6, 5, 0);
    g.node("Relu", {"c1"}, {"r1"});
    auto& p1 = g.node("MaxPool", {"r1"}, {"p1"});
    set_ints(p1, "kernel_shape", {2, 2});
    set_ints(p1, "strides", {2, 2});
    conv(g, "p1", "c2", 6, 16, 5, 0);
    g.node("Relu", {"c2"}, {"r2"});
    auto& p2 = g.node("MaxPool", {"r2"}, {"p2"});
    set_ints(p2, "kernel_shape", {2, 2});
    set_ints(p2, "strides", {2, 2});
    g.node("Flatten", {"p2"}, {"f"});
    g.weight("fc1_w", {120, 256});
    g.weight("fc1_b", {120});
    set_int(g.node("Gemm", {"f", "fc1_w", "fc1_b"}, {"fc1"}), "transB", 1);
    g.node("Relu", {"fc1"}, {"r3"});
    g.weight("fc2_w", {120, 10});
    g.node("Gemm", {"r3", "fc2_w"}, {"fc2"});
    set_int(g.node("Softmax", {"fc2"}, {"y"}), "axis", 1);
    g.output("y");
    return g;
}

TEST(OnnxImport, LeNetMapsToChannelsLastLayersWithoutPermutes) {
    const memo::model m = lenet().import();
    EXPECT_EQ(classes(m), (std::vector<std::string>{"InputLayer", "Conv2D", "ReLU", "MaxPooling2D", "Conv2D", "ReLU", "MaxPooling2D", "Flatten", "Dense",
                                                    "ReLU", "Dense", "Softmax"}));
    EXPECT_EQ(m[0].out, sample({28, 28, 1}));
    const auto& c1 = only(m, "Conv2D");
    EXPECT_EQ(memo::as_int(c1.param("filters")), 6);
    EXPECT_EQ(std::get<memo::ints>(c1.param("kernel_size")), (memo::ints{5, 5}));
    EXPECT_EQ(memo::as_str(c1.param("padding")), "valid");
    EXPECT_TRUE(memo::as_bool(c1.param("use_bias")));
    EXPECT_EQ(c1.out, sample({24, 24, 6}));
    EXPECT_EQ(std::get<memo::ints>(only(m, "MaxPooling2D").param("pool_size")), (memo::ints{2, 2}));
    EXPECT_EQ(only(m, "Flatten").out, sample({256}));
    EXPECT_EQ(memo::as_int(only(m, "Dense").param("units")), 120);
    EXPECT_TRUE(memo::as_bool(only(m, "Dense").param("use_bias")));
    EXPECT_FALSE(memo::as_bool(only(m, "Dense", 1).param("use_bias")));
    EXPECT_EQ(memo::as_int(only(m, "Softmax").param("axis")), -1);
    EXPECT_EQ(output_shape(m), sample({10}));
    EXPECT_TRUE(memo::validate(m));
    EXPECT_EQ(only(m, "Conv2D").name, "c1");
}

TEST(OnnxImport, ResNetBlockWithBatchNormAndAdd) {
    graph g;
    g.input("x", {-1, 3, 32, 32});
    conv(g, "x", "stem", 3, 16, 3, 1, 1, false);
    auto bn = [&](const std::string& x, const std::string& y) {
        for (const char* p : {"_s", "_b", "_m", "_v"}) g.weight(y + p, {16});
        auto& n = g.node("BatchNormalization", {x, y + "_s", y + "_b", y + "_m", y + "_v"}, {y});
        set_float(n, "epsilon", 1e-3f);
    };
    bn("stem", "bn0");
    g.node("Relu", {"bn0"}, {"a0"});
    conv(g, "a0", "c1", 16, 16, 3, 1, 1, false);
    bn("c1", "bn1");
    g.node("Relu", {"bn1"}, {"a1"});
    conv(g, "a1", "c2", 16, 16, 3, 1, 1, false);
    bn("c2", "bn2");
    g.node("Add", {"bn2", "a0"}, {"sum"});
    g.node("Relu", {"sum"}, {"a2"});
    conv(g, "a2", "down", 16, 32, 3, 1, 2);  // stride 2, pads 1 on both sides: not Keras' 'same'
    g.node("GlobalAveragePool", {"down"}, {"gap"});
    g.node("Flatten", {"gap"}, {"f"});
    g.weight("fc_w", {32, 10});
    g.node("MatMul", {"f", "fc_w"}, {"y"});
    g.output("y");
    const memo::model m = g.import();
    EXPECT_EQ(count(m, "Permute"), 0);
    EXPECT_EQ(memo::as_str(only(m, "Conv2D").param("padding")), "same");
    EXPECT_FALSE(memo::as_bool(only(m, "Conv2D").param("use_bias")));
    const auto& bn0 = only(m, "BatchNormalization");
    EXPECT_EQ(memo::as_int(bn0.param("axis")), -1);
    EXPECT_NEAR(memo::as_real(bn0.param("epsilon")), 1e-3, 1e-9);
    const auto& add = only(m, "Add");
    ASSERT_EQ(add.inputs.size(), 2u);
    EXPECT_EQ(add.out, sample({32, 32, 16}));
    // Stride 2 with pads (1, 1): Keras' 'same' would pad (0, 1), so an explicit ZeroPadding2D.
    const auto& pad = only(m, "ZeroPadding2D");
    EXPECT_EQ(std::get<memo::ints>(pad.param("padding")), (memo::ints{1, 1, 1, 1}));
    const auto& down = only(m, "Conv2D", 3);
    EXPECT_EQ(memo::as_str(down.param("padding")), "valid");
    EXPECT_EQ(down.out, sample({16, 16, 32}));
    const auto& gap = only(m, "GlobalAveragePooling2D");
    EXPECT_TRUE(memo::as_bool(gap.param("keepdims")));
    EXPECT_EQ(gap.out, sample({1, 1, 32}));
    EXPECT_EQ(output_shape(m), sample({10}));
    EXPECT_TRUE(memo::validate(m));
}

/// x [N, 10, 8] (batch first, as PyTorch's batch_first=True writes it) through Transpose into an
/// LSTM of 16 units.
graph lstm_graph(bool use_y, const std::string& direction = "forward") {
    graph g;
    const i64 dirs = direction == "bidirectional" ? 2 : 1;
    g.input("x", {-1, 10, 8});
    set_ints(g.node("Transpose", {"x"}, {"xt"}), "perm", {1, 0, 2});
    g.weight("W", {dirs, 64, 8});
    g.weight("R", {dirs, 64, 16});
    g.weight("B", {dirs, 128});
    auto& l = g.node("LSTM", {"xt", "W", "R", "B"}, {"Y", "Y_h"}, "lstm");
    set_int(l, "hidden_size", 16);
    if (dirs == 2) set_str(l, "direction", direction);
    if (use_y) {
        if (dirs == 1) {
            g.ints("ax1", {1});
            g.node("Squeeze", {"Y", "ax1"}, {"ys"});
        } else {
            set_ints(g.node("Transpose", {"Y"}, {"yt"}), "perm", {0, 2, 1, 3});
            g.ints("shape", {0, 0, -1});
            g.node("Reshape", {"yt", "shape"}, {"ys"});
        }
        set_ints(g.node("Transpose", {"ys"}, {"y"}), "perm", {1, 0, 2});
    } else {
        g.ints("ax0", {0});
        g.node("Squeeze", {"Y_h", "ax0"}, {"y"});
    }
    g.output("y");
    return g;
}

TEST(OnnxImport, LstmSequenceFoldsTransposesAndSqueeze) {
    const memo::model m = lstm_graph(true).import();
    EXPECT_EQ(classes(m), (std::vector<std::string>{"InputLayer", "LSTM"}));
    EXPECT_EQ(m[0].out, sample({10, 8}));
    const auto& l = only(m, "LSTM");
    EXPECT_EQ(memo::as_int(l.param("units")), 16);
    EXPECT_TRUE(memo::as_bool(l.param("return_sequences")));
    EXPECT_EQ(memo::as_str(l.param("activation")), "tanh");
    EXPECT_EQ(memo::as_str(l.param("recurrent_activation")), "sigmoid");
    EXPECT_EQ(output_shape(m), sample({10, 16}));
}

TEST(OnnxImport, LstmLastStateThenDense) {
    graph g = lstm_graph(false);
    g.g->mutable_output()->Clear();
    g.weight("fc", {16, 3});
    g.weight("fc_b", {3});
    g.node("MatMul", {"y", "fc"}, {"mm"});
    g.node("Add", {"mm", "fc_b"}, {"out"});
    g.output("out");
    const memo::model m = g.import();
    EXPECT_EQ(classes(m), (std::vector<std::string>{"InputLayer", "LSTM", "Dense"}));
    EXPECT_FALSE(memo::as_bool(only(m, "LSTM").param("return_sequences")));
    EXPECT_TRUE(memo::as_bool(only(m, "Dense").param("use_bias")));  // the Add after MatMul is its bias
    EXPECT_EQ(output_shape(m), sample({3}));
}

TEST(OnnxImport, LstmOnSequenceFirstInput) {
    graph g;
    g.input("x", {12, -1, 4});  // [seq, batch, features]: the batch is ONNX's axis 1
    g.weight("W", {1, 20, 4});
    g.weight("R", {1, 20, 5});
    g.node("LSTM", {"x", "W", "R"}, {"", "h"});
    g.output("h");
    const memo::model m = g.import();
    EXPECT_EQ(m[0].out, sample({12, 4}));
    EXPECT_FALSE(memo::as_bool(only(m, "LSTM").param("use_bias")));
    EXPECT_EQ(output_shape(m), sample({5}));
}

TEST(OnnxImport, BidirectionalLstmConcatenatesDirections) {
    graph g = lstm_graph(true, "bidirectional");
    g.g->mutable_output()->Clear();
    g.weight("fc", {32, 5});
    g.weight("fc_b", {5});
    g.node("MatMul", {"y", "fc"}, {"mm"});
    g.node("Add", {"mm", "fc_b"}, {"out"});
    g.output("out");
    const memo::model m = g.import();
    EXPECT_EQ(classes(m), (std::vector<std::string>{"InputLayer", "Bidirectional", "Dense"}));
    const auto& b = only(m, "Bidirectional");
    EXPECT_EQ(memo::as_str(b.param("merge_mode")), "concat");
    EXPECT_EQ(memo::as_int(b.param("units")), 16);
    EXPECT_TRUE(memo::as_bool(b.param("return_sequences")));
    EXPECT_EQ(b.out, sample({10, 32}));
    EXPECT_EQ(output_shape(m), sample({10, 5}));
}

TEST(OnnxImport, GruWithLinearBeforeResetIsResetAfter) {
    graph g;
    g.input("x", {-1, 6, 3});
    set_ints(g.node("Transpose", {"x"}, {"xt"}), "perm", {1, 0, 2});
    g.weight("W", {1, 21, 3});
    g.weight("R", {1, 21, 7});
    g.weight("B", {1, 42});
    auto& n = g.node("GRU", {"xt", "W", "R", "B"}, {"", "h"}, "gru");
    set_int(n, "linear_before_reset", 1);
    set_int(n, "hidden_size", 7);
    g.ints("ax0", {0});
    g.node("Squeeze", {"h", "ax0"}, {"y"});
    g.output("y");
    const memo::model m = g.import();
    EXPECT_EQ(classes(m), (std::vector<std::string>{"InputLayer", "GRU"}));
    const auto& gru = only(m, "GRU");
    EXPECT_EQ(memo::as_int(gru.param("units")), 7);
    EXPECT_TRUE(memo::as_bool(gru.param("reset_after")));
    EXPECT_FALSE(memo::as_bool(gru.param("return_sequences")));
    EXPECT_EQ(output_shape(m), sample({7}));
}

TEST(OnnxImport, SimpleRnnWithReluActivation) {
    graph g;
    g.input("x", {5, -1, 3});
    g.weight("W", {1, 4, 3});
    g.weight("R", {1, 4, 4});
    auto& n = g.node("RNN", {"x", "W", "R"}, {"y"});
    auto* a = attr(n, "activations", ::onnx::AttributeProto::STRINGS);
    a->add_strings("Relu");
    g.output("y");
    const memo::model m = g.import();
    const auto& rnn = only(m, "SimpleRNN");
    EXPECT_EQ(memo::as_str(rnn.param("activation")), "relu");
    EXPECT_TRUE(memo::as_bool(rnn.param("return_sequences")));
    EXPECT_EQ(output_shape(m), sample({5, 4}));
}

TEST(OnnxImport, ConcatOnChannelsIsTheLastAxis) {
    graph g;
    g.input("x", {-1, 3, 16, 16});
    conv(g, "x", "a", 3, 8, 3, 1);
    conv(g, "x", "b", 3, 4, 1, 0);
    set_int(g.node("Concat", {"a", "b"}, {"y"}), "axis", 1);
    g.output("y");
    const memo::model m = g.import();
    const auto& c = only(m, "Concatenate");
    EXPECT_EQ(memo::as_int(c.param("axis")), -1);
    EXPECT_EQ(c.out, sample({16, 16, 12}));
    EXPECT_TRUE(memo::validate(m));
}

TEST(OnnxImport, ConcatOfMoreThanEightInputsGoesInSteps) {
    // A DenseNet block concatenates a dozen tensors; Concatenate takes at most 8.
    graph g;
    g.input("x", {-1, 3, 8, 8});
    std::vector<std::string> parts;
    for (int i = 0; i < 11; ++i) {
        parts.push_back("c" + std::to_string(i));
        conv(g, "x", parts.back(), 3, 2, 1, 0);
    }
    set_int(g.node("Concat", parts, {"y"}), "axis", 1);
    g.output("y");
    const memo::model m = g.import();
    EXPECT_EQ(count(m, "Concatenate"), 2);
    EXPECT_EQ(only(m, "Concatenate", 0).inputs.size(), 8u);
    EXPECT_EQ(only(m, "Concatenate", 1).inputs.size(), 4u);  // the first step's result and the last three
    EXPECT_EQ(output_shape(m), sample({8, 8, 22}));
    EXPECT_TRUE(memo::validate(m));
}

TEST(OnnxImport, SqueezeExcitationBroadcastIsUpSampledThenMultiplied) {
    // x * sigmoid(conv(GlobalAveragePool(x))): N,C,H,W times N,C,1,1.
    graph g;
    g.input("x", {-1, 4, 6, 6});
    g.node("GlobalAveragePool", {"x"}, {"p"});
    conv(g, "p", "e", 4, 4, 1, 0);
    g.node("Sigmoid", {"e"}, {"s"});
    g.node("Mul", {"s", "x"}, {"y"});
    g.output("y");
    const memo::model m = g.import();
    const auto& up = only(m, "UpSampling2D");
    EXPECT_EQ(up.out, sample({6, 6, 4}));
    EXPECT_EQ(only(m, "Multiply").inputs.size(), 2u);
    EXPECT_EQ(output_shape(m), sample({6, 6, 4}));
    EXPECT_TRUE(memo::validate(m));

    // A size past UpSampling's 64 goes in steps (120 = 60 x 2); one it cannot factor is named.
    graph big;
    big.input("x", {-1, 2, 120, 67});
    big.node("GlobalMaxPool", {"x"}, {"p"});
    big.node("Add", {"x", "p"}, {"y"}, "add");
    big.output("y");
    EXPECT_NE(error_of([&] { big.import(); }).find("node 1 'add' (Add): input 1 'p' has shape (N, 2, 1, 1), the other inputs (N, 2, 120, 67)"),
              std::string::npos);
}

TEST(OnnxImport, HardSigmoidOfOtherConstantsAndHardSwish) {
    // PyTorch's hardsigmoid is x / 6 + 1 / 2, not Keras' 0.2 x + 0.5: a ScaleShift and a ReLU capped at 1.
    graph g;
    g.input("x", {-1, 6});
    auto& h = g.node("HardSigmoid", {"x"}, {"h"});
    set_float(h, "alpha", 1.0f / 6);
    g.node("HardSwish", {"h"}, {"y"});
    g.output("y");
    const memo::model m = g.import();
    EXPECT_EQ(classes(m), (std::vector<std::string>{"InputLayer", "ScaleShift", "ReLU", "ScaleShift", "ReLU", "Multiply"}));
    EXPECT_NEAR(memo::as_real(only(m, "ScaleShift").param("scale")), 1.0 / 6, 1e-7);
    EXPECT_EQ(memo::as_real(only(m, "ScaleShift").param("shift")), 0.5);
    EXPECT_EQ(memo::as_real(only(m, "ReLU").param("max_value")), 1.0);
    EXPECT_EQ(only(m, "Multiply").inputs, (std::vector<int>{2, 4}));  // HardSwish: x times its hardsigmoid
}

TEST(OnnxImport, CeilModePoolingPadsTheEnd) {
    // 10 by a window of 3 every 2: 4 windows rounded down, 5 up; the fifth starts inside.
    graph g;
    g.input("x", {-1, 8, 10, 10});
    auto& n = g.node("MaxPool", {"x"}, {"y"}, "pool");
    set_ints(n, "kernel_shape", {3, 3});
    set_ints(n, "strides", {2, 2});
    set_int(n, "ceil_mode", 1);
    g.output("y");
    const memo::model m = g.import();
    EXPECT_EQ(output_shape(m), sample({5, 5, 8}));
    EXPECT_EQ(memo::as_str(only(m, "MaxPooling2D").param("padding")), "same");

    // Where rounding up adds nothing, it is a plain 'valid' pooling.
    graph v;
    v.input("x", {-1, 8, 11, 11});
    auto& p = v.node("MaxPool", {"x"}, {"y"});
    set_ints(p, "kernel_shape", {3, 3});
    set_ints(p, "strides", {2, 2});
    set_int(p, "ceil_mode", 1);
    v.output("y");
    const memo::model mv = v.import();
    EXPECT_EQ(output_shape(mv), sample({5, 5, 8}));
    EXPECT_EQ(memo::as_str(only(mv, "MaxPooling2D").param("padding")), "valid");
}

TEST(OnnxImport, InitialStateByExpandAndLastStepByGather) {
    // y, _ = gru(x, zeros expanded to (layers, batch, hidden)); y[:, -1]
    graph g;
    g.input("x", {-1, 10, 8});
    set_ints(g.node("Transpose", {"x"}, {"xt"}), "perm", {1, 0, 2});
    g.floats("zero", {0.0f}, true);
    g.node("Shape", {"xt"}, {"s"});
    auto* one = g.g->add_initializer();
    one->set_name("one");
    one->set_data_type(::onnx::TensorProto::INT64);
    one->add_int64_data(1);  // a scalar: Gather drops the axis
    g.node("Gather", {"s", "one"}, {"b"});
    g.ints("ax0", {0});
    g.node("Unsqueeze", {"b", "ax0"}, {"bv"});
    g.ints("layers", {1});
    g.ints("hidden", {16});
    set_int(g.node("Concat", {"layers", "bv", "hidden"}, {"shape"}), "axis", 0);
    g.node("Expand", {"zero", "shape"}, {"h0"});
    g.weight("W", {1, 48, 8});
    g.weight("R", {1, 48, 16});
    set_int(g.node("GRU", {"xt", "W", "R", "", "", "h0"}, {"Y"}, "gru"), "hidden_size", 16);
    g.ints("ax1", {1});
    g.node("Squeeze", {"Y", "ax1"}, {"ys"});  // (T, N, 16)
    set_ints(g.node("Transpose", {"ys"}, {"yb"}), "perm", {1, 0, 2});
    auto* last = g.g->add_initializer();
    last->set_name("last");
    last->set_data_type(::onnx::TensorProto::INT64);
    last->add_int64_data(-1);
    set_int(g.node("Gather", {"yb", "last"}, {"y"}), "axis", 1);
    g.output("y");
    const memo::model m = g.import();
    EXPECT_EQ(count(m, "GRU"), 1);
    EXPECT_EQ(memo::as_ints(only(m, "Cropping1D").param("cropping"), 2), (memo::ints{9, 0}));  // the last of 10 steps
    EXPECT_EQ(count(m, "Flatten"), 1);
    EXPECT_EQ(output_shape(m), sample({16}));
    EXPECT_TRUE(memo::validate(m));
}

TEST(OnnxImport, InitialStateByConstantOfShape) {
    // h0 = torch.zeros(1, x.shape[0], 16): ConstantOfShape of a shape that holds the batch size.
    graph g;
    g.input("x", {-1, 10, 8});
    set_ints(g.node("Transpose", {"x"}, {"xt"}), "perm", {1, 0, 2});
    g.node("Shape", {"x"}, {"s"});
    g.ints("zero", {0});
    g.node("Gather", {"s", "zero"}, {"b"});
    g.ints("layers", {1});
    g.ints("hidden", {16});
    set_int(g.node("Concat", {"layers", "b", "hidden"}, {"shape"}), "axis", 0);
    g.node("ConstantOfShape", {"shape"}, {"h0"});
    g.weight("W", {1, 48, 8});
    g.weight("R", {1, 48, 16});
    set_int(g.node("GRU", {"xt", "W", "R", "", "", "h0"}, {"Y", "h"}, "gru"), "hidden_size", 16);
    g.ints("ax0", {0});
    g.node("Squeeze", {"h", "ax0"}, {"y"});
    g.output("y");
    const memo::model m = g.import();
    EXPECT_EQ(count(m, "GRU"), 1);
    EXPECT_EQ(output_shape(m), sample({16}));
}

// A stacked LSTM's zero initial states, (layers, batch, hidden), taken layer by layer: Slice of a
// constant is folded.
TEST(OnnxImport, SliceOfAConstantIsFolded) {
    graph g;
    g.input("x", {-1, 10, 8});
    set_ints(g.node("Transpose", {"x"}, {"xt"}), "perm", {1, 0, 2});
    g.floats("h", std::vector<float>(2 * 1 * 16, 0.0f), false);
    g.g->mutable_initializer(g.g->initializer_size() - 1)->clear_dims();
    for (auto d : {2, 1, 16}) g.g->mutable_initializer(g.g->initializer_size() - 1)->add_dims(d);
    g.ints("s", {1});
    g.ints("e", {2});
    g.ints("a", {0});
    g.node("Slice", {"h", "s", "e", "a"}, {"h1"});
    g.weight("W", {1, 48, 8});
    g.weight("R", {1, 48, 16});
    set_int(g.node("GRU", {"xt", "W", "R", "", "", "h1"}, {"Y", "y1"}, "gru"), "hidden_size", 16);
    g.ints("ax0", {0});
    g.node("Squeeze", {"y1", "ax0"}, {"y"});
    g.output("y");
    const memo::model m = g.import();
    EXPECT_EQ(count(m, "GRU"), 1);
    EXPECT_EQ(output_shape(m), sample({16}));
}

TEST(OnnxImport, IntegerArithmeticOnShapesIsFolded) {
    // x.view(-1, channels // 2, 2 * 9): shape arithmetic over constants.
    graph g;
    g.input("x", {-1, 4, 3, 3});
    g.ints("c", {4});
    g.ints("two", {2});
    g.node("Div", {"c", "two"}, {"half"});
    g.ints("nine", {9});
    g.node("Mul", {"two", "nine"}, {"rest"});
    g.ints("minus", {-1});
    set_int(g.node("Concat", {"minus", "half", "rest"}, {"t"}), "axis", 0);
    g.node("Reshape", {"x", "t"}, {"y"});
    g.output("y");
    const memo::model m = g.import();
    EXPECT_EQ(output_shape(m), sample({18, 2}));  // ONNX's (N, 2, 18), held channels_last

    // The batch size is not known: arithmetic on it is refused by name.
    graph b;
    b.input("x", {-1, 4});
    b.node("Shape", {"x"}, {"s"});
    b.ints("two", {2});
    b.node("Mul", {"s", "two"}, {"t"}, "mul");
    b.node("Reshape", {"x", "t"}, {"y"});
    b.output("y");
    EXPECT_NE(error_of([&] { b.import(); }).find("node 1 'mul' (Mul): folds no arithmetic on the batch size"), std::string::npos);
}

TEST(OnnxImport, PadThenConvIsZeroPadding) {
    graph g;
    g.input("x", {-1, 2, 10, 12});
    g.ints("pads", {0, 0, 2, 1, 0, 0, 2, 3});
    g.node("Pad", {"x", "pads"}, {"p"});
    conv(g, "p", "y", 2, 5, 3, 0);
    g.output("y");
    const memo::model m = g.import();
    EXPECT_EQ(classes(m), (std::vector<std::string>{"InputLayer", "ZeroPadding2D", "Conv2D"}));
    EXPECT_EQ(std::get<memo::ints>(only(m, "ZeroPadding2D").param("padding")), (memo::ints{2, 2, 1, 3}));
    EXPECT_EQ(output_shape(m), sample({12, 14, 5}));
}

TEST(OnnxImport, PadOfChannelsIsCustomPad) {
    graph g;
    g.input("x", {-1, 2, 10, 12});
    g.ints("pads", {0, 1, 0, 0, 0, 1, 0, 0});
    g.floats("value", {1.5f}, true);
    g.node("Pad", {"x", "pads", "value"}, {"y"});
    g.output("y");
    const memo::model m = g.import();
    const auto& p = only(m, "CustomPadLayer");
    EXPECT_EQ(std::get<memo::ints>(p.param("padding")), (memo::ints{0, 0, 0, 0, 1, 1}));
    EXPECT_EQ(memo::as_real(p.param("constant_values")), 1.5);
    EXPECT_EQ(output_shape(m), sample({10, 12, 4}));
}

TEST(OnnxImport, ResizeByWholeScalesIsUpSampling) {
    for (const char* mode : {"nearest", "linear"}) {
        graph g;
        g.input("x", {-1, 3, 8, 8});
        g.floats("scales", {1, 1, 2, 3});
        set_str(g.node("Resize", {"x", "", "scales"}, {"y"}), "mode", mode);
        g.output("y");
        const memo::model m = g.import();
        const auto& u = only(m, "UpSampling2D");
        EXPECT_EQ(std::get<memo::ints>(u.param("size")), (memo::ints{2, 3}));
        EXPECT_EQ(memo::as_str(u.param("interpolation")), std::string(mode) == "linear" ? "bilinear" : "nearest");
        EXPECT_EQ(output_shape(m), sample({16, 24, 3}));
    }
    graph g;
    g.input("x", {-1, 3, 8, 8});
    g.floats("scales", {1, 1, 1.5f, 2});
    g.node("Resize", {"x", "", "scales"}, {"y"}, "up");
    g.output("y");
    EXPECT_NE(error_of([&] { g.import(); }).find("node 0 'up' (Resize): scale 1.5 on axis 2 is not supported"), std::string::npos);
}

TEST(OnnxImport, ResizeBySizes) {
    graph g;
    g.input("x", {-1, 3, 8, 8});
    g.ints("sizes", {1, 3, 16, 32});
    g.node("Resize", {"x", "", "", "sizes"}, {"y"});
    g.output("y");
    EXPECT_EQ(output_shape(g.import()), sample({16, 32, 3}));
}

TEST(OnnxImport, DepthwiseConvFromGroups) {
    graph g;
    g.input("x", {-1, 8, 12, 12});
    g.weight("w", {16, 1, 3, 3});
    auto& n = g.node("Conv", {"x", "w"}, {"y"});
    set_int(n, "group", 8);
    set_str(n, "auto_pad", "SAME_UPPER");
    g.output("y");
    const memo::model m = g.import();
    const auto& d = only(m, "DepthwiseConv2D");
    EXPECT_EQ(memo::as_int(d.param("depth_multiplier")), 2);
    EXPECT_EQ(memo::as_str(d.param("padding")), "same");
    EXPECT_EQ(output_shape(m), sample({12, 12, 16}));
}

// A convolution of 2 groups (RegNet's): each group's channels cropped, convolved alone, and the
// results concatenated in group order.
TEST(OnnxImport, GroupedConvIsOneConvPerGroupConcatenated) {
    graph g;
    g.input("x", {-1, 8, 10, 10});
    g.weight("w", {12, 4, 3, 3});
    auto& n = g.node("Conv", {"x", "w"}, {"y"});
    set_int(n, "group", 2);
    set_ints(n, "pads", {1, 1, 1, 1});
    g.output("y");
    const memo::model m = g.import();
    EXPECT_EQ(output_shape(m), sample({10, 10, 12}));
    std::vector<std::string> crops;
    int convs = 0;
    for (const auto& nd : m.nodes) {
        if (nd.layer->name == "CustomCropLayer") crops.push_back(memo::to_string(nd.param("cropping")));
        if (nd.layer->name == "Conv2D") {
            ++convs;
            EXPECT_EQ(memo::as_int(nd.param("filters")), 6);
            EXPECT_EQ(memo::as_str(nd.param("padding")), "same");
            EXPECT_EQ(m[nd.inputs[0]].out, sample({10, 10, 4}));
        }
    }
    EXPECT_EQ(convs, 2);
    EXPECT_EQ(crops, (std::vector<std::string>{"(0, 0, 0, 0, 0, 4)", "(0, 0, 0, 0, 4, 0)"}));
    const auto& cat = only(m, "Concatenate");
    EXPECT_EQ(memo::as_int(cat.param("axis")), -1);
    EXPECT_EQ(cat.inputs.size(), 2U);
}

// ShuffleNet's channel split: Slice of the channel axis (by ends computed from the input's
// shape) is a CustomCropLayer of memo's last axis; a step other than 1 is named.
TEST(OnnxImport, SliceOfChannelsIsACustomCrop) {
    graph g;
    g.input("x", {-1, 8, 6, 6});
    g.ints("starts", {4});
    g.ints("ends", {std::numeric_limits<std::int64_t>::max()});
    g.ints("axes", {1});
    g.node("Slice", {"x", "starts", "ends", "axes"}, {"y"});
    g.output("y");
    const memo::model m = g.import();
    EXPECT_EQ(output_shape(m), sample({6, 6, 4}));
    EXPECT_EQ(memo::to_string(only(m, "CustomCropLayer").param("cropping")), "(0, 0, 0, 0, 4, 0)");

    graph s;
    s.input("x", {-1, 8, 6, 6});
    s.ints("starts", {0});
    s.ints("ends", {4});
    s.ints("axes", {1});
    s.ints("steps", {2});
    s.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "split");
    s.output("y");
    EXPECT_EQ(error_of([&] { s.import(); }), "test.onnx: node 0 'split' (Slice): steps (2) is not supported (only 1)");
}

TEST(OnnxImport, Conv1DAndPooling1D) {
    graph g;
    g.input("x", {-1, 4, 20});
    g.weight("w", {6, 4, 3});
    set_ints(g.node("Conv", {"x", "w"}, {"c"}), "dilations", {2});
    auto& p = g.node("AveragePool", {"c"}, {"y"});
    set_ints(p, "kernel_shape", {2});
    g.output("y");
    const memo::model m = g.import();
    EXPECT_EQ(classes(m), (std::vector<std::string>{"InputLayer", "Conv1D", "AveragePooling1D"}));
    EXPECT_EQ(std::get<memo::ints>(only(m, "Conv1D").param("dilation_rate")), (memo::ints{2}));
    EXPECT_EQ(m[0].out, sample({20, 4}));
    EXPECT_EQ(output_shape(m), sample({15, 6}));
}

TEST(OnnxImport, ConvTransposeValidAndSame) {
    graph g;
    g.input("x", {-1, 4, 8, 8});
    g.weight("w1", {4, 6, 2, 2});
    set_ints(g.node("ConvTranspose", {"x", "w1"}, {"a"}), "strides", {2, 2});  // 8 -> 16, pads 0: 'valid'
    g.weight("w2", {6, 3, 4, 4});
    auto& n = g.node("ConvTranspose", {"a", "w2"}, {"y"});
    set_ints(n, "strides", {2, 2});
    set_ints(n, "pads", {1, 1, 1, 1});  // 16 -> 32: 'same'
    g.output("y");
    const memo::model m = g.import();
    EXPECT_EQ(memo::as_str(only(m, "Conv2DTranspose").param("padding")), "valid");
    EXPECT_EQ(memo::as_int(only(m, "Conv2DTranspose").param("filters")), 6);
    EXPECT_EQ(memo::as_str(only(m, "Conv2DTranspose", 1).param("padding")), "same");
    EXPECT_EQ(output_shape(m), sample({32, 32, 3}));
}

TEST(OnnxImport, ActivationsMapToKerasLayers) {
    graph g;
    g.input("x", {-1, 10});
    std::string cur = "x";
    auto step = [&](const std::string& op) -> ::onnx::NodeProto& {
        const std::string next = "v" + std::to_string(g.g->node_size());
        auto& n = g.node(op, {cur}, {next});
        cur = next;
        return n;
    };
    set_float(step("LeakyRelu"), "alpha", 0.2f);
    step("Elu");
    step("Sigmoid");
    step("Tanh");
    step("Softplus");
    step("Softsign");
    step("Selu");
    step("HardSigmoid");
    set_float(step("ThresholdedRelu"), "alpha", 0.5f);
    g.floats("zero", {0}, true);
    g.floats("six", {6}, true);
    g.node("Clip", {cur, "zero", "six"}, {"clip"});
    cur = "clip";
    g.floats("slope", {0.25f}, true);
    g.node("PRelu", {cur, "slope"}, {"prelu"});
    cur = "prelu";
    step("Dropout");
    step("Identity");
    g.output(cur);
    const memo::model m = g.import();
    EXPECT_EQ(classes(m), (std::vector<std::string>{"InputLayer", "LeakyReLU", "ELU", "Activation", "Activation", "Activation", "Activation", "Activation",
                                                    "Activation", "ThresholdedReLU", "ReLU", "PReLU", "Dropout"}));
    EXPECT_NEAR(memo::as_real(only(m, "LeakyReLU").param("alpha")), 0.2, 1e-6);
    EXPECT_EQ(memo::as_str(only(m, "Activation", 4).param("activation")), "selu");
    EXPECT_EQ(memo::as_str(only(m, "Activation", 5).param("activation")), "hard_sigmoid");
    EXPECT_EQ(memo::as_real(only(m, "ReLU").param("max_value")), 6.0);
    EXPECT_EQ(output_shape(m), sample({10}));
}

TEST(OnnxImport, DynamicFlattenThroughShapeGatherConcat) {
    // x.view(x.size(0), -1) as exporters write it with a dynamic batch.
    graph g;
    g.input("x", {-1, 4, 3, 3});
    conv(g, "x", "c", 4, 2, 1, 0);
    g.node("Shape", {"c"}, {"s"});
    g.ints("zero", {0});
    g.node("Gather", {"s", "zero"}, {"b"});
    g.ints("minus", {-1});
    set_int(g.node("Concat", {"b", "minus"}, {"t"}), "axis", 0);
    g.node("Reshape", {"c", "t"}, {"y"});
    g.output("y");
    const memo::model m = g.import();
    EXPECT_EQ(count(m, "Flatten"), 1);
    EXPECT_EQ(output_shape(m), sample({18}));
}

TEST(OnnxImport, ReshapeWithFixedBatchAndToRank3) {
    graph g;
    g.input("x", {1, 8, 4, 4});
    g.ints("t1", {1, 8, 16});
    g.node("Reshape", {"x", "t1"}, {"r"});  // [1, C, H*W]
    g.weight("w", {16, 5});
    g.node("MatMul", {"r", "w"}, {"y"});
    g.output("y");
    const memo::model m = g.import();
    // memo holds x as (N, 4, 4, 8): merging H and W keeps ONNX's order as (N, 16, 8), and the
    // MatMul, which wants ONNX's last axis last, gets it by a Permute.
    EXPECT_EQ(only(m, "Reshape").out, sample({16, 8}));
    EXPECT_EQ(only(m, "Permute").out, sample({8, 16}));
    EXPECT_EQ(output_shape(m), sample({8, 5}));
}

TEST(OnnxImport, TransposeBetweenLayoutsOnlyRelabels) {
    // NCHW -> NHWC -> NCHW costs nothing; a rank-3 swap before a Dense is a Permute.
    graph g;
    g.input("x", {-1, 3, 8, 8});
    set_ints(g.node("Transpose", {"x"}, {"nhwc"}), "perm", {0, 2, 3, 1});
    g.node("Relu", {"nhwc"}, {"r"});
    set_ints(g.node("Transpose", {"r"}, {"nchw"}), "perm", {0, 3, 1, 2});
    conv(g, "nchw", "c", 3, 4, 3, 1);
    g.output("c");
    const memo::model m = g.import();
    EXPECT_EQ(classes(m), (std::vector<std::string>{"InputLayer", "ReLU", "Conv2D"}));

    graph h;  // x is [N, 6, 5]: MatMul by [6, 3] does not fit ONNX's last axis (5)
    h.input("x", {-1, 6, 5});
    h.weight("w", {6, 3});
    h.node("MatMul", {"x", "w"}, {"y"}, "mm");
    h.output("y");
    EXPECT_EQ(error_of([&] { h.import(); }), "test.onnx: node 0 'mm' (MatMul): the weight B has shape (6, 3) for 5 input features");
}

TEST(OnnxImport, MatMulOnChannelsLastInputInsertsPermute) {
    graph g;
    g.input("x", {-1, 6, 5});
    g.weight("w", {4, 6, 1});
    g.node("Conv", {"x", "w"}, {"c"});  // [N, 4, 5], held (None, 5, 4)
    g.weight("d", {5, 3});
    g.node("MatMul", {"c", "d"}, {"y"});  // acts on ONNX's last axis, 5
    g.output("y");
    const memo::model m = g.import();
    EXPECT_EQ(classes(m), (std::vector<std::string>{"InputLayer", "Conv1D", "Permute", "Dense"}));
    EXPECT_EQ(output_shape(m), sample({4, 3}));
}

TEST(OnnxImport, ReduceMeanOverSpatialAxesIsGlobalPooling) {
    graph g;
    g.input("x", {-1, 5, 7, 7});
    auto& n = g.node("ReduceMean", {"x"}, {"y"});
    set_ints(n, "axes", {2, 3});
    set_int(n, "keepdims", 0);
    g.output("y");
    const memo::model m = g.import();
    EXPECT_FALSE(memo::as_bool(only(m, "GlobalAveragePooling2D").param("keepdims")));
    EXPECT_EQ(output_shape(m), sample({5}));
}

TEST(OnnxImport, LayerNormalizationAndSoftmaxOnLastAxis) {
    graph g(17);
    g.input("x", {-1, 4, 6});
    g.weight("s", {6});
    g.node("LayerNormalization", {"x", "s"}, {"ln"});
    g.node("Softmax", {"ln"}, {"y"});
    g.output("y");
    const memo::model m = g.import();
    EXPECT_EQ(m[0].out, sample({4, 6}));  // no spatial consumer: held as given
    EXPECT_FALSE(memo::as_bool(only(m, "LayerNormalization").param("center")));
    EXPECT_EQ(memo::as_int(only(m, "Softmax").param("axis")), -1);
}

// ---- errors -----------------------------------------------------------------------------

TEST(OnnxImport, UnsupportedOperatorNamesNodeAndOperator) {
    graph g;
    g.input("x", {-1, 4});
    g.node("Relu", {"x"}, {"r"});
    set_str(g.node("Einsum", {"r", "r"}, {"y"}, "mix"), "equation", "bi,bi->bi");
    g.output("y");
    EXPECT_EQ(error_of([&] { g.import(); }), "test.onnx: node 1 'mix' (Einsum): operator Einsum is not supported");
}

TEST(OnnxImport, UnsupportedAttributeIsNamed) {
    graph g;
    g.input("x", {-1, 8, 10, 10});
    g.weight("w", {8, 3, 3, 3});
    set_int(g.node("Conv", {"x", "w"}, {"y"}, "conv3"), "group", 4);
    g.output("y");
    EXPECT_EQ(error_of([&] { g.import(); }),
              "test.onnx: node 0 'conv3' (Conv): attribute group=4 does not fit the weight W (8, 3, 3, 3) for 8 input channels (each group takes input "
              "channels / group, and W's output channels must divide among the groups)");

    graph a;
    a.input("x", {-1, 8, 10, 10});
    auto& avg = a.node("AveragePool", {"x"}, {"y"}, "avg");
    set_ints(avg, "kernel_shape", {3, 3});
    set_ints(avg, "pads", {1, 1, 1, 1});
    set_int(avg, "count_include_pad", 1);
    a.output("y");
    EXPECT_NE(error_of([&] { a.import(); }).find("(AveragePool): attribute count_include_pad=1"), std::string::npos);
}

TEST(OnnxImport, MoreUnmappableCasesAreNamed) {
    {
        graph g(11);  // before opset 13, Softmax spans all axes from `axis` on
        g.input("x", {-1, 4, 6});
        set_int(g.node("Softmax", {"x"}, {"y"}, "sm"), "axis", 1);
        g.output("y");
        EXPECT_NE(error_of([&] { g.import(); }).find("node 0 'sm' (Softmax): attribute axis=1 is not supported before opset 13"), std::string::npos);
    }
    {
        graph g;
        g.input("x", {-1, 4, 6, 2});
        set_int(g.node("Flatten", {"x"}, {"y"}, "fl"), "axis", 2);
        g.output("y");
        EXPECT_NE(error_of([&] { g.import(); }).find("node 0 'fl' (Flatten): attribute axis=2 is not supported"), std::string::npos);
    }
    {
        graph g;
        g.input("x", {-1, 4, 6});
        g.ints("t", {-1, 6});  // folds the batch into the rows
        g.node("Reshape", {"x", "t"}, {"y"}, "rs");
        g.output("y");
        EXPECT_NE(error_of([&] { g.import(); }).find("node 0 'rs' (Reshape): shape (-1, 6) does not keep the batch dimension"), std::string::npos);
    }
    {
        graph g;
        g.input("x", {-1, 4, 6, 6});
        g.input("w", {8, 4, 3, 3});
        g.node("Conv", {"x", "w"}, {"y"}, "dyn");
        g.output("y");
        EXPECT_NE(error_of([&] { g.import(); }).find("node 0 'dyn' (Conv): input 1 'w' (W) is computed"), std::string::npos);
    }
    {
        graph g;
        g.input("x", {5, -1, 3});
        g.weight("W", {1, 8, 3});
        g.weight("R", {1, 8, 2});
        g.node("LSTM", {"x", "W", "R"}, {"Y", "Y_h", "Y_c"}, "lstm");
        g.output("Y_c");
        EXPECT_NE(error_of([&] { g.import(); }).find("node 0 'lstm' (LSTM): output Y_c is used"), std::string::npos);
    }
    {
        graph g;
        g.input("x", {-1, 4, 8, 8});
        auto& n = g.node("MaxPool", {"x"}, {"y", "idx"}, "mp");
        set_ints(n, "kernel_shape", {2, 2});
        g.node("Relu", {"idx"}, {"z"});
        g.output("z");
        EXPECT_NE(error_of([&] { g.import(); }).find("node 0 'mp' (MaxPool): output 1 'idx' is used; memo models only output 0 of MaxPool"), std::string::npos);
    }
    {
        graph g;
        g.input("x", {-1, 4});
        g.node("Relu", {"x"}, {"y"}, "r");
        g.g->mutable_node(0)->set_domain("com.microsoft");
        g.output("y");
        EXPECT_EQ(error_of([&] { g.import(); }), "test.onnx: node 0 'r' (Relu): operator domain 'com.microsoft' is not supported");
    }
}

TEST(OnnxImport, GemmWithoutBiasTakesTheFollowingAdd) {
    graph g;
    g.input("x", {-1, 6});
    g.weight("w", {6, 4});
    g.weight("b", {1, 4});
    g.node("Gemm", {"x", "w"}, {"g"});
    g.node("Add", {"g", "b"}, {"y"});
    g.output("y");
    const memo::model m = g.import();
    EXPECT_EQ(classes(m), (std::vector<std::string>{"InputLayer", "Dense"}));
    EXPECT_TRUE(memo::as_bool(only(m, "Dense").param("use_bias")));
}

TEST(OnnxImport, UndefinedValueAndOrderAreErrors) {
    graph g;
    g.input("x", {-1, 4});
    g.node("Add", {"x", "ghost"}, {"y"}, "add");
    g.output("y");
    EXPECT_EQ(error_of([&] { g.import(); }),
              "test.onnx: node 0 'add' (Add): input 1 'ghost' is not defined (not a graph input, an initializer or a node's output)");

    graph cyc;
    cyc.input("x", {-1, 4});
    cyc.node("Add", {"x", "b"}, {"a"}, "first");
    cyc.node("Relu", {"a"}, {"b"}, "second");
    cyc.output("b");
    EXPECT_NE(error_of([&] { cyc.import(); }).find("node 0 'first' (Add): input 1 'b' is an output of node 1, which does not come before it"),
              std::string::npos);

    graph twice;
    twice.input("x", {-1, 4});
    twice.node("Relu", {"x"}, {"y"});
    twice.node("Relu", {"x"}, {"y"});
    twice.output("y");
    EXPECT_NE(error_of([&] { twice.import(); }).find("value 'y'"), std::string::npos);

    graph out;
    out.input("x", {-1, 4});
    out.node("Relu", {"x"}, {"y"});
    out.output("z");
    EXPECT_EQ(error_of([&] { out.import(); }), "test.onnx: graph output 'z' is not defined by the graph");
}

TEST(OnnxImport, InputsNeedKnownShapes) {
    graph g;
    g.input("img", {-1, 3, -1, 32});
    g.node("Relu", {"img"}, {"y"});
    g.output("y");
    EXPECT_EQ(error_of([&] { g.import(); }), "test.onnx: input 'img': dimension 2 is symbolic ('N'); only the batch dimension (0) may be");

    graph big;
    big.input("x", {-1, 3, i64{1} << 30, 2});
    big.node("Relu", {"x"}, {"y"});
    big.output("y");
    EXPECT_NE(error_of([&] { big.import(); }).find("input 'x': dimension 2 is 1073741824"), std::string::npos);

    graph huge;  // each dimension fits, the product does not
    huge.input("x", {-1, 1 << 20, 1 << 20, 1 << 20});
    huge.node("Relu", {"x"}, {"y"});
    huge.output("y");
    EXPECT_NE(error_of([&] { huge.import(); }).find("more than 2^31 elements"), std::string::npos);

    graph ints;
    ints.input("ids", {-1, 5}, ::onnx::TensorProto::INT64);
    ints.node("Relu", {"ids"}, {"y"});
    ints.output("y");
    EXPECT_NE(error_of([&] { ints.import(); }).find("element type INT64"), std::string::npos);
}

TEST(OnnxImport, EmptyAndMissingPartsAreErrors) {
    graph g;
    g.input("x", {-1, 4});
    g.output("x");
    EXPECT_EQ(error_of([&] { g.import(); }), "test.onnx: the graph has no nodes");
    ::onnx::ModelProto none;
    EXPECT_EQ(error_of([&] { memo::onnx::from_onnx(none, reg(), "m"); }), "m: the model has no graph");
    graph no_opset = lenet();
    no_opset.m.clear_opset_import();
    EXPECT_EQ(error_of([&] { no_opset.import(); }), "test.onnx: the model imports no opset of the ONNX domain");
    EXPECT_EQ(error_of([&] { memo::onnx::from_onnx_bytes("", reg(), "empty.onnx"); }), "empty.onnx: the model has no graph");
}

TEST(OnnxImport, TruncatedBytesAreErrors) {
    const std::string bytes = lenet().bytes();
    ASSERT_NO_THROW(memo::onnx::from_onnx_bytes(bytes, reg(), "full"));
    for (std::size_t n = 0; n < bytes.size(); ++n) {
        const std::string msg = error_of([&] { memo::onnx::from_onnx_bytes(std::string_view(bytes).substr(0, n), reg(), "cut.onnx"); });
        EXPECT_TRUE(msg.starts_with("cut.onnx: ")) << "prefix of " << n << " bytes: '" << msg << "'";
    }
}

TEST(OnnxImport, GarbageBytesAreErrors) {
    std::mt19937_64 rng(7);
    const std::string good = lenet().bytes();
    for (int i = 0; i < 2000; ++i) {
        std::string b;
        if (i % 2 == 0) {
            b.resize(rng() % 512);
            for (auto& c : b) c = static_cast<char>(rng());
        } else {  // a valid model with a few bytes flipped
            b = good;
            for (int k = 0; k < 4; ++k) b[rng() % b.size()] = static_cast<char>(rng());
        }
        try {
            const memo::model m = memo::onnx::from_onnx_bytes(b, reg(), "garbage");
            EXPECT_TRUE(memo::validate(m));
        } catch (const memo::error& e) {
            EXPECT_TRUE(std::string(e.what()).starts_with("garbage: ")) << e.what();
        }
    }
}

TEST(OnnxImport, LoadNamesTheFile) {
    const std::string missing = ::testing::TempDir() + "memo_no_such_model.onnx";
    EXPECT_EQ(error_of([&] { memo::onnx::load_onnx(missing, reg()); }), missing + ": cannot open");
    const std::string path = ::testing::TempDir() + "memo_lenet.onnx";
    std::ofstream(path, std::ios::binary) << lenet().bytes();
    EXPECT_EQ(memo::structural_hash(memo::onnx::load_onnx(path, reg())), memo::structural_hash(lenet().import()));
    std::ofstream(path, std::ios::binary) << "not a model";
    EXPECT_EQ(error_of([&] { memo::onnx::load_onnx(path, reg()); }), path + ": not an ONNX model (malformed or truncated protobuf)");
}

// ---- memo's own files ---------------------------------------------------------------------

memo::model small_memo_model() {
    memo::builder b(reg());
    const int x = b.input({8, 8, 3});
    const int c = b.add("Conv2D", {x}, {{"filters", memo::value{std::int64_t{4}}}, {"kernel_size", memo::ints{3, 3}}, {"padding", std::string("same")}});
    const int f = b.add("Flatten", {c});
    b.output(b.add("Dense", {f}, {{"units", memo::value{std::int64_t{5}}}, {"activation", std::string("softmax")}}));
    b.seed(1234);
    return b.finish();
}

graph with_metadata(const memo::model& mm, int outputs) {
    graph g;
    g.input("x", {-1, 3, 8, 8});
    g.node("Identity", {"x"}, {"y0"});
    for (int i = 0; i < outputs; ++i) g.output("y0");
    auto* p = g.m.add_metadata_props();
    p->set_key("memo.model");
    p->set_value(memo::io::model_to_json(mm).dump());
    return g;
}

TEST(OnnxImport, MetadataRoundTripIsExact) {
    const memo::model mm = small_memo_model();
    const memo::model back = with_metadata(mm, 1).import();
    EXPECT_EQ(memo::structural_hash(back), memo::structural_hash(mm));
    EXPECT_EQ(back.seed, 1234u);
    EXPECT_EQ(back[1].name, mm[1].name);
}

TEST(OnnxImport, MetadataMustAgreeWithTheGraph) {
    const memo::model mm = small_memo_model();
    EXPECT_EQ(error_of([&] { with_metadata(mm, 2).import(); }), "test.onnx: metadata memo.model has 1 outputs, the graph 2");
    graph two = with_metadata(mm, 1);
    two.input("x2", {-1, 3});
    EXPECT_EQ(error_of([&] { two.import(); }), "test.onnx: metadata memo.model has 1 inputs, the graph 2");
    graph bad = with_metadata(mm, 1);
    bad.m.mutable_metadata_props(0)->set_value("{\"format\": \"memo.model\", \"nodes\": [");
    EXPECT_NE(error_of([&] { bad.import(); }).find("test.onnx: metadata memo.model is not JSON"), std::string::npos);
    graph deep = with_metadata(mm, 1);
    deep.m.mutable_metadata_props(0)->set_value(std::string(100000, '['));
    EXPECT_NE(error_of([&] { deep.import(); }).find("nests deeper"), std::string::npos);
    graph wrong = with_metadata(mm, 1);
    auto j = memo::io::model_to_json(mm);
    j["nodes"][0]["shape"] = {nullptr, 1e300, 8, 3};
    wrong.m.mutable_metadata_props(0)->set_value(j.dump());
    EXPECT_NE(error_of([&] { wrong.import(); }).find("test.onnx: metadata memo.model: shape"), std::string::npos);
}

// ---- weights ---------------------------------------------------------------------------------

memo::onnx::imported import_all(const graph& g) { return memo::onnx::import_onnx(g.m, reg(), "test.onnx"); }

/// Node `k`'s weights as every backend gets them (memo::weights_of).
std::vector<memo::weight> weights(const memo::model& m, const memo::node& n) { return memo::weights_of(m, static_cast<int>(&n - m.nodes.data())); }

TEST(OnnxImport, ConvWeightsBecomeKerasLayouts) {
    // W (M=4, C=3, 2, 2) becomes Keras' kernel (2, 2, 3, 4): kernel[kh][kw][c][m] = W[m][c][kh][kw].
    graph g;
    g.input("x", {1, 3, 5, 5});
    g.counting("w", {4, 3, 2, 2});
    g.counting("b", {4});
    g.node("Conv", {"x", "w", "b"}, {"y"});
    g.output("y");
    const auto x = import_all(g);
    EXPECT_TRUE(x.inexact.empty());
    const auto ws = weights(x.m, only(x.m, "Conv2D"));
    ASSERT_EQ(ws.size(), 2u);
    EXPECT_EQ(ws[0].value.dims, (std::vector<i64>{2, 2, 3, 4}));
    for (i64 kh = 0; kh < 2; ++kh)
        for (i64 kw = 0; kw < 2; ++kw)
            for (i64 c = 0; c < 3; ++c)
                for (i64 m = 0; m < 4; ++m) EXPECT_EQ(ws[0].value[((kh * 2 + kw) * 3 + c) * 4 + m], ((m * 3 + c) * 2 + kh) * 2 + kw);
    EXPECT_EQ(ws[1].value.data, (std::vector<double>{0, 1, 2, 3}));
}

TEST(OnnxImport, GroupedAndDepthwiseWeightsSplitByGroup) {
    graph g;
    g.input("x", {1, 4, 5, 5});
    g.counting("w", {6, 2, 1, 1});  // 2 groups of 2 input channels, 3 outputs each
    set_int(g.node("Conv", {"x", "w"}, {"y"}), "group", 2);
    g.counting("d", {12, 1, 1, 1});  // depthwise, multiplier 2 on 6 channels
    set_int(g.node("Conv", {"y", "d"}, {"z"}), "group", 6);
    g.output("z");
    const auto x = import_all(g);
    EXPECT_TRUE(x.inexact.empty());
    // Group 1's Conv holds W's rows 3..5: kernel (1, 1, 2, 3)[c][m] = W[3 + m][c].
    const auto w1 = weights(x.m, only(x.m, "Conv2D", 1));
    ASSERT_EQ(w1.at(0).value.dims, (std::vector<i64>{1, 1, 2, 3}));
    for (i64 c = 0; c < 2; ++c)
        for (i64 m = 0; m < 3; ++m) EXPECT_EQ(w1[0].value[c * 3 + m], (3 + m) * 2 + c);
    // Depthwise: Keras' (1, 1, C=6, 2)[c][j] is ONNX's output channel c * 2 + j.
    const auto d = weights(x.m, only(x.m, "DepthwiseConv2D"));
    ASSERT_EQ(d.at(0).value.dims, (std::vector<i64>{1, 1, 6, 2}));
    for (i64 i = 0; i < 12; ++i) EXPECT_EQ(d[0].value[i], i);
}

TEST(OnnxImport, LstmGatesReorderedAndBiasesAdded) {
    // ONNX orders an LSTM's gates i, o, f, c; Keras i, f, c, o. Keras' bias is W's plus R's.
    graph g;
    g.input("x", {-1, 10, 8});
    set_ints(g.node("Transpose", {"x"}, {"xt"}), "perm", {1, 0, 2});
    g.counting("W", {1, 8, 8});  // 2 units
    g.counting("R", {1, 8, 2});
    g.counting("B", {1, 16});
    set_int(g.node("LSTM", {"xt", "W", "R", "B"}, {"Y", "Y_h"}, "lstm"), "hidden_size", 2);
    g.ints("ax0", {0});
    g.node("Squeeze", {"Y_h", "ax0"}, {"y"});
    g.output("y");
    const auto x = import_all(g);
    EXPECT_TRUE(x.inexact.empty());
    const auto ws = weights(x.m, only(x.m, "LSTM"));
    ASSERT_EQ(ws.size(), 3u);
    const int onnx_gate[] = {0, 2, 3, 1};
    for (i64 gate = 0; gate < 4; ++gate)
        for (i64 u = 0; u < 2; ++u) {
            const i64 row = onnx_gate[gate] * 2 + u;                    // W's row for Keras' column gate * 2 + u
            EXPECT_EQ(ws[0].value[3 * 8 + gate * 2 + u], row * 8 + 3);  // kernel (8, 8): input feature 3
            EXPECT_EQ(ws[1].value[1 * 8 + gate * 2 + u], row * 2 + 1);  // recurrent kernel (2, 8): unit 1
            EXPECT_EQ(ws[2].value[gate * 2 + u], row + (8 + row));      // Wb + Rb, no forget-bias ones
        }
}

TEST(OnnxImport, FlattenOfChannelsLastReordersTheDenseKernel) {
    // memo flattens (2, 2, C=3) as H, W, C; ONNX (3, 2, 2) as C, H, W: the Dense's rows follow.
    graph g;
    g.input("x", {1, 3, 2, 2});
    g.node("Relu", {"x"}, {"r"});
    g.node("Flatten", {"r"}, {"f"});
    g.counting("w", {12, 1});
    g.node("MatMul", {"f", "w"}, {"y"});
    g.output("y");
    const auto x = import_all(g);
    EXPECT_TRUE(x.inexact.empty());
    const auto ws = weights(x.m, only(x.m, "Dense"));
    for (i64 h = 0; h < 2; ++h)
        for (i64 w = 0; w < 2; ++w)
            for (i64 c = 0; c < 3; ++c) EXPECT_EQ(ws.at(0).value[(h * 2 + w) * 3 + c], c * 4 + h * 2 + w);
}

TEST(OnnxImport, ChannelShuffleKeepsOnnxsChannelOrder) {
    // ShuffleNet's shuffle, (N, C, H, W) -> (N, 2, C/2, H, W) -> swap -> (N, C, H, W): memo's last
    // axis comes out as (2, C/2) where ONNX's is (C/2, 2), so a permutation Dense puts it back.
    graph g;
    g.input("x", {1, 6, 3, 3});
    g.ints("s5", {1, 2, 3, 3, 3});
    g.node("Reshape", {"x", "s5"}, {"a"});
    set_ints(g.node("Transpose", {"a"}, {"b"}), "perm", {0, 2, 1, 3, 4});
    g.ints("s4", {1, 6, 3, 3});
    g.node("Reshape", {"b", "s4"}, {"y"});
    g.output("y");
    const auto x = import_all(g);
    EXPECT_TRUE(x.inexact.empty());
    const auto ws = weights(x.m, only(x.m, "Dense"));
    // ONNX's channel c = i * 2 + j of the output is memo's j * 3 + i before the Dense.
    for (i64 i = 0; i < 3; ++i)
        for (i64 j = 0; j < 2; ++j)
            for (i64 src = 0; src < 6; ++src) EXPECT_EQ(ws.at(0).value[src * 6 + i * 2 + j], src == j * 3 + i ? 1.0 : 0.0);
}

TEST(OnnxImport, ScalarConstantsAreScaleShiftsAndOthersInexact) {
    graph g;
    g.input("x", {1, 3, 4, 4});
    g.floats("two", {2.0f}, true);
    g.node("Mul", {"x", "two"}, {"a"});
    g.floats("one", {1.0f}, true);
    g.node("Sub", {"one", "a"}, {"b"});  // 1 - 2x
    g.counting("per_channel", {3, 1, 1});
    g.node("Add", {"b", "per_channel"}, {"y"});
    g.output("y");
    const auto x = import_all(g);
    ASSERT_EQ(count(x.m, "ScaleShift"), 2);
    EXPECT_EQ(memo::as_real(only(x.m, "ScaleShift", 0).param("scale")), 2.0);
    EXPECT_EQ(memo::as_real(only(x.m, "ScaleShift", 1).param("scale")), -1.0);
    EXPECT_EQ(memo::as_real(only(x.m, "ScaleShift", 1).param("shift")), 1.0);
    ASSERT_EQ(x.inexact.size(), 1u);
    EXPECT_NE(x.inexact[0].find("node 2 'y' (Add): a constant operand of shape (3, 1, 1) is not modelled"), std::string::npos) << x.inexact[0];
}

TEST(OnnxImport, GivenWeightsSurviveJsonAndGiveWayWhenTheLayerChanges) {
    graph g;
    g.input("x", {1, 3, 5, 5});
    g.counting("w", {4, 3, 3, 3});
    g.node("Conv", {"x", "w"}, {"y"});
    g.output("y");
    const memo::model m = g.import();
    const memo::model back = memo::io::model_from_json(memo::io::model_to_json(m), reg());
    ASSERT_TRUE(back[1].weights);
    EXPECT_EQ(back[1].weights->digest, m[1].weights->digest);
    EXPECT_EQ(memo::weights_of(back, 1)[0].value.data, memo::weights_of(m, 1)[0].value.data);
    EXPECT_EQ(memo::model_key(back), memo::model_key(m));
    memo::model drawn = m;
    drawn.nodes[1].weights.reset();
    EXPECT_NE(memo::model_key(drawn), memo::model_key(m));  // the same structure, other weights
    // A mutant with other filters cannot use the file's kernel: it draws its own.
    memo::model mutant = m;
    mutant.nodes[1].set("filters", memo::value{std::int64_t{5}});
    ASSERT_TRUE(memo::infer_shapes(mutant));
    const auto w = memo::weights_of(mutant, 1);
    EXPECT_EQ(w[0].value.dims, (std::vector<i64>{3, 3, 3, 5}));
    EXPECT_NE(w[0].value.data, memo::weights_of(drawn, 1)[0].value.data);  // drawn for 5 filters, by the seed
}

// ---- the fuzzing corpus -------------------------------------------------------------------

TEST(OnnxImport, EveryCorpusFileGivesAModelOrAnError) {
    const fs::path dir = fs::path(MEMO_SOURCE_DIR) / "tests/fuzz/corpus/onnx_import";
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    int files = 0, models = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        if (!e.is_regular_file()) continue;
        ++files;
        std::ifstream in(e.path(), std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        try {
            const memo::model m = memo::onnx::from_onnx_bytes(bytes, reg(), e.path().filename().string());
            EXPECT_TRUE(memo::validate(m)) << e.path();
            ++models;
        } catch (const memo::error& err) {
            EXPECT_TRUE(std::string(err.what()).starts_with(e.path().filename().string() + ": ")) << err.what();
        }
    }
    EXPECT_GT(files, 0);
    EXPECT_GT(models, 0);  // the seeds are valid models
}

}  // namespace

}  // namespace test_onnx_import_test
