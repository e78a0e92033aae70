#pragma once
// Building models by hand: the zoo, the tests and users' own code.
//
//   memo::builder b(memo::default_registry());
//   auto x = b.input({28, 28, 1});
//   auto y = b.add("Conv2D", {x}, {{"filters", 6}, {"kernel_size", memo::ints{5, 5}}});
//   b.output(y);
//   memo::model m = b.finish();                              // validated
//
// Each add() infers the node's shape at once and throws memo::error naming the layer and the
// cause when it is invalid.
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model.hpp"

namespace memo {

class builder {
public:
    explicit builder(const registry& reg) : reg_(&reg) {}

    /// A model input with this per-sample shape.
    int input(std::initializer_list<std::int64_t> dims, dtype t = dtype::float32) {
        ints d;
        for (auto x : dims) d.push(x);
        return add("InputLayer", {}, {{"shape", d}, {"dtype", std::string(name_of(t))}});
    }

    /// Adds a node of class `cls` over `inputs` with these parameters (the rest at Keras' defaults).
    int add(std::string_view cls, std::vector<int> inputs, std::initializer_list<std::pair<std::string_view, value>> params = {}, std::string name = {}) {
        const layer_def& L = reg_->at(cls);
        node n = make_node(L, name.empty() ? default_name(L) : std::move(name));
        for (const auto& [k, v] : params) n.set(k, v);
        n.inputs = std::move(inputs);
        m_.nodes.push_back(std::move(n));
        if (auto r = infer_node(m_, m_.nodes.size() - 1); !r) {
            const auto& bad = m_.nodes.back();
            std::string msg = "cannot add " + bad.name + " (" + std::string(cls) + "): " + r.reason();
            m_.nodes.pop_back();
            throw error(msg);
        }
        return static_cast<int>(m_.nodes.size() - 1);
    }

    const shape& shape_of(int node) const { return m_.nodes[static_cast<std::size_t>(node)].out; }
    void output(int node) { m_.outputs.push_back(node); }
    void seed(std::uint64_t s) { m_.seed = s; }

    /// The finished, validated model.
    model finish() {
        if (m_.outputs.empty() && !m_.nodes.empty()) m_.outputs.push_back(static_cast<int>(m_.nodes.size() - 1));
        if (auto ok = validate(m_); !ok) throw error("invalid model: " + ok.reason());
        return std::move(m_);
    }

private:
    std::string default_name(const layer_def& L) {
        std::string s;
        for (char c : L.name) {
            if (c >= 'A' && c <= 'Z') {
                if (!s.empty() && s.back() != '_') s += '_';
                s += static_cast<char>(c - 'A' + 'a');
            } else s += c;
        }
        return s + "_" + std::to_string(m_.nodes.size());
    }
    const registry* reg_;
    model m_;
};

}  // namespace memo
