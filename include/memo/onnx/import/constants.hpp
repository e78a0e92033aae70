#pragma once
// ONNX import: reading constants (shapes, pads, scales) and the file's weights.
#include "../../layers/weights.hpp"
#include "../../tensors/tensor.hpp"
#include "state.hpp"

namespace memo::onnx::detail {

/// Reading small constants (shapes, pads, scales) and the weights a layer is given.
class constant_ops : public import_state {
public:
    using import_state::import_state;

protected:
    // ---- constants --------------------------------------------------------------------------

    dims_t const_dims(const cval& c, const char* what) const {
        const auto& t = *c.t;
        if (t.dims_size() > shape::max_rank) fail(std::string(what) + " has rank " + std::to_string(t.dims_size()));
        dims_t d(t.dims().begin(), t.dims().end());
        for (auto x : d)
            if (x < 0 || x > (i64{1} << 40)) fail(std::string(what) + " has shape " + list_str(d));
        return d;
    }
    /// How many values a small constant holds; fails past `cap`.
    std::size_t const_count(const ::onnx::TensorProto& t, const std::string& what, std::size_t cap) const {
        if (t.data_location() == ::onnx::TensorProto::EXTERNAL) fail(what + " is stored outside the file");
        if (t.dims_size() > shape::max_rank) fail(what + " has rank " + std::to_string(t.dims_size()));
        std::size_t n = 1;
        for (auto d : t.dims()) {
            if (d < 0) fail(what + " has a negative dimension");
            if (d == 0) return 0;
            if (static_cast<std::size_t>(d) > cap || (n *= static_cast<std::size_t>(d)) > cap) fail(what + " has more than " + std::to_string(cap) + " values");
        }
        return n;
    }
    template <class T>
    std::vector<T> raw_values(const ::onnx::TensorProto& t, std::size_t n, const std::string& what) const {
        const std::string& raw = t.raw_data();
        if (raw.size() != n * sizeof(T)) fail(what + " has " + std::to_string(raw.size()) + " bytes of data for " + std::to_string(n) + " values");
        std::vector<T> v(n);
        if (n) std::memcpy(v.data(), raw.data(), n * sizeof(T));  // ONNX stores raw data little-endian, as x86 and ARM do
        return v;
    }
    void check_count(int have, std::size_t n, const std::string& what) const {
        if (static_cast<std::size_t>(have) != n) fail(what + " holds " + std::to_string(have) + " values, its shape says " + std::to_string(n));
    }
    /// The integers of a small integer constant.
    dims_t read_ints(const cval& c, const std::string& what, std::size_t cap = max_read) const {
        const auto& t = *c.t;
        const std::size_t n = const_count(t, what, cap);
        const bool raw = t.has_raw_data();
        dims_t out;
        switch (t.data_type()) {
            case ::onnx::TensorProto::INT64:
                if (raw) return raw_values<std::int64_t>(t, n, what);
                check_count(t.int64_data_size(), n, what);
                return dims_t(t.int64_data().begin(), t.int64_data().end());
            case ::onnx::TensorProto::INT32:
                if (raw) {
                    for (auto x : raw_values<std::int32_t>(t, n, what)) out.push_back(x);
                    return out;
                }
                break;
            case ::onnx::TensorProto::UINT64:
                if (raw) {
                    for (auto x : raw_values<std::uint64_t>(t, n, what)) out.push_back(static_cast<i64>(std::min<std::uint64_t>(x, INT64_MAX)));
                    return out;
                }
                check_count(t.uint64_data_size(), n, what);
                for (auto x : t.uint64_data()) out.push_back(static_cast<i64>(std::min<std::uint64_t>(x, INT64_MAX)));
                return out;
            case ::onnx::TensorProto::INT8:
            case ::onnx::TensorProto::BOOL:
                if (raw) {
                    for (auto x : raw_values<std::int8_t>(t, n, what)) out.push_back(x);
                    return out;
                }
                break;
            case ::onnx::TensorProto::UINT8:
                if (raw) {
                    for (auto x : raw_values<std::uint8_t>(t, n, what)) out.push_back(x);
                    return out;
                }
                break;
            case ::onnx::TensorProto::INT16:
                if (raw) {
                    for (auto x : raw_values<std::int16_t>(t, n, what)) out.push_back(x);
                    return out;
                }
                break;
            case ::onnx::TensorProto::UINT16:
                if (raw) {
                    for (auto x : raw_values<std::uint16_t>(t, n, what)) out.push_back(x);
                    return out;
                }
                break;
            case ::onnx::TensorProto::UINT32:
                if (raw) {
                    for (auto x : raw_values<std::uint32_t>(t, n, what)) out.push_back(x);
                    return out;
                }
                check_count(t.uint64_data_size(), n, what);
                return dims_t(t.uint64_data().begin(), t.uint64_data().end());
            default: fail(what + " holds " + type_str(t.data_type()) + " values, not integers");
        }
        check_count(t.int32_data_size(), n, what);
        return dims_t(t.int32_data().begin(), t.int32_data().end());
    }
    /// The values of a small numeric constant, as reals.
    std::vector<double> read_reals(const cval& c, const std::string& what, std::size_t cap = max_read) const {
        const auto& t = *c.t;
        const std::size_t n = const_count(t, what, cap);
        const bool raw = t.has_raw_data();
        std::vector<double> out;
        switch (t.data_type()) {
            case ::onnx::TensorProto::FLOAT:
                if (raw) {
                    for (auto x : raw_values<float>(t, n, what)) out.push_back(x);
                    return out;
                }
                check_count(t.float_data_size(), n, what);
                return std::vector<double>(t.float_data().begin(), t.float_data().end());
            case ::onnx::TensorProto::DOUBLE:
                if (raw) return raw_values<double>(t, n, what);
                check_count(t.double_data_size(), n, what);
                return std::vector<double>(t.double_data().begin(), t.double_data().end());
            case ::onnx::TensorProto::FLOAT16:
            case ::onnx::TensorProto::BFLOAT16: {
                const bool half = t.data_type() == ::onnx::TensorProto::FLOAT16;
                if (raw) {
                    for (auto x : raw_values<std::uint16_t>(t, n, what)) out.push_back(half ? half_to_double(x) : bfloat16_to_double(x));
                    return out;
                }
                check_count(t.int32_data_size(), n, what);
                for (auto x : t.int32_data()) {
                    const auto bits = static_cast<std::uint16_t>(x & 0xffff);
                    out.push_back(half ? half_to_double(bits) : bfloat16_to_double(bits));
                }
                return out;
            }
            case ::onnx::TensorProto::INT64:
            case ::onnx::TensorProto::INT32:
            case ::onnx::TensorProto::INT16:
            case ::onnx::TensorProto::INT8:
            case ::onnx::TensorProto::UINT64:
            case ::onnx::TensorProto::UINT32:
            case ::onnx::TensorProto::UINT16:
            case ::onnx::TensorProto::UINT8:
            case ::onnx::TensorProto::BOOL:
                for (auto x : read_ints(c, what, cap)) out.push_back(static_cast<double>(x));
                return out;
            default: fail(what + " holds " + type_str(t.data_type()) + " values, not numbers");
        }
    }
    double scalar_real(int k, const char* what) const {
        const auto v = read_reals(const_in(k, what), input_label(k) + " (" + what + ")");
        if (v.size() != 1) fail(input_label(k) + " (" + what + ") holds " + std::to_string(v.size()) + " values, expected one");
        return v[0];
    }

