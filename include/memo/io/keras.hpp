#pragma once
// Keras model files: the JSON of Keras' `model.to_json()`, in which MEMO's seed models come.
//
//   memo::model m = memo::io::load_keras("lenet5.json", memo::default_registry());
//   memo::io::save_keras(m, "mutant.json");   // Keras loads it with MEMO's custom objects
//
// Import reads Functional (or "Model") and Sequential models: each Keras layer becomes a node of
// the registry's class of the same name, each of the layer's parameters is read from the layer's
// config (or left at its Keras default), and edges come from inbound_nodes. Config keys we do not
// model (name, trainable, groups, seed, ...) are ignored. Export writes a Functional model whose
// layer configs use Keras' encodings, so that export then import gives an equal structural_hash.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "json.hpp"

namespace memo::io {

namespace detail::keras {

/// Class names Keras writes that differ from ours: Keras serializes initializers and
/// regularizers as objects of these classes, MEMO's pool names them in lower case. Every other
/// class name (Zeros, VarianceScaling, MaxNorm, ...) is the same on both sides.
inline constexpr std::pair<std::string_view, std::string_view> class_names[] = {
    {"GlorotUniform", "glorot_uniform"},
    {"GlorotNormal", "glorot_normal"},
    {"HeNormal", "he_normal"},
    {"HeUniform", "he_uniform"},
    {"LecunNormal", "lecun_normal"},
    {"LecunUniform", "lecun_uniform"},
    {"L1", "l1"},
    {"L2", "l2"},
};

inline std::string_view our_class(std::string_view keras) {
    for (const auto& [k, ours] : class_names)
        if (k == keras) return ours;
    return keras;
}
inline std::string_view keras_class(std::string_view ours) {
    for (const auto& [k, o] : class_names)
        if (o == ours) return k;
    return ours;
}

/// Our wrapper layers stand for one wrapped class each; the wrapper's own parameters stay in its
/// config, the others go to the config of the wrapped layer.
struct wrapper {
    std::string_view outer, inner, outer_param;
};
inline constexpr wrapper wrappers[] = {{"Bidirectional", "LSTM", "merge_mode"}, {"TimeDistributed", "ReLU", ""}};

inline const wrapper* wrapper_of(std::string_view cls) {
    for (const auto& w : wrappers)
        if (w.outer == cls) return &w;
    return nullptr;
}

/// Keras' default layer names: Conv2D -> conv2d, BatchNormalization -> batch_normalization, ReLU -> re_lu.
inline std::string snake_case(std::string_view cls) {
    std::string s;
    for (std::size_t i = 0; i < cls.size(); ++i) {
        const auto c = static_cast<unsigned char>(cls[i]);
        if (i > 0 && std::isupper(c)) {
            const auto prev = static_cast<unsigned char>(cls[i - 1]);
            const bool next_lower = i + 1 < cls.size() && std::islower(static_cast<unsigned char>(cls[i + 1]));
            if (std::islower(prev) || (next_lower && (std::isupper(prev) || std::isdigit(prev)))) s += '_';
        }
        s += static_cast<char>(std::tolower(c));
    }
    return s;
}

/// Keras writes 2D and 3D cropping and padding, and MEMO's adapters all of theirs, as
/// (before, after) pairs: ((1, 1), (2, 2)). We store them flat.
inline bool as_pairs(std::string_view cls, std::string_view param) {
    if (param != "padding" && param != "cropping") return false;
    return cls.starts_with("Custom") || cls.ends_with("2D") || cls.ends_with("3D");
}

/// A Keras layer as the file gives it, with its inputs by name.
struct keras_layer {
    std::string name, cls;
    json config;
    std::vector<std::string> inputs;
};

/// A config value as one of ours: serialized objects become their (our) class name.
inline value read_value(const json& j, const std::string& what) {
    if (j.is_object() && j.contains("class_name")) {
        const auto cls = j.at("class_name").get<std::string>();
        if (cls == "L1L2") {  // our regularizer values have one term: keep the one in use
            const json c = j.value("config", json::object());
            const json l2 = c.value("l2", json(0.0));
            return std::string(l2.is_number() && l2.get<double>() > 0 ? "l2" : "l1");
        }
        return std::string(our_class(cls));
    }
    return from_json(j, what);
}

/// Brings a value in Keras' spelling to the form our parameter's domain holds. `in` is the
/// shape of the layer's first input (rank 0 for an input layer).
inline value fit(value v, const param& p, const shape& in) {
    const std::string_view name = p.name;
    const auto& dom = p.dom.d;
    if (name == "axis" || name == "axes" || name == "shared_axes") {
        // Built layers write their axis as a list ("axis": [3]); Dot writes one per input.
        if (auto xs = std::get_if<ints>(&v); xs && xs->n >= 1) {
            const std::int64_t first = (*xs)[0];
            if (std::all_of(xs->begin(), xs->end(), [&](auto x) { return x == first; })) v = first;
        }
        // Keras counts axes from the front, our axis domains from the end (-1..-5).
        auto a = std::get_if<std::int64_t>(&v);
        if (a && *a >= 0 && name != "shared_axes" && std::holds_alternative<choice>(dom) && in.rank() > 0) v = *a - in.rank();
        return v;
    }
    if (auto t = std::get_if<int_tuple>(&dom)) {
        if (auto x = std::get_if<std::int64_t>(&v)) return ints::filled(t->count, *x);  // kernel_size=3
        if (auto xs = std::get_if<ints>(&v)) {
            if (xs->n == 1) return ints::filled(t->count, (*xs)[0]);
            if (2 * xs->n == t->count) {  // symmetric padding (1, 2) means ((1, 1), (2, 2))
                ints pairs;
                for (auto x : *xs) pairs.push(x), pairs.push(x);
                return pairs;
            }
        }
        return v;
    }
    if (std::holds_alternative<real_range>(dom))
        if (auto x = std::get_if<std::int64_t>(&v)) return static_cast<double>(*x);  // constant_values=2
    if (std::holds_alternative<int_range>(dom))
        if (auto xs = std::get_if<ints>(&v); xs && xs->n == 1) return (*xs)[0];
    if (name == "target_shape")  // Reshape((-1, 4)): Keras infers the -1 from the input
        if (auto xs = std::get_if<ints>(&v); xs && in.rank() > 0) {
            std::int64_t known = 1;
            int unknown_at = -1;
            for (int i = 0; i < xs->n; ++i) {
                if ((*xs)[i] == -1) unknown_at = i;
                else known *= (*xs)[i];
            }
            if (unknown_at >= 0 && known > 0 && in.elements() % known == 0) (*xs)[unknown_at] = in.elements() / known;
        }
    return v;
}

/// The raw config value of parameter `name`: the layer's own, or for a wrapper its inner layer's.
inline const json* find_in_config(const json& config, std::string_view name) {
    const std::string key(name);
    if (config.contains(key)) return &config.at(key);
    if (config.contains("layer") && config.at("layer").contains("config")) {
        const auto& inner = config.at("layer").at("config");
        if (inner.contains(key)) return &inner.at(key);
    }
    return nullptr;
}

/// The names in input_layers/output_layers: [[name, 0, 0], ...], or one [name, 0, 0].
inline std::vector<std::string> endpoint_names(const json& list, const std::string& origin, const char* key) {
    if (!list.is_array()) throw error(origin + ": config." + key + " is not a list");
    if (!list.empty() && list.at(0).is_string()) return {list.at(0).get<std::string>()};
    std::vector<std::string> names;
    for (const auto& e : list) {
        if (e.size() > 2 && e.at(1) != 0)
            throw error(origin + ": config." + key + " names node " + e.at(1).dump() + " of '" + e.at(0).get<std::string>() +
                        "' (shared layers are not supported)");
        names.push_back(e.at(0).get<std::string>());
    }
    return names;
}

inline std::vector<keras_layer> functional_layers(const json& layers, const std::string& origin) {
    std::vector<keras_layer> r;
    for (const auto& l : layers) {
        keras_layer k{l.at("name").get<std::string>(), l.at("class_name").get<std::string>(), l.value("config", json::object()), {}};
        const std::string where = origin + ": layer '" + k.name + "' (class " + k.cls + "): ";
        const json nodes = l.value("inbound_nodes", json::array());
        if (nodes.size() > 1) throw error(where + "applied " + std::to_string(nodes.size()) + " times (shared layers are not supported)");
        if (nodes.size() == 1)
            for (const auto& e : nodes.at(0)) {
                if (!e.is_array() || e.empty()) throw error(where + "unsupported inbound node " + e.dump());
                const auto src = e.at(0).get<std::string>();
                // node_index picks which application of a shared layer; tensor_index which of its outputs.
                if (e.size() > 1 && e.at(1) != 0) throw error(where + "takes node " + e.at(1).dump() + " of '" + src + "' (shared layers are not supported)");
                if (e.size() > 2 && e.at(2) != 0)
                    throw error(where + "takes output " + e.at(2).dump() + " of '" + src + "' (only the first output is modelled)");
                k.inputs.push_back(src);
            }
        r.push_back(std::move(k));
    }
    return r;
}

/// Sequential: layers in order, each fed by the one before; the input is an InputLayer or the
/// first layer's batch_input_shape.
inline std::vector<keras_layer> sequential_layers(const json& layers, const std::string& origin) {
    std::vector<keras_layer> r;
    for (const auto& l : layers) {
        keras_layer k{"", l.at("class_name").get<std::string>(), l.value("config", json::object()), {}};
        k.name = l.contains("name") ? l.at("name").get<std::string>() : k.config.value("name", "");
        if (k.name.empty()) k.name = snake_case(k.cls) + "_" + std::to_string(r.size());
        if (r.empty() && k.cls != "InputLayer") {
            if (!k.config.contains("batch_input_shape"))
                throw error(origin + ": layer '" + k.name + "' (class " + k.cls + "): the first layer of a Sequential model has no batch_input_shape");
            const json dt = k.config.value("dtype", json("float32"));
            r.push_back({k.name + "_input",
                         "InputLayer",
                         {{"batch_input_shape", k.config.at("batch_input_shape")}, {"dtype", dt.is_string() ? dt : json("float32")}},
                         {}});
        }
        if (!r.empty()) k.inputs.push_back(r.back().name);
        r.push_back(std::move(k));
    }
    return r;
}

/// Indices of `layers` in an order where every layer comes after its inputs, keeping file order
/// where the edges allow.
inline std::vector<std::size_t> topological_order(const std::vector<keras_layer>& layers, const std::string& origin) {
    std::unordered_map<std::string, std::size_t> pos;
    for (std::size_t i = 0; i < layers.size(); ++i)
        if (!pos.emplace(layers[i].name, i).second)
            throw error(origin + ": layer '" + layers[i].name + "' (class " + layers[i].cls + "): a second layer has this name");
    for (const auto& l : layers)
        for (const auto& s : l.inputs)
            if (!pos.count(s)) throw error(origin + ": layer '" + l.name + "' (class " + l.cls + "): input '" + s + "' is not a layer of the model");
    std::vector<std::size_t> order;
    std::vector<bool> placed(layers.size(), false);
    while (order.size() < layers.size()) {
        std::size_t next = layers.size();
        for (std::size_t i = 0; i < layers.size() && next == layers.size(); ++i)
            if (!placed[i] && std::all_of(layers[i].inputs.begin(), layers[i].inputs.end(), [&](const auto& s) { return placed[pos[s]]; })) next = i;
        if (next == layers.size()) {
            const auto i = static_cast<std::size_t>(std::find(placed.begin(), placed.end(), false) - placed.begin());
            throw error(origin + ": layer '" + layers[i].name + "' (class " + layers[i].cls + "): its inputs form a cycle");
        }
        placed[next] = true;
        order.push_back(next);
    }
    return order;
}

inline model import(const json& j, const registry& reg, const std::string& origin) {
    if (!j.is_object() || !j.contains("config")) throw error(origin + ": not a Keras model (no \"config\")");
    const auto kind = j.value("class_name", std::string("Functional"));
    const json& config = j.at("config");
    const json* list = config.is_array() ? &config : config.is_object() && config.contains("layers") ? &config.at("layers") : nullptr;
    if (!list || !list->is_array() || list->empty()) throw error(origin + ": not a Keras model (no config.layers)");
    const bool sequential = kind == "Sequential";
    if (!sequential && kind != "Functional" && kind != "Model")
        throw error(origin + ": not a Keras Functional or Sequential model (class_name '" + kind + "')");

    const auto layers = sequential ? sequential_layers(*list, origin) : functional_layers(*list, origin);
    model m;
    std::unordered_map<std::string, int> index;
    for (auto i : topological_order(layers, origin)) {
        const keras_layer& k = layers[i];
        const std::string where = origin + ": layer '" + k.name + "' (class " + k.cls + ")";
        const layer_def* L = reg.find(k.cls);
        if (!L) throw error(where + ": unknown layer class");
        if (auto w = wrapper_of(k.cls)) {
            const auto inner = k.config.contains("layer") ? k.config.at("layer").value("class_name", "") : std::string();
            if (inner != w->inner) throw error(where + ": wraps " + (inner.empty() ? "nothing" : inner) + ", our " + k.cls + " wraps " + std::string(w->inner));
        }
        node n = make_node(*L, k.name);
        for (const auto& s : k.inputs) n.inputs.push_back(index.at(s));
        const shape in = n.inputs.empty() ? shape{} : m.nodes[static_cast<std::size_t>(n.inputs[0])].out;

        // An InputLayer's shape is its batch_input_shape without the batch dimension.
        json input_shape;
        if (k.cls == "InputLayer")
            for (const char* key : {"batch_input_shape", "batch_shape"})
                if (k.config.contains(key) && k.config.at(key).is_array() && !k.config.at(key).empty()) {
                    input_shape = k.config.at(key);
                    input_shape.erase(0);
                    break;
                }
        for (std::size_t p = 0; p < L->params.size(); ++p) {
            const param& P = L->params[p];
            const json* raw = P.name == "shape" && !input_shape.is_null() ? &input_shape : find_in_config(k.config, P.name);
            if (!raw) continue;  // Keras' default, which make_node put there
            value v = fit(read_value(*raw, where + ": parameter " + std::string(P.name)), P, in);
            if (!P.dom.validate(v)) throw error(where + ": parameter " + std::string(P.name) + " = " + raw->dump() + " is outside " + P.dom.describe());
            n.params[p] = std::move(v);
        }
        m.nodes.push_back(std::move(n));
        if (auto r = infer_node(m, m.nodes.size() - 1); !r) throw error(where + ": " + r.reason());
        index[k.name] = static_cast<int>(m.nodes.size() - 1);
    }

    if (sequential) {
        m.outputs.push_back(index.at(layers.back().name));
    } else {
        if (!config.contains("output_layers")) throw error(origin + ": not a Keras model (no config.output_layers)");
        for (const auto& name : endpoint_names(config.at("output_layers"), origin, "output_layers")) {
            auto it = index.find(name);
            if (it == index.end()) throw error(origin + ": output '" + name + "' is not a layer of the model");
            m.outputs.push_back(it->second);
        }
    }
    if (auto ok = validate(m); !ok) throw error(origin + ": " + ok.reason());
    return m;
}

/// A parameter value in Keras' encoding.
inline json encode(std::string_view cls, const param& p, const value& v) {
    const std::string_view name = p.name;
    if (name.ends_with("_initializer")) return {{"class_name", keras_class(as_str(v))}, {"config", json::object()}};
    if (name.ends_with("_regularizer")) {
        if (is_none(v)) return nullptr;
        const std::string term(as_str(v));  // "l1" or "l2", at Keras' default strength
        return {{"class_name", keras_class(term)}, {"config", {{term, 0.01}}}};
    }
    if (name.ends_with("_constraint")) {
        if (is_none(v)) return nullptr;
        return {{"class_name", std::string(as_str(v))}, {"config", json::object()}};
    }
    if (auto xs = std::get_if<ints>(&v); xs && as_pairs(cls, name)) {
        json pairs = json::array();
        for (int i = 0; i + 1 < xs->n; i += 2) pairs.push_back({(*xs)[i], (*xs)[i + 1]});
        return pairs;
    }
    return to_json(v);
}

/// The Keras layer names of m's nodes: their own where set and unused, else conv2d_1, conv2d_2, ...
inline std::vector<std::string> layer_names(const model& m) {
    std::vector<std::string> names(m.nodes.size());
    std::unordered_set<std::string> used;
    for (std::size_t i = 0; i < m.nodes.size(); ++i)
        if (!m.nodes[i].name.empty() && used.insert(m.nodes[i].name).second) names[i] = m.nodes[i].name;
    for (std::size_t i = 0; i < m.nodes.size(); ++i) {
        if (!names[i].empty()) continue;
        const auto base = snake_case(m.nodes[i].layer->name);
        for (int k = 1; names[i].empty(); ++k)
            if (auto s = base + "_" + std::to_string(k); used.insert(s).second) names[i] = s;
    }
    return names;
}

}  // namespace detail::keras

/// Reads a Keras model (`model.to_json()`: Functional or Sequential) onto the layers of `reg`.
/// `origin` names the input in errors. The result is shape-inferred and validated; any failure
/// throws memo::error naming origin, the Keras layer and class, and the cause.
inline model keras_from_json(const json& j, const registry& reg, const std::string& origin) {
    try {
        return detail::keras::import(j, reg, origin);
    } catch (const json::exception& e) {  // a field of the wrong type or missing
        throw error(origin + ": malformed Keras model: " + e.what());
    }
}

inline model load_keras(const std::string& path, const registry& reg) { return keras_from_json(parse_json_file(path), reg, path); }

/// m as a Keras Functional model in `model.to_json()` form (Keras 2.8, TensorFlow backend).
inline json keras_to_json(const model& m) {
    using namespace detail::keras;
    const auto names = layer_names(m);
    json layers = json::array();
    for (std::size_t i = 0; i < m.nodes.size(); ++i) {
        const node& n = m.nodes[i];
        const std::string_view cls = n.layer->name;
        json config;
        if (cls == "InputLayer") {  // Keras' InputLayer takes no `trainable`
            json batch_shape = json::array({nullptr});
            for (auto d : std::get<ints>(n.param("shape"))) batch_shape.push_back(d);
            config = {{"name", names[i]}, {"batch_input_shape", batch_shape}, {"dtype", name_of(n.type)}, {"sparse", false}, {"ragged", false}};
        } else {
            config = {{"name", names[i]}, {"trainable", true}, {"dtype", name_of(n.type)}};
            const wrapper* w = wrapper_of(cls);
            json inner = w ? json{{"name", names[i] + "_" + snake_case(w->inner)}, {"trainable", true}, {"dtype", name_of(n.type)}} : json();
            for (std::size_t p = 0; p < n.params.size(); ++p) {
                const param& P = n.layer->params[p];
                (w && P.name != w->outer_param ? inner : config)[std::string(P.name)] = encode(cls, P, n.params[p]);
            }
            if (w) config["layer"] = {{"class_name", w->inner}, {"config", std::move(inner)}};
        }
        json inbound = json::array();
        for (int s : n.inputs) inbound.push_back({names[static_cast<std::size_t>(s)], 0, 0, json::object()});
        layers.push_back({{"class_name", cls},
                          {"config", std::move(config)},
                          {"name", names[i]},
                          {"inbound_nodes", inbound.empty() ? json::array() : json::array({inbound})}});
    }
    json inputs = json::array(), outputs = json::array();
    for (int i : m.input_nodes()) inputs.push_back({names[static_cast<std::size_t>(i)], 0, 0});
    for (int o : m.outputs) outputs.push_back({names[static_cast<std::size_t>(o)], 0, 0});
    return {{"class_name", "Functional"},
            {"config", {{"name", "model"}, {"layers", std::move(layers)}, {"input_layers", std::move(inputs)}, {"output_layers", std::move(outputs)}}},
            {"keras_version", "2.8.0"},
            {"backend", "tensorflow"}};
}

inline void save_keras(const model& m, const std::string& path) {
    std::ofstream out(path, std::ios::binary);
    if (!out) throw error(path + ": cannot open for writing");
    out << keras_to_json(m).dump();
    if (!out.flush()) throw error(path + ": write failed");
}

}  // namespace memo::io
