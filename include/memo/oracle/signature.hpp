#pragma once
// A bug's signature: the stable name its folder, its stored judgements and the dedup of a
// campaign's findings go by ("Conv2DTranspose-1a2b3c4d").
#include <string>
#include <string_view>

#include "../core/hash.hpp"
#include "../core/model.hpp"
#include "hangs.hpp"
#include "oracle.hpp"

namespace memo::oracle {

/// What of a node a bug is taken to hinge on besides its layer class: its mode parameters that
/// differ from Keras' defaults, and its dtype. Part of a bug's signature.
inline void hash_trigger(hasher& h, const node& n) {
    for (std::size_t i = 0; i < n.params.size(); ++i)
        if (n.layer->params[i].what == role::mode && !(n.params[i] == n.layer->params[i].fallback)) {
            h.mix(n.layer->params[i].name);
            hash_value(h, n.params[i]);
        }
    h.mix(name_of(n.type));
}

/// A stable name for a bug: kind, culprits, the localised layer, its mode parameters that differ
/// from Keras' defaults (not for a time-out or memory blow-up), its dtype and the error text with
/// each number blanked to one '#'. "Conv2DTranspose-1a2b3c4d".
inline std::string signature(const verdict& v, const model& m) {
    hasher h = verdict_hash(v);
    const std::string_view cls = named_class(v, m);
    std::string layer = cls.empty() ? "unlocalised" : std::string(cls);
    h.mix(layer);
    if (v.node >= 0 && static_cast<std::size_t>(v.node) < m.size()) {
        if (named_by_class(v)) h.mix(name_of(m[v.node].type));
        else hash_trigger(h, m[v.node]);
    } else if (!cls.empty()) {
        hash_trigger(h, m.nodes.back());  // a rewritten graph's: the settings of the layer it ends with
    }
    std::string msg;
    for (char c : v.message.substr(0, 120)) {
        const bool digit = c >= '0' && c <= '9';
        if (!digit) msg += c;
        else if (msg.empty() || msg.back() != '#') msg += '#';  // a number, whatever its length: one '#'
    }
    h.mix(msg);
    return layer + "-" + hex8(h);
}

}  // namespace memo::oracle
