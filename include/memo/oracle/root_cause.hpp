#pragma once
// Root causes, not signatures. A bug's signature (differential.hpp) tells its minimal models
// apart by every setting of the faulty node; one fault of a library shows under many of them
// (NaN dropped by a max over a window in 1D, 2D, 3D and global pooling; a kernel wrong with and
// without padding). A root cause is what those signatures share: the verdict's kind, its culprits,
// how the culprit failed, the operation (the layer class without its dimensionality or Global
// prefix, and the max-based operations as one where a NaN is lost), the dtype the node computes in
// (of a wrong or lost value: a kernel may be wrong in one precision only), and the error text with
// its numbers and dimensionalities blanked (a metamorphic verdict's without the relation that met
// it). Mode parameters are left out: the same kernel met with other paddings or activations is the
// same fault. So is a crash's dtype: its error text names the dtype where the failure is the
// dtype's ("not implemented for 'Half'"), and where it does not, the same refusal in float16 and
// float32 (Keras on PyTorch normalising the wrong axis) is one fault.
#include <string>
#include <string_view>

#include "../core/hash.hpp"
#include "oracle.hpp"

namespace memo::oracle {

/// The operation a layer class computes, whatever its dimensionality: "MaxPooling" for
/// MaxPooling1D and GlobalMaxPooling3D, "ConvTranspose" for Conv2DTranspose. A wrapper computes
/// the layer it wraps (memo's Bidirectional is Bidirectional(LSTM), its TimeDistributed is
/// TimeDistributed(ReLU)): a fault of ONNX Runtime's LSTM shows in both.
inline std::string operation_of(std::string_view layer) {
    if (layer == "Bidirectional") return "LSTM";
    if (layer == "TimeDistributed") return "ReLU";
    std::string op(layer);
    if (op.starts_with("Global")) op.erase(0, 6);
    for (const char* d : {"1D", "2D", "3D"})
        if (const auto at = op.find(d); at != std::string::npos) op.erase(at, 2);
    return op;
}

/// Where a NaN or an infinity is lost, the operations that take a maximum (pooling, ReLU, Maximum)
/// lose it the same way: a comparison with NaN that is false, so the other operand wins.
inline bool max_based(std::string_view op) { return op == "MaxPooling" || op == "ReLU" || op == "Maximum" || op == "ThresholdedReLU"; }

/// The error text with each number blanked to one '#', each list of numbers too (a shape, "[2, 1,
/// 2]": its length is the input's rank, not the fault), and each dimensionality (1D, 2D, 3D) to 'ND'.
inline std::string blank_numbers(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size() && i < 160; ++i) {
        const char c = text[i];
        const bool digit = c >= '0' && c <= '9';
        if (digit && i + 1 < text.size() && text[i + 1] == 'D' && (i == 0 || !(text[i - 1] >= '0' && text[i - 1] <= '9'))) {
            out += 'N';
            continue;
        }
        if (!digit) {
            out += c;
            continue;
        }
        // After "#, " or "#,": the list goes on, its separator dropped.
        std::size_t k = out.size();
        while (k > 0 && out[k - 1] == ' ') --k;
        if (k > 1 && out[k - 1] == ',' && out[k - 2] == '#') out.resize(k - 1);
        else if (out.empty() || out.back() != '#') out += '#';
    }
    return out;
}

/// A metamorphic verdict's message without the relation that met it ("relation triangle: the
/// variant fails, ..."): one fault shows under several relations.
inline std::string_view without_relation(std::string_view message) {
    if (!message.starts_with("relation ")) return message;
    const auto at = message.find(": ");
    return at == std::string_view::npos ? message : message.substr(at + 2);
}

/// A stable name for a bug's root cause: its operation and a hash of what else it hinges on.
/// "MaxPooling-9c1e2f30".
inline std::string root_cause(const verdict& v, const model& m) {
    const std::string_view cls = named_class(v, m);
    std::string op = cls.empty() ? "unlocalised" : operation_of(cls);
    const bool lost = v.what == kind::nan && v.message.find("lost") != std::string::npos;
    if (lost && max_based(op)) op = "max";
    hasher h = verdict_hash(v);
    h.mix(op);
    if (v.what != kind::crash && v.node >= 0 && static_cast<std::size_t>(v.node) < m.size()) h.mix(name_of(m[v.node].type));
    h.mix(blank_numbers(without_relation(v.message)));
    return op + "-" + hex8(h);
}

}  // namespace memo::oracle
