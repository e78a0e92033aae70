#pragma once
// Our model file: JSON that round-trips a model exactly.
//
//   {"format": "memo.model", "version": 1, "seed": 7, "outputs": [3],
//    "nodes": [{"name": "input", "layer": "InputLayer", "inputs": [], "dtype": "float32",
//               "shape": [null, 28, 28, 1], "params": {"shape": [28, 28, 1], "dtype": "float32"}}, ...]}
//
// A node with given weights (an imported file's) holds them as
// "weights": [{"dims": [3, 3, 16, 32], "float32": "<base64 of little-endian values>"}, ...],
// float32 where every value is one, else "float64". Where a campaign writes many mutants of one
// imported model, the node holds "weights": {"digest": "<16 hex digits>"} instead, and the values
// are kept once apart: in the store's weights table, or in a weights file,
//   {"format": "memo.weights", "digest": "<16 hex digits>", "weights": [...]}
// named <digest>.json in a folder weights/ beside the model file or one folder up (a campaign's
// queue/ refers to DIR/weights/).
#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../core/model.hpp"

namespace memo::io {

using json = nlohmann::json;

inline json to_json(const value& v) {
    struct visitor {
        json operator()(none_t) const { return nullptr; }
        json operator()(bool b) const { return b; }
        json operator()(std::int64_t i) const { return i; }
        json operator()(double d) const { return d; }
        json operator()(const std::string& s) const { return s; }
        json operator()(const ints& xs) const {
            json a = json::array();
            for (auto x : xs) a.push_back(x);
            return a;
        }
    };
    return std::visit(visitor{}, v);
}

/// A JSON value as a parameter value; throws memo::error naming `what` when it has no such form.
inline value from_json(const json& j, const std::string& what) {
    if (j.is_null()) return none;
    if (j.is_boolean()) return j.get<bool>();
    if (j.is_number_integer()) return j.get<std::int64_t>();
    if (j.is_number_float()) return j.get<double>();
    if (j.is_string()) return j.get<std::string>();
    if (j.is_array()) {
        ints xs;
        for (const auto& e : j) {
            if (e.is_array()) {  // nested pairs ((1, 1), (2, 2)) are stored flat
                for (const auto& f : e) {
                    if (!f.is_number_integer()) throw error(what + ": expected integers, got " + j.dump());
                    xs.push(f.get<std::int64_t>());
                }
                continue;
            }
            if (!e.is_number_integer()) throw error(what + ": expected integers, got " + j.dump());
            if (xs.n == ints::capacity) throw error(what + ": more than " + std::to_string(ints::capacity) + " integers");
            xs.push(e.get<std::int64_t>());
        }
        return xs;
    }
    throw error(what + ": unsupported value " + j.dump());
}

inline json shape_json(const shape& s) {
    json a = json::array();
    for (auto d : s.view()) a.push_back(d == shape::unknown ? json(nullptr) : json(d));
    return a;
}

namespace detail {

inline constexpr char base64_digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

inline std::string base64(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        std::uint32_t v = 0;
        const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
        for (std::size_t k = 0; k < 3; ++k) v = v << 8 | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
        for (std::size_t k = 0; k < 4; ++k) out.push_back(k <= n ? base64_digits[v >> (18 - 6 * k) & 63] : '=');
    }
    return out;
}

/// The bytes of base64 text, or nothing when it is not base64.
inline std::optional<std::string> unbase64(std::string_view text) {
    if (text.size() % 4) return std::nullopt;
    std::string out;
    out.reserve(text.size() / 4 * 3);
    for (std::size_t i = 0; i < text.size(); i += 4) {
        std::uint32_t v = 0;
        int pad = 0;
        for (std::size_t k = 0; k < 4; ++k) {
            const char c = text[i + k];
            const char* at = c == '=' ? nullptr : std::strchr(base64_digits, c);
            if (c == '=' && i + 4 == text.size() && k >= 2) ++pad;
            else if (!at || !c || pad) return std::nullopt;
            v = v << 6 | (at ? static_cast<std::uint32_t>(at - base64_digits) : 0u);
        }
        for (int k = 0; k < 3 - pad; ++k) out.push_back(static_cast<char>(v >> (16 - 8 * k) & 255));
    }
    return out;
}

template <class T>
std::string little_endian(const std::vector<double>& xs) {
    static_assert(std::endian::native == std::endian::little, "memo's model files store little-endian values");
    std::string bytes(xs.size() * sizeof(T), '\0');
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const T v = static_cast<T>(xs[i]);
        std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
    }
    return bytes;
}

