// Shape functions against shapes worked out by hand from Keras' rules (channels_last unless said).
#include "../support.hpp"

namespace test_layers_shape_test {

using memo::ints;
using test::infer;
using test::sample;

#define EXPECT_SHAPE(expr, ...)                            \
    do {                                                   \
        auto got_ = (expr);                                \
        ASSERT_TRUE(got_.has_value()) << got_.reason();    \
        EXPECT_EQ(got_->str(), sample(__VA_ARGS__).str()); \
    } while (0)
#define EXPECT_REJECTED(expr, words)                                              \
    do {                                                                          \
        auto got_ = (expr);                                                       \
        ASSERT_FALSE(got_.has_value()) << "accepted: " << got_->str();            \
        EXPECT_NE(got_.reason().find(words), std::string::npos) << got_.reason(); \
    } while (0)

TEST(ConvShapes, ValidSameStridesDilation) {
    // 28 - 5 + 1 = 24
    EXPECT_SHAPE(infer("Conv2D", {28, 28, 1}, {{"filters", 6}, {"kernel_size", ints{5, 5}}}), {24, 24, 6});
    // same: ceil(28 / 2) = 14
    EXPECT_SHAPE(infer("Conv2D", {28, 28, 1}, {{"filters", 4}, {"kernel_size", ints{3, 3}}, {"strides", ints{2, 2}}, {"padding", "same"}}), {14, 14, 4});
    // valid, stride 3 > kernel 2: ceil((10 - 2 + 1) / 3) = 3
    EXPECT_SHAPE(infer("Conv1D", {10, 3}, {{"filters", 2}, {"kernel_size", ints{2}}, {"strides", ints{3}}}), {3, 2});
    // dilation 2 makes kernel 3 span 5: 10 - 5 + 1 = 6
    EXPECT_SHAPE(infer("Conv1D", {10, 3}, {{"filters", 2}, {"kernel_size", ints{3}}, {"dilation_rate", ints{2}}}), {6, 2});
    // causal keeps the length
    EXPECT_SHAPE(infer("Conv1D", {10, 3}, {{"filters", 2}, {"kernel_size", ints{4}}, {"padding", "causal"}}), {10, 2});
    // 3D, non-square kernel
    EXPECT_SHAPE(infer("Conv3D", {8, 9, 10, 2}, {{"filters", 5}, {"kernel_size", ints{1, 2, 3}}}), {8, 8, 8, 5});
    // channels_first: (C, H, W)
    EXPECT_SHAPE(infer("Conv2D", {3, 28, 28}, {{"filters", 6}, {"kernel_size", ints{5, 5}}, {"data_format", "channels_first"}}), {6, 24, 24});
}

TEST(ConvShapes, CornerCasesRejected) {
    EXPECT_REJECTED(infer("Conv2D", {4, 4, 1}, {{"kernel_size", ints{5, 5}}}), "larger than input");
    // dilation 4 makes kernel 4 span 13 > 10; with dilation 3 the span is 10 and fits (output 1)
    EXPECT_REJECTED(infer("Conv1D", {10, 1}, {{"kernel_size", ints{4}}, {"dilation_rate", ints{4}}}), "larger than input");
    EXPECT_SHAPE(infer("Conv1D", {10, 1}, {{"filters", 1}, {"kernel_size", ints{4}}, {"dilation_rate", ints{3}}}), {1, 1});
    EXPECT_REJECTED(infer("Conv2D", {9, 9, 1}, {{"strides", ints{2, 2}}, {"dilation_rate", ints{2, 2}}}), "dilation");
}

TEST(ConvShapes, DilatedSpanThatFits) {
    EXPECT_SHAPE(infer("Conv1D", {10, 1}, {{"filters", 1}, {"kernel_size", ints{4}}, {"dilation_rate", ints{2}}}), {4, 1});
}

TEST(ConvShapes, SeparableAndDepthwise) {
    EXPECT_SHAPE(infer("SeparableConv2D", {16, 16, 3}, {{"filters", 7}, {"kernel_size", ints{3, 3}}, {"depth_multiplier", 2}}), {14, 14, 7});
    EXPECT_SHAPE(infer("DepthwiseConv2D", {16, 16, 3}, {{"kernel_size", ints{3, 3}}, {"depth_multiplier", 4}, {"padding", "same"}}), {16, 16, 12});
    EXPECT_SHAPE(infer("DepthwiseConv1D", {12, 5}, {{"kernel_size", ints{3}}, {"strides", ints{2}}}), {5, 5});
}

TEST(ConvShapes, Transposed) {
    // valid, no output_padding: 7 * 2 + max(3 - 2, 0) = 15
    EXPECT_SHAPE(infer("Conv2DTranspose", {7, 7, 4}, {{"filters", 3}, {"kernel_size", ints{3, 3}}, {"strides", ints{2, 2}}}), {15, 15, 3});
    // same: 7 * 2 = 14
    EXPECT_SHAPE(infer("Conv2DTranspose", {7, 7, 4}, {{"filters", 3}, {"kernel_size", ints{3, 3}}, {"strides", ints{2, 2}}, {"padding", "same"}}), {14, 14, 3});
    // output_padding 1, valid: (7 - 1) * 2 + 3 - 0 + 1 = 16
    EXPECT_SHAPE(infer("Conv2DTranspose", {7, 7, 4}, {{"filters", 3}, {"kernel_size", ints{3, 3}}, {"strides", ints{2, 2}}, {"output_padding", ints{1, 1}}}),
                 {16, 16, 3});
    // output_padding 1, same: (7 - 1) * 2 + 3 - 2 * 1 + 1 = 14
    EXPECT_SHAPE(infer("Conv2DTranspose", {7, 7, 4},
                       {{"filters", 3}, {"kernel_size", ints{3, 3}}, {"strides", ints{2, 2}}, {"padding", "same"}, {"output_padding", ints{1, 1}}}),
                 {14, 14, 3});
    EXPECT_REJECTED(infer("Conv2DTranspose", {7, 7, 4}, {{"strides", ints{2, 2}}, {"output_padding", ints{2, 2}}}), "less than strides");
    EXPECT_SHAPE(infer("Conv3DTranspose", {2, 3, 4, 1}, {{"filters", 2}, {"kernel_size", ints{2, 2, 2}}}), {3, 4, 5, 2});
    // An even kernel under same with output_padding 0: (18 - 1) + 4 - 2 * 2 = 17, whose forward
    // convolution has 17 positions, not 18: TensorFlow rejects it. Without output_padding, or with
    // an odd kernel, or with output_padding 1, it comes back to the input's size.
    EXPECT_REJECTED(infer("Conv2DTranspose", {18, 3, 4}, {{"filters", 3}, {"kernel_size", ints{4, 3}}, {"padding", "same"}, {"output_padding", ints{0, 0}}}),
                    "TensorFlow rejects it");
    EXPECT_SHAPE(infer("Conv2DTranspose", {18, 3, 4}, {{"filters", 3}, {"kernel_size", ints{4, 3}}, {"padding", "same"}}), {18, 3, 3});
    EXPECT_SHAPE(infer("Conv2DTranspose", {18, 3, 4}, {{"filters", 3}, {"kernel_size", ints{3, 3}}, {"padding", "same"}, {"output_padding", ints{0, 0}}}),
                 {18, 3, 3});
    EXPECT_SHAPE(infer("Conv2DTranspose", {18, 3, 4},
                       {{"filters", 3}, {"kernel_size", ints{4, 4}}, {"strides", ints{2, 2}}, {"padding", "same"}, {"output_padding", ints{1, 1}}}),
                 {35, 5, 3});  // (18 - 1) * 2 + 4 - 4 + 1 = 35, which comes back to 18
}

TEST(PoolShapes, WindowsAndGlobal) {
    // strides default to pool_size: floor-ish (28 - 2) / 2 + 1 = 14
    EXPECT_SHAPE(infer("MaxPooling2D", {28, 28, 6}), {14, 14, 6});
    EXPECT_SHAPE(infer("AveragePooling2D", {7, 7, 6}, {{"pool_size", ints{3, 3}}, {"strides", ints{2, 2}}}), {3, 3, 6});
    EXPECT_SHAPE(infer("MaxPooling1D", {7, 2}, {{"pool_size", ints{2}}, {"padding", "same"}}), {4, 2});
    EXPECT_SHAPE(infer("AveragePooling3D", {4, 4, 4, 1}), {2, 2, 2, 1});
    EXPECT_REJECTED(infer("MaxPooling2D", {2, 2, 1}, {{"pool_size", ints{3, 3}}}), "larger than input");
    EXPECT_SHAPE(infer("GlobalAveragePooling2D", {7, 7, 6}), {6});
    EXPECT_SHAPE(infer("GlobalMaxPooling2D", {7, 7, 6}, {{"keepdims", true}}), {1, 1, 6});
    EXPECT_SHAPE(infer("GlobalMaxPooling1D", {6, 7}, {{"data_format", "channels_first"}}), {6});
    EXPECT_SHAPE(infer("GlobalAveragePooling3D", {2, 3, 4, 5}, {{"keepdims", true}}), {1, 1, 1, 5});
}

TEST(RnnShapes, Sequences) {
    EXPECT_SHAPE(infer("LSTM", {49, 1}, {{"units", 50}}), {50});
    EXPECT_SHAPE(infer("LSTM", {49, 1}, {{"units", 50}, {"return_sequences", true}}), {49, 50});
    EXPECT_SHAPE(infer("GRU", {5, 3}, {{"units", 4}}), {4});
    EXPECT_SHAPE(infer("SimpleRNN", {5, 3}, {{"units", 4}, {"return_sequences", true}}), {5, 4});
    EXPECT_SHAPE(infer("Bidirectional", {5, 3}, {{"units", 4}}), {8});  // concat doubles
    EXPECT_SHAPE(infer("Bidirectional", {5, 3}, {{"units", 4}, {"merge_mode", "sum"}, {"return_sequences", true}}), {5, 4});
    EXPECT_SHAPE(infer("TimeDistributed", {5, 3, 2}), {5, 3, 2});
    // ConvLSTM2D: (time, rows, cols, channels) -> (rows', cols', filters)
    EXPECT_SHAPE(infer("ConvLSTM2D", {4, 10, 10, 3}, {{"filters", 6}, {"kernel_size", ints{3, 3}}}), {8, 8, 6});
    EXPECT_SHAPE(infer("ConvLSTM2D", {4, 10, 10, 3}, {{"filters", 6}, {"kernel_size", ints{3, 3}}, {"return_sequences", true}}), {4, 8, 8, 6});
    EXPECT_SHAPE(infer("ConvLSTM1D", {4, 10, 3}, {{"filters", 2}, {"kernel_size", ints{3}}, {"padding", "same"}}), {10, 2});
    EXPECT_SHAPE(infer("ConvLSTM3D", {2, 5, 5, 5, 1}, {{"filters", 2}, {"kernel_size", ints{2, 2, 2}}}), {4, 4, 4, 2});
}

TEST(NormRegActShapes, Identity) {
    EXPECT_SHAPE(infer("BatchNormalization", {7, 7, 3}), {7, 7, 3});
    EXPECT_REJECTED(infer("BatchNormalization", {7, 3}, {{"axis", -3}}), "not an axis");
    EXPECT_SHAPE(infer("LayerNormalization", {3}), {3});
    for (auto cls : {"Dropout", "GaussianDropout", "GaussianNoise", "ActivityRegularization", "AlphaDropout", "ReLU", "LeakyReLU", "PReLU", "ELU",
                     "ThresholdedReLU", "Softmax"})
        EXPECT_SHAPE(infer(cls, {4, 5}), {4, 5});
    EXPECT_SHAPE(infer("SpatialDropout2D", {4, 5, 6}), {4, 5, 6});
    EXPECT_REJECTED(infer("Softmax", {4}, {{"axis", -2}}), "not an axis");
    // Keras' PReLU shares alpha's entry [axis - 1]: -1 needs rank 3, -2 needs rank 4.
    EXPECT_REJECTED(infer("PReLU", {4}, {{"shared_axes", -1}}), "needs rank 3");
    EXPECT_SHAPE(infer("PReLU", {4, 5}, {{"shared_axes", -1}}), {4, 5});
    EXPECT_REJECTED(infer("PReLU", {4, 5}, {{"shared_axes", -2}}), "needs rank 4");
}

TEST(ReshapeShapes, All) {
    EXPECT_SHAPE(infer("Flatten", {4, 4, 16}), {256});
    EXPECT_SHAPE(infer("RepeatVector", {3}, {{"n", 5}}), {5, 3});
    EXPECT_SHAPE(infer("Permute", {3, 7}, {{"dims", ints{2, 1}}}), {7, 3});
    EXPECT_SHAPE(infer("Cropping1D", {10, 2}, {{"cropping", ints{1, 2}}}), {7, 2});
    EXPECT_SHAPE(infer("Cropping1D", {10, 2}), {8, 2});           // Keras' default (1, 1)
    EXPECT_SHAPE(infer("Cropping2D", {10, 12, 2}), {10, 12, 2});  // Keras' default ((0, 0), (0, 0))
    EXPECT_SHAPE(infer("Cropping2D", {10, 12, 2}, {{"cropping", ints{1, 1, 2, 3}}}), {8, 7, 2});
    EXPECT_SHAPE(infer("Cropping3D", {4, 4, 4, 1}, {{"cropping", ints{1, 1, 0, 0, 1, 0}}}), {2, 4, 3, 1});
    // cropping as large as the input: rejected
    EXPECT_REJECTED(infer("Cropping2D", {4, 4, 1}, {{"cropping", ints{2, 2, 0, 0}}}), "not smaller");
    EXPECT_REJECTED(infer("Cropping1D", {3, 1}, {{"cropping", ints{5, 0}}}), "not smaller");
    EXPECT_SHAPE(infer("ZeroPadding2D", {5, 5, 1}, {{"padding", ints{1, 2, 3, 4}}}), {8, 12, 1});
    EXPECT_SHAPE(infer("ZeroPadding1D", {5, 1}, {{"padding", ints{1, 1}}}), {7, 1});
    EXPECT_SHAPE(infer("ZeroPadding3D", {1, 1, 1, 1}), {3, 3, 3, 1});
    EXPECT_SHAPE(infer("UpSampling1D", {5, 2}, {{"size", 3}}), {15, 2});
    EXPECT_SHAPE(infer("UpSampling2D", {5, 4, 2}, {{"size", ints{2, 3}}}), {10, 12, 2});
    EXPECT_SHAPE(infer("UpSampling2D", {2, 5, 4}, {{"data_format", "channels_first"}}), {2, 10, 8});
    EXPECT_SHAPE(infer("UpSampling3D", {1, 2, 3, 4}), {2, 4, 6, 4});
}

TEST(MergeShapes, EqualShapesConcatDot) {
    const auto& add = test::reg().at("Add");
    const memo::shape same[2] = {sample({4, 5}), sample({4, 5})};
    const memo::shape differ[2] = {sample({4, 5}), sample({4, 6})};
    EXPECT_TRUE(add.infer(memo::inputs(same), {}));
    EXPECT_FALSE(add.infer(memo::inputs(differ), {}));
    const auto& cat = test::reg().at("Concatenate");
    const std::vector<memo::value> last{std::int64_t{-1}}, first{std::int64_t{-2}};
    EXPECT_EQ(cat.infer(memo::inputs(differ), last)->str(), sample({4, 11}).str());
    EXPECT_FALSE(cat.infer(memo::inputs(differ), first));
    const auto& dot = test::reg().at("Dot");
    const std::vector<memo::value> dargs{std::int64_t{-1}, false};
    const memo::shape rank3[2] = {sample({3, 5}), sample({4, 5})};
    EXPECT_EQ(dot.infer(memo::inputs(rank3), dargs)->str(), sample({3, 4}).str());
    const memo::shape rank2[2] = {sample({5}), sample({5})};
    EXPECT_EQ(dot.infer(memo::inputs(rank2), dargs)->str(), sample({1}).str());
    EXPECT_FALSE(dot.infer(memo::inputs(differ), dargs));
}

TEST(LocalShapes, ValidOnly) {
    EXPECT_SHAPE(infer("LocallyConnected1D", {10, 3}, {{"filters", 4}, {"kernel_size", ints{3}}}), {8, 4});
    EXPECT_SHAPE(infer("LocallyConnected2D", {6, 6, 3}, {{"filters", 4}, {"kernel_size", ints{3, 3}}, {"strides", ints{3, 3}}}), {2, 2, 4});
    EXPECT_REJECTED(infer("LocallyConnected2D", {6, 6, 3}, {{"padding", "same"}}), "valid");
}

TEST(CoreAndAdapterShapes, All) {
    EXPECT_SHAPE(infer("Dense", {4, 7}, {{"units", 3}}), {4, 3});
    EXPECT_SHAPE(infer("Reshape", {4, 6}, {{"target_shape", ints{2, 12}}}), {2, 12});
    EXPECT_REJECTED(infer("Reshape", {4, 6}, {{"target_shape", ints{5, 5}}}), "elements");
    EXPECT_SHAPE(infer("CustomExpandLayer", {4, 6}, {{"axis", 1}}), {1, 4, 6});
    EXPECT_SHAPE(infer("CustomExpandLayer", {4, 6}, {{"axis", 3}}), {4, 6, 1});
    EXPECT_SHAPE(infer("CustomDropDimLayer", {4, 6, 2}, {{"axis", 2}}), {4, 2});
    EXPECT_SHAPE(infer("CustomPadLayer", {4, 6}, {{"padding", ints{1, 1, 0, 2}}}), {6, 8});
    EXPECT_SHAPE(infer("CustomCropLayer", {4, 6}, {{"cropping", ints{1, 1, 0, 2}}}), {2, 4});
    EXPECT_REJECTED(infer("CustomCropLayer", {4, 6}, {{"cropping", ints{2, 2, 0, 0}}}), "removes all");
    EXPECT_REJECTED(infer("CustomPadLayer", {4, 6}, {{"padding", ints{1, 1}}}), "needs 4");
}

TEST(Model, DtypeFollowsInputsAndCast) {
    memo::builder b(test::reg());
    auto x = b.input({4, 4}, memo::dtype::float64);
    auto y = b.add("ReLU", {x});
    auto z = b.add("CustomCastLayer", {y}, {{"target_dtype", "float16"}});
    auto w = b.add("Softmax", {z});
    b.output(w);
    const auto m = b.finish();
    EXPECT_EQ(m[y].type, memo::dtype::float64);
    EXPECT_EQ(m[w].type, memo::dtype::float16);
}

}  // namespace test_layers_shape_test
