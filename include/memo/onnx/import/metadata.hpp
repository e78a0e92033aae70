#pragma once
// A file memo wrote itself carries the exact model in metadata_props["memo.model"] (our JSON
// format): it comes back unchanged, once checked (the file is untrusted: nesting, numbers and
// sizes are checked before model_from_json takes them on trust).
#include <string>
#include <string_view>
#include <unordered_set>

#include "../../io/json.hpp"
#include "common.hpp"

namespace memo::onnx::detail {

/// The metadata JSON comes from an untrusted file, and model_from_json takes shapes and indices
/// on trust: check nesting before parsing, and numbers and sizes before reading.
inline void check_json_depth(std::string_view text, const std::string& src) {
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_json_depth) throw error(src + ": metadata memo.model nests deeper than " + std::to_string(max_json_depth));
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
}

inline void check_memo_json(const json& j, const std::string& src) {
    const std::string what = src + ": metadata memo.model: ";
    auto integers = [&](const json& a, const char* field) {
        if (!a.is_array()) throw error(what + field + " is not a list");
        for (const auto& e : a)
            if (!e.is_number_integer()) throw error(what + field + " holds " + e.dump() + ", not an integer");
    };
    // Sample elements of a shape, each entry an integer 1..max_elements (or null for the batch).
    auto elements = [&](const json& a, const char* field, bool first_is_batch) {
        if (!a.is_array()) throw error(what + field + " is not a list");
        i64 e = 1;
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (first_is_batch && i == 0 && a[i].is_null()) continue;
            if (!a[i].is_number_integer() || a[i].get<i64>() < 1 || a[i].get<i64>() > max_elements)
                throw error(what + field + " " + a.dump() + " has an entry that is not 1 to 2^31");
            if (first_is_batch && i == 0) continue;
            if ((e = mul_capped(e, a[i].get<i64>())) < 0) throw error(what + field + " " + a.dump() + " has more than 2^31 elements");
        }
    };
    if (!j.is_object()) throw error(what + "not an object");
    if (j.contains("seed") && !j["seed"].is_number_integer()) throw error(what + "seed is not an integer");
    if (!j.contains("nodes") || !j["nodes"].is_array()) throw error(what + "nodes is not a list");
    if (j["nodes"].size() > static_cast<std::size_t>(max_nodes)) throw error(what + "more than " + std::to_string(max_nodes) + " nodes");
    for (const auto& n : j["nodes"]) {
        if (!n.is_object()) throw error(what + "a node is not an object");
        if (n.contains("inputs")) integers(n["inputs"], "inputs");
        if (n.contains("shape")) elements(n["shape"], "shape", true);
        if (n.contains("params") && n["params"].is_object())
            for (const char* p : {"target_shape", "shape"})
                if (n["params"].contains(p) && n["params"][p].is_array()) elements(n["params"][p], p, false);
    }
    if (j.contains("outputs")) integers(j["outputs"], "outputs");
    if (j.contains("weight_edits")) {
        if (!j["weight_edits"].is_array()) throw error(what + "weight_edits is not a list");
        for (const auto& e : j["weight_edits"]) {
            if (!e.is_object()) throw error(what + "a weight edit is not an object");
            for (const char* f : {"node", "seed"})
                if (e.contains(f) && !e[f].is_number_integer()) throw error(what + "weight edit " + f + " is not an integer");
        }
    }
}

/// Rebuilds the model that memo's exporter stored in the metadata, after checking it agrees with
/// the graph's inputs and outputs.
inline model from_metadata(const ::onnx::ModelProto& mp, const std::string& text, const registry& reg, const std::string& src) {
    check_json_depth(text, src);
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        throw error(src + ": metadata memo.model is not JSON: " + e.what());
    }
    check_memo_json(j, src);
    model m;
    try {
        m = io::model_from_json(j, reg, src);
    } catch (const json::exception& e) {
        throw error(src + ": metadata memo.model: " + e.what());
    }
    std::unordered_set<std::string> inits;
    for (const auto& t : mp.graph().initializer()) inits.insert(t.name());
    std::size_t inputs = 0;
    for (const auto& vi : mp.graph().input()) inputs += !inits.count(vi.name());
    if (inputs != m.input_nodes().size())
        throw error(src + ": metadata memo.model has " + std::to_string(m.input_nodes().size()) + " inputs, the graph " + std::to_string(inputs));
    if (static_cast<std::size_t>(mp.graph().output_size()) != m.outputs.size())
        throw error(src + ": metadata memo.model has " + std::to_string(m.outputs.size()) + " outputs, the graph " + std::to_string(mp.graph().output_size()));
    return m;
}

}  // namespace memo::onnx::detail