inline json given_weights_json(const given_weights& g) {
    json a = json::array();
    for (const auto& w : g.weights) {
        const bool f32 = std::all_of(w.values.begin(), w.values.end(), [](double x) { return static_cast<double>(static_cast<float>(x)) == x || x != x; });
        a.push_back({{"dims", w.dims}, {f32 ? "float32" : "float64", base64(f32 ? little_endian<float>(w.values) : little_endian<double>(w.values))}});
    }
    return a;
}

inline std::shared_ptr<const given_weights> given_weights_from_json(const json& j, const std::string& where) {
    if (!j.is_array()) throw error(where + ": key \"weights\" should hold an array of {\"dims\", \"float32\" or \"float64\"} objects");
    std::vector<given_weights::one> ws;
    for (const auto& e : j) {
        given_weights::one w;
        if (!e.is_object() || !e.contains("dims") || !e["dims"].is_array()) throw error(where + ": a weight has no \"dims\" array");
        std::int64_t count = 1;
        for (const auto& d : e["dims"]) {
            if (!d.is_number_integer() || d.get<std::int64_t>() < 0 || d.get<std::int64_t>() > (std::int64_t{1} << 31))
                throw error(where + ": a weight's dims should be integers 0 to 2^31, not " + e["dims"].dump());
            w.dims.push_back(d.get<std::int64_t>());
            count *= w.dims.back();
            if (count > (std::int64_t{1} << 31)) throw error(where + ": a weight has more than 2^31 values");
        }
        const bool f32 = e.contains("float32");
        const auto* text = f32 ? &e["float32"] : e.contains("float64") ? &e["float64"] : nullptr;
        if (!text || !text->is_string()) throw error(where + ": a weight has no \"float32\" or \"float64\" base64 string");
        const auto bytes = unbase64(text->get_ref<const std::string&>());
        const std::size_t size = f32 ? sizeof(float) : sizeof(double);
        if (!bytes) throw error(where + ": a weight's values are not base64");
        if (bytes->size() != static_cast<std::size_t>(count) * size)
            throw error(where + ": a weight of dims " + e["dims"].dump() + " holds " + std::to_string(bytes->size() / size) + " values, not " +
                        std::to_string(count));
        w.values.resize(static_cast<std::size_t>(count));
        for (std::size_t i = 0; i < w.values.size(); ++i) {
            if (f32) {
                float v;
                std::memcpy(&v, bytes->data() + i * size, size);
                w.values[i] = v;
            } else {
                std::memcpy(&w.values[i], bytes->data() + i * size, size);
            }
        }
        ws.push_back(std::move(w));
    }
    return give_weights(std::move(ws));
}

}  // namespace detail

/// Given weights kept apart from the models that carry them, by digest: `keep_weights` is handed
/// a node's weights as model_to_json writes their digest in their place; `find_weights` gives
/// them back to model_from_json (null: not there).
using keep_weights = std::function<void(const given_weights&)>;
using find_weights = std::function<std::shared_ptr<const given_weights>(std::uint64_t digest)>;

