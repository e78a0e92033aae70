#pragma once
// What ONNX import's parts share: the limits that keep hostile files cheap, how memo holds an
// ONNX value (tval) or constant (cval), attribute lookup, float16 and bfloat16 decoding, the
// operators that keep or want a layout, and the Keras class names ONNX operators map to.
#ifndef ONNX_NAMESPACE
#error "memo/onnx/import needs -DONNX_NAMESPACE=onnx -DONNX_ML=1 (ONNX's CMake targets set them)"
#endif
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../../core/model.hpp"
#include "../../io/json.hpp"

namespace memo::onnx::detail {

using i64 = std::int64_t;
using dims_t = std::vector<i64>;
using io::json;

// Limits that keep hostile files from costing much: every count is checked before it is used.
inline constexpr int max_nodes = 100000;           // ONNX nodes, graph values, memo nodes
inline constexpr i64 max_dim = i64{1} << 20;       // one dimension of a graph input
inline constexpr i64 max_elements = i64{1} << 31;  // elements per sample of any tensor
inline constexpr std::size_t max_read = 64;        // values read from one constant (shapes, pads)
inline constexpr int max_json_depth = 64;          // nesting of the memo.model metadata

inline std::string list_str(std::span<const i64> xs) {
    std::string s = "(";
    for (std::size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + std::to_string(xs[i]);
    return s + ")";
}
inline std::string list_str(std::span<const int> xs) {
    dims_t d(xs.begin(), xs.end());
    return list_str(d);
}
/// An ONNX shape, its unknown batch entry as N: (N, 3, 224, 224).
inline std::string dims_str(std::span<const i64> xs) {
    std::string s = "(";
    for (std::size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + (xs[i] == shape::unknown ? std::string("N") : std::to_string(xs[i]));
    return s + ")";
}
inline std::string real_str(double x) { return memo::to_string(value{x}); }

/// a * b for non-negative a and b, or -1 when it passes max_elements.
inline i64 mul_capped(i64 a, i64 b) {
    i64 r = 0;
    if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r) || r > max_elements) return -1;
    return r;
}

inline std::vector<int> identity_perm(int r) {
    std::vector<int> p(static_cast<std::size_t>(r));
    for (int i = 0; i < r; ++i) p[static_cast<std::size_t>(i)] = i;
    return p;
}
/// NCHW held as NHWC: memo's axes hold ONNX's axes 0, 2, 3, ..., 1.
inline std::vector<int> channels_last_perm(int r) {
    std::vector<int> p{0};
    for (int a = 2; a < r; ++a) p.push_back(a);
    p.push_back(1);
    return p;
}

/// `v` (row-major, of dims `d`) with its axes reordered: axis i of the result is axis order[i] of v.
inline std::vector<double> reorder(const std::vector<double>& v, const dims_t& d, const std::vector<int>& order) {
    const std::size_t r = d.size();
    dims_t stride(r, 1), od(r), idx(r, 0);
    for (std::size_t a = r; a-- > 1;) stride[a - 1] = stride[a] * d[a];
    for (std::size_t i = 0; i < r; ++i) od[i] = d[static_cast<std::size_t>(order[i])];
    std::vector<double> out(v.size());
    for (std::size_t o = 0; o < out.size(); ++o) {
        i64 at = 0;
        for (std::size_t i = 0; i < r; ++i) at += idx[i] * stride[static_cast<std::size_t>(order[i])];
        out[o] = v[static_cast<std::size_t>(at)];
        for (std::size_t a = r; a-- > 0;) {
            if (++idx[a] < od[a]) break;
            idx[a] = 0;
        }
    }
    return out;
}

/// A value memo computes: the node producing it, and how memo's tensor holds ONNX's.
struct tval {
    int node = -1;
    std::vector<int> perm;  // memo axis i holds ONNX axis perm[i]; perm[0] is ONNX's batch axis
    int dirs_axis = -1;     // an RNN's direction axis, folded into memo's last axis (dirs * hidden)
    i64 dirs = 1;
    std::vector<i64> features{};  // a flattened value: memo's feature i is ONNX's features[i] (empty: the same)
    int rank() const { return static_cast<int>(perm.size()); }
    int onnx_rank() const { return rank() + (dirs_axis >= 0 ? 1 : 0); }
    bool merged() const { return dirs_axis >= 0; }
};

/// A constant: an initializer, a Constant node's tensor, or a folded shape computation whose
/// element `batch` (a flat index, when >= 0) stands for the batch size.
struct cval {
    const ::onnx::TensorProto* t = nullptr;
    int batch = -1;
};

inline const ::onnx::AttributeProto* find_attr(const ::onnx::NodeProto& n, std::string_view name) {
    for (const auto& a : n.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

inline std::optional<dtype> dtype_of(i64 elem_type) {
    switch (elem_type) {
        case ::onnx::TensorProto::FLOAT: return dtype::float32;
        case ::onnx::TensorProto::FLOAT16: return dtype::float16;
        case ::onnx::TensorProto::DOUBLE: return dtype::float64;
        case ::onnx::TensorProto::BFLOAT16: return dtype::bfloat16;
        default: return std::nullopt;
    }
}

inline double half_to_double(std::uint16_t h) {
    const int e = (h >> 10) & 31, m = h & 1023;
    const double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? std::numeric_limits<double>::quiet_NaN() : HUGE_VAL) : std::ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}
inline double bfloat16_to_double(std::uint16_t b) {
    const std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

/// Operators whose output has the input's layout, seen through when looking for what layout a
/// fresh tensor should take.
inline bool layout_free(std::string_view op) {
    static constexpr std::string_view ops[] = {"Relu", "Sigmoid",     "Tanh",      "Softplus",  "Softsign", "Elu",
                                               "Selu", "HardSigmoid", "HardSwish", "LeakyRelu", "PRelu",    "ThresholdedRelu",
                                               "Clip", "Exp",         "Identity",  "Dropout",   "Cast",     "BatchNormalization",
                                               "Add",  "Sub",         "Mul",       "Div",       "Sum",      "Max",
                                               "Min",  "Mean"};
    return std::find(std::begin(ops), std::end(ops), op) != std::end(ops);
}
/// Operators that work on NCHW tensors' spatial axes: memo holds their input channels_last.
inline bool spatial_op(std::string_view op) {
    static constexpr std::string_view ops[] = {"Conv",          "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool",
                                               "GlobalMaxPool", "Pad",           "Resize",  "Upsample"};
    return std::find(std::begin(ops), std::end(ops), op) != std::end(ops);
}

inline constexpr std::string_view conv_names[] = {"", "Conv1D", "Conv2D", "Conv3D"};
inline constexpr std::string_view depthwise_names[] = {"", "DepthwiseConv1D", "DepthwiseConv2D", ""};
inline constexpr std::string_view transpose_names[] = {"", "", "Conv2DTranspose", "Conv3DTranspose"};
inline constexpr std::string_view max_pool_names[] = {"", "MaxPooling1D", "MaxPooling2D", "MaxPooling3D"};
inline constexpr std::string_view avg_pool_names[] = {"", "AveragePooling1D", "AveragePooling2D", "AveragePooling3D"};
inline constexpr std::string_view global_max_names[] = {"", "GlobalMaxPooling1D", "GlobalMaxPooling2D", "GlobalMaxPooling3D"};
inline constexpr std::string_view global_avg_names[] = {"", "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalAveragePooling3D"};
inline constexpr std::string_view zero_padding_names[] = {"", "ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D"};
inline constexpr std::string_view cropping_names[] = {"", "Cropping1D", "Cropping2D", "Cropping3D"};
inline constexpr std::string_view upsampling_names[] = {"", "UpSampling1D", "UpSampling2D", "UpSampling3D"};

/// Keras' 'same' padding in total along one axis (TensorFlow puts the odd one at the end).
inline i64 same_total(i64 in, i64 k_eff, i64 stride) {
    const i64 out = (in + stride - 1) / stride;
    return std::max<i64>((out - 1) * stride + k_eff - in, 0);
}

}  // namespace memo::onnx::detail
