#pragma once
// The differential oracle: from the results of several backends on one model, a verdict.
//   crash          some backends fail (error, death, time-out, memory) where others succeed
//   nan            some produce NaN or Inf where others do not (or, where the float64 reference
//                  does too, some lose the NaN or Inf the others keep)
//   shape          a library's own model checks (ONNX's checker and shape inference) reject a
//                  model memo holds valid, or infer other shapes: a bug in one of the two
//   inconsistency  outputs differ beyond the dtype's tolerance and D_MAD (CRADLE) against the
//                  float64 reference O exceeds a threshold; confirmed only once localised to a
//                  node that differs on identical inputs (see differential.hpp)
//   metamorphic    one library gives a model and its variant (metamorphic.hpp) different outputs,
//                  though the variant computes the same function
//   performance    a run far slower, or using far more memory, than the same model on the other
//                  backends or than its own earlier runs (resources.hpp)
//   leak           a worker's memory grows across repeated runs of one model (resources.hpp)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "../backends/backend.hpp"
#include "../backends/executor.hpp"
#include "../core/hash.hpp"
#include "../engine/judge.hpp"
#include "../metamorphic/variant.hpp"
#include "../tensors/digest.hpp"

namespace memo::oracle {

// The kinds of bug, and the verdict's core (its kind, culprits and message), are the engine's.
using engine::kind;
using engine::kind_from;
using engine::kind_names;
using engine::name_of;
/// The differential oracle's kinds: a verdict of one of them gets reproducers in each library's terms.
constexpr bool differential_kind(kind k) noexcept { return k == kind::crash || k == kind::nan || k == kind::inconsistency || k == kind::shape; }

struct options {
    double dmad_threshold = 0.5;   // D_MAD above which two backends disagree in their closeness to O
    double tolerance_scale = 1.0;  // multiplies every dtype's tolerance
    /// A model whose run would hold more float64 values than this many bytes is not run
    /// (tensors/budget.hpp): every participant gets it back unsupported, with the node that passes
    /// the budget. 0: no limit.
    std::int64_t max_bytes = 0;
};

/// The normwise relative difference a dtype's rounding explains for one layer: max |a - b| over
/// max(|a|, |b|, 1e-6)... beyond this, two results of the same layer on the same inputs differ.
inline double tolerance(dtype t, const options& o = {}) {
    double base = 1e-4;
    switch (t) {
        case dtype::float16: base = 2e-2; break;
        case dtype::bfloat16: base = 1e-1; break;
        case dtype::float32: base = 1e-4; break;
        case dtype::float64: base = 1e-9; break;
    }
    return base * o.tolerance_scale;
}

/// One backend's result, named.
struct observation {
    std::string backend;
    run_result result;
    std::vector<digest> nodes;      // every node's output digest, when the run was traced
    std::vector<value_span> spans;  // with nodes: what every node's output values reach
    arithmetic rounding = {};       // how the backend rounds (executor::rounding)
};

/// What a backend is learnt to decline: a node's layer class, dtype and layout (its data_format,
/// for a class with one). A library may lack one layout's kernel and not the other's
/// (TensorFlow's CPU convolutions take channels_last only): a key without the layout would lose
/// every model with the class.
struct decline_key {
    std::string layer;
    dtype type = dtype::float32;
    std::string layout;  // empty for a class without a data_format
    auto operator<=>(const decline_key&) const = default;