/// The model as JSON; a node's given weights inline, or as their digest handed to `keep`.
inline json model_to_json(const model& m, const keep_weights& keep = {}) {
    json nodes = json::array();
    for (const auto& n : m.nodes) {
        json params = json::object();
        for (std::size_t i = 0; i < n.params.size(); ++i) params[std::string(n.layer->params[i].name)] = to_json(n.params[i]);
        nodes.push_back({{"name", n.name},
                         {"layer", n.layer->name},
                         {"inputs", n.inputs},
                         {"dtype", name_of(n.type)},
                         {"shape", shape_json(n.out)},
                         {"params", std::move(params)}});
        if (n.weights && keep) {
            keep(*n.weights);
            nodes.back()["weights"] = {{"digest", hex(n.weights->digest)}};
        } else if (n.weights) {
            nodes.back()["weights"] = detail::given_weights_json(*n.weights);
        }
    }
    json out = {{"format", "memo.model"}, {"version", 1}, {"seed", m.seed}, {"outputs", m.outputs}, {"nodes", std::move(nodes)}};
    if (!m.weight_edits.empty()) {
        json edits = json::array();
        for (const auto& e : m.weight_edits)
            edits.push_back({{"kind", weight_edit_names[static_cast<std::size_t>(e.what)]}, {"node", e.node}, {"amount", e.amount}, {"seed", e.seed}});
        out["weight_edits"] = std::move(edits);
    }
    return out;
}

/// j[key] as a T, or an error in the user's terms: where, which key is missing or wrong, and what
/// it should hold.
template <class T>
T required(const json& j, const std::string& key, const std::string& where, std::string_view holds) {
    const auto it = j.is_object() ? j.find(key) : j.end();
    if (it == j.end()) throw error(where + ": missing key \"" + key + "\", which should hold " + std::string(holds));
    try {
        return it->get<T>();
    } catch (const json::exception&) {
        throw error(where + ": key \"" + key + "\" should hold " + std::string(holds) + ", not " + it->dump().substr(0, 60));
    }
}

/// A weights file's JSON, and its weights back (checked against the digest it says).
inline json weights_file_json(const given_weights& g) {
    return {{"format", "memo.weights"}, {"digest", hex(g.digest)}, {"weights", detail::given_weights_json(g)}};
}
inline std::shared_ptr<const given_weights> weights_from_file_json(const json& j, const std::string& origin) {
    if (!j.is_object() || j.value("format", "") != "memo.weights") throw error(origin + ": not memo weights (no \"format\": \"memo.weights\")");
    auto g = detail::given_weights_from_json(required<json>(j, "weights", origin, "an array of weights"), origin);
    if (hex(g->digest) != j.value("digest", ""))
        throw error(origin + ": its weights' digest is " + hex(g->digest) + ", not the " + j.value("digest", "") + " it says");
    return g;
}