    // ---- weights ----------------------------------------------------------------------------

    /// Every value of weight input k (an initializer, as large as it is).
    std::vector<double> weight_in(int k, const char* what) const {
        return read_reals(const_in(k, what), input_label(k) + " (" + what + ")", static_cast<std::size_t>(max_elements));
    }
    /// A 1-D weight input k as it is (a bias, a normalisation's statistic).
    given_weights::one vector_in(int k, const char* what) const {
        auto v = weight_in(k, what);
        const auto n = static_cast<i64>(v.size());
        return {{n}, std::move(v)};
    }
    /// Gives node k the file's weights, in Keras' order and layouts. Weights that do not fit the
    /// layer's own (another count or shape) are left to be drawn, and the model noted as inexact.
    void give(int k, std::vector<given_weights::one> ws) {
        const auto specs = weight_specs(m_, k);
        bool fits = specs.size() == ws.size();
        for (std::size_t i = 0; fits && i < ws.size(); ++i)
            fits = specs[i].dims == ws[i].dims && static_cast<i64>(ws[i].values.size()) == tensor::count(ws[i].dims);
        if (!fits) {
            std::string want, have;
            for (const auto& w : specs) want += (want.empty() ? "" : ", ") + w.name + " " + list_str(w.dims);
            for (const auto& w : ws) have += (have.empty() ? "" : ", ") + list_str(w.dims);
            return inexact(std::string(m_[k].layer->name) + " takes weights " + want + "; the file's are " + have + ", so memo draws its own");
        }
        m_.nodes[static_cast<std::size_t>(k)].weights = give_weights(std::move(ws));
    }

    /// An INT64 constant holding `v`, of shape `d` (1-D of v's length when empty and not scalar).
    cval int_const(const dims_t& v, dims_t d, bool scalar, int batch) {
        ::onnx::TensorProto t;
        t.set_data_type(::onnx::TensorProto::INT64);
        if (!scalar && d.empty()) d.push_back(static_cast<i64>(v.size()));
        for (auto x : d) t.add_dims(x);
        for (auto x : v) t.add_int64_data(x);
        return cval{own(std::move(t)), batch};
    }
};

}  // namespace memo::onnx::detail