    static decline_key of(const node& n) {
        return {std::string(n.layer->name), n.type, n.layer->param_index("data_format") >= 0 ? std::string(as_str(n.param("data_format"))) : std::string()};
    }
    /// "Conv2D in float32 (channels_first)".
    std::string text() const { return layer + " in " + std::string(name_of(type)) + (layout.empty() ? std::string() : " (" + layout + ")"); }
};

/// The dtype whose rounding two backends' results of a node computed in t are judged by: the
/// coarser of theirs (a TF32 backend's float32 is judged as float16 against any peer).
inline dtype judged_as(dtype t, const arithmetic& a, const arithmetic& b) noexcept { return coarser(a.of(t), b.of(t)); }

/// How two results compare: max absolute difference, normwise relative difference (max |a - b|
/// over the largest magnitude), and, given O, each one's mean absolute deviation from O.
struct difference {
    double max_abs = 0, max_rel = 0;
    double scale = 0;  // the largest finite magnitude in either
    bool shapes_differ = false;
};

inline difference compare(const std::vector<tensor>& a, const std::vector<tensor>& b) {
    difference d;
    if (a.size() != b.size()) {
        d.shapes_differ = true;
        d.max_rel = d.max_abs = INFINITY;
        return d;
    }
    for (std::size_t k = 0; k < a.size(); ++k) {
        if (a[k].dims != b[k].dims) {
            d.shapes_differ = true;
            d.max_rel = d.max_abs = INFINITY;
            return d;
        }
        double diff = 0, scale = 0;
        for (std::int64_t i = 0; i < a[k].size(); ++i) {
            const double x = a[k][i], y = b[k][i];
            if (!std::isfinite(x) || !std::isfinite(y)) continue;  // the nan verdict's business
            diff = std::max(diff, std::abs(x - y));
            scale = std::max({scale, std::abs(x), std::abs(y)});
        }
        d.max_abs = std::max(d.max_abs, diff);
        d.scale = std::max(d.scale, scale);
        d.max_rel = std::max(d.max_rel, diff / std::max(scale, 1e-6));
    }
    return d;
}

/// Mean absolute deviation of o from O over all output elements (CRADLE's delta).
inline double mad(const std::vector<tensor>& o, const std::vector<tensor>& truth) {
    double sum = 0;
    std::int64_t n = 0;
    for (std::size_t k = 0; k < std::min(o.size(), truth.size()); ++k)
        for (std::int64_t i = 0; i < std::min(o[k].size(), truth[k].size()); ++i) {
            if (!std::isfinite(o[k][i]) || !std::isfinite(truth[k][i])) continue;
            sum += std::abs(o[k][i] - truth[k][i]);
            ++n;
        }
    return n ? sum / static_cast<double>(n) : 0.0;
}

/// CRADLE's D_MAD = |delta_a - delta_b| / (delta_a + delta_b), 0 when both are exact.
inline double dmad(double delta_a, double delta_b) {
    const double s = delta_a + delta_b;
    return s > 0 ? std::abs(delta_a - delta_b) / s : 0.0;
}

inline bool failed(run_status s) noexcept { return s == run_status::error || s == run_status::crash || s == run_status::timeout || s == run_status::memory; }
inline bool has_non_finite(const std::vector<tensor>& ts) {
    return std::any_of(ts.begin(), ts.end(), [](const tensor& t) { return t.has_non_finite(); });
}
/// The coarsest dtype among tensors (its tolerance applies to the comparison).
inline dtype coarsest(const std::vector<tensor>& ts) {
    dtype c = dtype::float64;
    auto rank = [](dtype t) { return t == dtype::bfloat16 ? 0 : t == dtype::float16 ? 1 : t == dtype::float32 ? 2 : 3; };
    for (const auto& t : ts)
        if (rank(t.type) < rank(c)) c = t.type;
    return c;
}

struct verdict;

// What a verdict says besides its kind, culprits, message and localisation: one alternative per
// kind of bug (verdict::details), so that each figure is found only on the kind that has it.
/// kind none: every backend that ran failed, a model no library takes.
struct all_failed {};
/// crash, shape: how the culprit's run ended (a hang is a crash by time-out or memory).
struct failed_run {
    run_status status = run_status::error;
};
/// inconsistency: how far apart the outputs are, and what localisation measured.
struct outputs_differ {
    double dmad = 0, max_abs = 0, max_rel = 0;  // at the outputs: D_MAD against O, the largest differences
    /// At the localised node, on identical inputs: the largest difference, the magnitude of the
    /// float64 output, and the most rounding explains there (oracle/rounding.hpp). All 0 when
    /// not measured.
    struct node_difference {
        double max_abs = 0, scale = 0, bound = 0;
    } at_node;
    bool masked = false;   // the outputs agree, a node's traced values do not
    bool carried = false;  // first seen as NaN in the outputs, carried from this node
    /// The other nodes beyond rounding on the same identical inputs, each a bug of its own (a
    /// model may meet two faults; the first would hide the second).
    std::vector<verdict> more;
};
/// metamorphic: the variant the model was compared with, and how the two runs parted (one
/// failed: its status; else how far apart their outputs are).
struct relation_broken {
    metamorphic::variant variant;
    run_status status = run_status::ok;
    double max_abs = 0, max_rel = 0;
};

/// The engine's verdict (kind; culprits: the backends that fail, produce NaN, or deviate from O;
/// message: a culprit's error text or how it died), with what memo's oracles say besides. A nan,
/// performance, leak or nondeterminism verdict says all in its message and localisation.
struct verdict : engine::verdict {
    std::vector<std::string> peers;  // backends they were compared with
    int node = -1;                   // the localised node, -1 when not localised
    bool whole_graph = false;        // the culprit's layers run alone are right, its running of the graph fails or differs (no layer to blame)
    std::string layer;               // its class
    std::string producer;            // the class of its first input's producer (the pair)
    std::variant<std::monostate, all_failed, failed_run, outputs_differ, relation_broken> details;