/// Reads our model format; `origin` names the input in errors, `find` gives the weights a node
/// refers to by digest. The result is validated.
inline model model_from_json(const json& j, const registry& reg, const std::string& origin = "model", const find_weights& find = {}) {
    if (!j.is_object() || j.value("format", "") != "memo.model") throw error(origin + ": not a memo model (no \"format\": \"memo.model\")");
    model m;
    m.seed = j.value("seed", std::uint64_t{0});
    const auto nodes = required<json>(j, "nodes", origin, "the model's nodes, an array of objects in topological order");
    if (!nodes.is_array()) throw error(origin + ": key \"nodes\" should hold an array of node objects");
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const auto& jn = nodes[i];
        const std::string where = origin + ": node " + std::to_string(i);
        const auto cls = required<std::string>(jn, "layer", where, "the node's layer class, a string such as \"Conv2D\"");
        const layer_def* L = reg.find(cls);
        if (!L) throw error(where + ": unknown layer class '" + cls + "'");
        node n = make_node(*L, jn.value("name", ""));
        const auto ps = required<json>(jn, "params", where, "the node's parameters, an object (empty for defaults)");
        for (auto it = ps.begin(); it != ps.end(); ++it) {
            const int k = L->param_index(it.key());
            if (k < 0) throw error(where + " (" + cls + "): unknown parameter '" + it.key() + "'");
            n.params[static_cast<std::size_t>(k)] = from_json(it.value(), where + " (" + cls + ") parameter " + it.key());
        }
        n.inputs = required<std::vector<int>>(jn, "inputs", where, "the indices of the nodes that feed it, an array of integers ([] for an InputLayer)");
        const auto t = parse_dtype(jn.value("dtype", "float32"));
        if (!t) throw error(where + ": unknown dtype " + jn.value("dtype", ""));
        n.type = *t;
        const auto dims = required<json>(jn, "shape", where, "the node's output shape, an array of integers with null for the batch");
        if (!dims.is_array()) throw error(where + ": key \"shape\" should hold an array of integers with null for the batch");
        for (const auto& d : dims) {
            if (!d.is_null() && !d.is_number_integer()) throw error(where + ": key \"shape\" should hold integers and null, not " + d.dump());
            n.out.push(d.is_null() ? shape::unknown : d.get<std::int64_t>());
        }
        if (const auto w = jn.find("weights"); w != jn.end() && w->is_object()) {
            const auto digest = required<std::string>(*w, "digest", where, "the 16 hex digits of the node's weights, kept apart");
            const auto d = std::strtoull(digest.c_str(), nullptr, 16);
            n.weights = find ? find(d) : nullptr;
            if (!n.weights || hex(n.weights->digest) != digest) throw error(where + ": its weights " + digest + " are not kept beside the model");
        } else if (w != jn.end()) {
            n.weights = detail::given_weights_from_json(*w, where);
        }
        m.nodes.push_back(std::move(n));
    }
    m.outputs = required<std::vector<int>>(j, "outputs", origin, "the indices of the model's output nodes, an array of integers");
    for (const auto& e : j.value("weight_edits", json::array())) {
        weight_edit w;
        const std::string at = origin + ": weight edit";
        const auto kind = required<std::string>(e, "kind", at, "the kind of edit, a string");
        const auto* it = std::find(std::begin(weight_edit_names), std::end(weight_edit_names), kind);
        if (it == std::end(weight_edit_names)) throw error(origin + ": unknown weight edit '" + kind + "'");
        w.what = static_cast<weight_edit::kind>(it - std::begin(weight_edit_names));
        w.node = required<int>(e, "node", at, "the index of the node whose weights it edits");
        w.amount = required<double>(e, "amount", at, "a number");
        w.seed = required<std::uint64_t>(e, "seed", at, "an unsigned integer");
        if (w.node < 0 || static_cast<std::size_t>(w.node) >= m.nodes.size())
            throw error(origin + ": weight edit on node " + std::to_string(w.node) + ", which is not a node");
        m.weight_edits.push_back(w);
    }
    if (auto ok = validate(m); !ok) throw error(origin + ": " + ok.reason());
    return m;
}

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw error(path + ": cannot open");
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// Writes a file atomically (a temporary beside it, then rename), so a reader never sees half.
inline void write_file(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw error(path + ": cannot write");
        out << text;
        if (!out.flush()) throw error(path + ": write failed");
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) throw error(path + ": cannot rename " + tmp + " into place");
}

inline json parse_json_file(const std::string& path) {
    const auto text = read_file(path);
    try {
        return json::parse(text);
    } catch (const json::parse_error& e) {
        throw error(path + ": malformed JSON: " + e.what());
    }
}

/// Reads model files, and the weights files they refer to (weights/<digest>.json beside a model
/// file or one folder up), each weights file once.
class model_reader {
public:
    explicit model_reader(const registry& reg) : reg_(reg) {}

    model operator()(const std::string& path) {
        namespace fs = std::filesystem;
        const auto find = [&](std::uint64_t digest) -> std::shared_ptr<const given_weights> {
            const fs::path folder = fs::path(path).parent_path();
            for (const fs::path& dir : {folder / "weights", folder.parent_path() / "weights"}) {
                const auto file = (dir / (hex(digest) + ".json")).lexically_normal().string();
                if (auto it = read_.find(file); it != read_.end()) return it->second;
                if (fs::exists(file)) return read_[file] = weights_from_file_json(parse_json_file(file), file);
            }
            return nullptr;
        };
        try {
            return model_from_json(parse_json_file(path), reg_, path, find);
        } catch (const json::exception& e) {
            throw error(path + ": " + e.what());
        }
    }

private:
    const registry& reg_;
    std::map<std::string, std::shared_ptr<const given_weights>> read_;  // by weights file
};

inline model load_model(const std::string& path, const registry& reg) { return model_reader(reg)(path); }

}  // namespace memo::io
