#pragma once
// Differential judgement over observations: several libraries ran one model; what they saw
// becomes a verdict, for models of any type.
//   crash          some failed where others ran
//   nan            some gave a non-finite value where others gave finite ones
//   inconsistency  the outputs differ beyond a tolerance; the culprits are those apart from the
//                  largest group that agrees (with two libraries, both)
// A library that declines a model (it lacks what the model needs) takes no part. memo's own
// differential oracle (oracle/oracle.hpp) adds to this what its Keras models allow: a float64
// ground truth, per-dtype tolerances, localisation to a node.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace memo::engine {

/// What one library saw of one model.
struct observation {
    enum class status : unsigned char { ok, failed, declined };
    status what = status::ok;
    std::vector<double> outputs;  // when ok
    std::string message;          // when failed or declined: why
};

/// An observation with the name of the library that made it.
struct named_observation {
    std::string library;
    observation seen;
};

struct verdict {
    enum class kind : unsigned char { none, crash, nan, inconsistency };
    kind what = kind::none;
    std::vector<std::string> culprits;  // the libraries at fault, sorted
    std::string message;

    explicit operator bool() const noexcept { return what != kind::none; }
    /// What tells one bug from another: the kind and the culprits.
    std::string signature() const {
        std::string s(name_of(what));
        for (const auto& c : culprits) s += "-" + c;
        return s;
    }
    static constexpr std::string_view name_of(kind k) noexcept {
        switch (k) {
            case kind::none: return "none";
            case kind::crash: return "crash";
            case kind::nan: return "nan";
            case kind::inconsistency: return "inconsistency";
        }
        return "?";
    }
};

/// Whether two outputs agree: every element within `tolerance` of the other, relative to the
/// larger magnitude (absolute below 1).
inline bool agree(const std::vector<double>& a, const std::vector<double>& b, double tolerance) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::abs(a[i] - b[i]) > tolerance * std::max({1.0, std::abs(a[i]), std::abs(b[i])})) return false;
    return true;
}

/// The verdict on one model from what each library saw of it.
inline verdict judge(const std::vector<named_observation>& seen, double tolerance) {
    std::vector<const named_observation*> ran, failed;
    for (const auto& o : seen) {
        if (o.seen.what == observation::status::failed) failed.push_back(&o);
        if (o.seen.what == observation::status::ok) ran.push_back(&o);
    }
    verdict v;
    auto finish = [&](verdict::kind k, std::vector<const named_observation*> culprits, std::string message) {
        v.what = k;
        for (const auto* c : culprits) v.culprits.push_back(c->library);
        std::sort(v.culprits.begin(), v.culprits.end());
        v.message = std::move(message);
        return v;
    };
    if (!failed.empty() && !ran.empty()) return finish(verdict::kind::crash, failed, failed.front()->library + ": " + failed.front()->seen.message);
    auto finite = [](const named_observation* o) {
        return std::all_of(o->seen.outputs.begin(), o->seen.outputs.end(), [](double x) { return std::isfinite(x); });
    };
    std::vector<const named_observation*> non_finite;
    for (const auto* o : ran)
        if (!finite(o)) non_finite.push_back(o);
    if (!non_finite.empty() && non_finite.size() < ran.size())
        return finish(verdict::kind::nan, non_finite, non_finite.front()->library + " gave a non-finite value where others did not");
    if (!non_finite.empty()) return v;  // all non-finite: nothing to tell them apart by
    // The largest group of libraries that agree with each other's first member; the rest are apart.
    std::vector<const named_observation*> best;
    for (const auto* a : ran) {
        std::vector<const named_observation*> group;
        for (const auto* b : ran)
            if (agree(a->seen.outputs, b->seen.outputs, tolerance)) group.push_back(b);
        if (group.size() > best.size()) best = group;
    }
    if (best.size() == ran.size()) return v;
    std::vector<const named_observation*> apart;
    for (const auto* o : ran)
        if (std::find(best.begin(), best.end(), o) == best.end() || best.size() * 2 <= ran.size()) apart.push_back(o);
    char bound[32];
    std::snprintf(bound, sizeof bound, "%g", tolerance);
    return finish(verdict::kind::inconsistency, apart, std::string("outputs differ beyond a relative tolerance of ") + bound);
}

}  // namespace memo::engine