    /// The status of the failed run a crash, shape or metamorphic verdict saw; ok for others.
    run_status status() const noexcept {
        if (const auto* f = std::get_if<failed_run>(&details)) return f->status;
        if (const auto* r = std::get_if<relation_broken>(&details)) return r->status;
        return run_status::ok;
    }
    /// An inconsistency's figures; null for other kinds.
    const outputs_differ* differs() const noexcept { return std::get_if<outputs_differ>(&details); }
    outputs_differ* differs() noexcept { return std::get_if<outputs_differ>(&details); }
    /// A metamorphic verdict's relation; null for other kinds.
    const relation_broken* broken() const noexcept { return std::get_if<relation_broken>(&details); }
    /// Whether every backend that ran the model failed (no bug, a model no library takes).
    bool every_backend_failed() const noexcept { return std::holds_alternative<all_failed>(details); }
};

/// The model a verdict on m is localised in: its variant for a metamorphic one, m itself otherwise.
inline const model& localised_in(const verdict& v, const model& m) noexcept { return v.broken() ? v.broken()->variant.m : m; }

/// A difference of a library's rewritten graph (a compiler's, a graph optimisation's), which no
/// layer shows alone (localiser::localise, localise.hpp).
inline bool of_rewritten_graph(const verdict& v) noexcept { return v.what == kind::inconsistency && v.whole_graph && v.layer.empty(); }

/// The layer class a bug's names (signature, root cause) carry: the localised one; for a fault of
/// a rewritten graph, which has none, the class its model ends with (for a stored bug's minimal
/// model, the shortest prefix that shows it); else empty (unlocalised).
inline std::string_view named_class(const verdict& v, const model& m) {
    if (!v.layer.empty()) return v.layer;
    if (of_rewritten_graph(v) && m.size() > 0) return m.nodes.back().layer->name;
    return {};
}

/// What a bug's names (its signature, its root cause) hash first: its kind, its culprits in
/// order of name and its run status.
inline hasher verdict_hash(const verdict& v) {
    hasher h;
    h.mix(name_of(v.what));
    auto culprits = v.culprits;
    std::sort(culprits.begin(), culprits.end());
    for (const auto& c : culprits) h.mix(c);
    h.mix(name_of(v.status()));
    return h;
}

/// The low 32 bits of a hash as eight hex digits: the tail of a bug's name.
inline std::string hex8(const hasher& h) {
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08llx", static_cast<unsigned long long>(h.value() & 0xffffffffULL));
    return hex;
}

namespace detail {
using runs = std::vector<const observation*>;

/// A verdict of kind k on the runs at fault (the first one's message, status and node), compared
/// with the peers that ran.
inline verdict failed_runs(kind k, const runs& at_fault, const runs& peers) {
    verdict v;
    v.what = k;
    for (auto* x : at_fault) v.culprits.push_back(x->backend);
    for (auto* x : peers) v.peers.push_back(x->backend);
    v.message = at_fault.front()->result.message;
    v.details = failed_run{at_fault.front()->result.status};
    v.node = at_fault.front()->result.node;
    return v;
}

/// The nan verdict of runs some of which have non-finite outputs: those are at fault, unless the
/// float64 reference is non-finite too (a NaN the model injects, a value beyond even float64),
/// where producing it is right and the odd ones are those that lost it. None when all agree.
inline verdict lost_or_made_nan(const runs& ok, const std::function<std::vector<tensor>()>& truth) {
    verdict v;
    runs nan, finite;
    for (auto* x : ok) (has_non_finite(x->result.outputs) ? nan : finite).push_back(x);
    if (nan.empty() || finite.empty()) return v;
    v.what = kind::nan;
    const bool expected = has_non_finite(truth());
    for (auto* x : expected ? finite : nan) v.culprits.push_back(x->backend);
    for (auto* x : expected ? nan : finite) v.peers.push_back(x->backend);
    if (expected) v.message = "finite outputs where the float64 reference's are not: a NaN or infinity lost";
    return v;
}

/// The inconsistency of the pair of runs that differs most, judged against O: none below a tenth
/// of the layer tolerance (worth a look; the localisation decides, differential.hpp) or within
/// D_MAD's threshold.
inline verdict most_apart(const runs& ok, const std::function<std::vector<tensor>()>& truth, const options& o) {
    verdict v;
    const observation *a = nullptr, *b = nullptr;
    difference worst;
    for (std::size_t i = 0; i < ok.size(); ++i)
        for (std::size_t j = i + 1; j < ok.size(); ++j) {
            const auto d = compare(ok[i]->result.outputs, ok[j]->result.outputs);
            if (d.max_rel > worst.max_rel) {
                worst = d;
                a = ok[i];
                b = ok[j];
            }
        }
    if (!a || worst.max_rel <= 0.1 * tolerance(judged_as(coarsest(a->result.outputs), a->rounding, b->rounding), o)) return v;
    const auto O = truth();
    const double da = mad(a->result.outputs, O), db = mad(b->result.outputs, O);
    const double d = dmad(da, db);
    if (!worst.shapes_differ && d <= o.dmad_threshold) return v;
    v.what = kind::inconsistency;
    auto& apart = v.details.emplace<outputs_differ>();
    apart.dmad = d, apart.max_abs = worst.max_abs, apart.max_rel = worst.max_rel;
    v.culprits = {da >= db ? a->backend : b->backend};
    v.peers = {da >= db ? b->backend : a->backend};
    return v;
}
}  // namespace detail

/// Judges one model's results: shape, crash, nan, inconsistency, the first that applies. `truth`
/// computes the float64 reference outputs on demand (only when two backends disagree beyond
/// tolerance, or some lose a NaN).
inline verdict judge(const std::vector<observation>& obs, const std::function<std::vector<tensor>()>& truth, const options& o = {}) {
    detail::runs ok, bad, invalid;
    for (const auto& x : obs) {
        if (x.result.ok()) ok.push_back(&x);
        else if (failed(x.result.status)) bad.push_back(&x);
        else if (x.result.status == run_status::invalid) invalid.push_back(&x);
    }
    if (!invalid.empty()) return detail::failed_runs(kind::shape, invalid, ok);  // needs no peer: the model's own shapes are the other side
    if (ok.empty()) {
        verdict none;
        if (!bad.empty()) none.details = all_failed{};
        return none;
    }
    if (!bad.empty()) {
        auto v = detail::failed_runs(kind::crash, bad, ok);
        v.whole_graph = bad.front()->result.whole_graph;
        return v;
    }
    if (auto v = detail::lost_or_made_nan(ok, truth)) return v;
    return detail::most_apart(ok, truth, o);
}

}  // namespace memo::oracle
