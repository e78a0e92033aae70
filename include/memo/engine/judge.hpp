#pragma once
// Differential judgement over observations: several libraries ran one model; what they saw
// becomes a verdict, for models of any type.
//   crash          some failed where others ran
//   nan            some gave a non-finite value where others gave finite ones
//   inconsistency  the outputs differ beyond a tolerance; the culprits are those apart from the
//                  largest group that agrees (with two libraries, both)
// A library that declines a model (it lacks what the model needs) takes no part. memo's own
// differential oracle (oracle/oracle.hpp) judges its Keras models with what they allow besides: a
// float64 ground truth, per-dtype tolerances, localisation to a node; its verdicts are these
// verdicts, with more said.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <iterator>
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

/// The kinds of bug: those judge() below tells apart (crash, nan, inconsistency), and those memo's
/// own oracles add (oracle/oracle.hpp): shape, metamorphic, performance, leak, nondeterminism.
enum class kind : unsigned char { none, crash, nan, inconsistency, shape, metamorphic, performance, leak, nondeterminism };
inline constexpr std::string_view kind_names[] = {"none", "crash", "nan", "inconsistency", "shape", "metamorphic", "performance", "leak", "nondeterminism"};
constexpr std::string_view name_of(kind k) noexcept { return kind_names[static_cast<int>(k)]; }
/// The kind a name stands for (a stored judgement's); none for a name that is no kind.
constexpr kind kind_from(std::string_view s) noexcept {
    for (std::size_t k = 0; k < std::size(kind_names); ++k)
        if (kind_names[k] == s) return static_cast<kind>(k);
    return kind::none;
}

/// A judgement of one model: what kind of bug it shows, which libraries are at fault, and why.
/// memo's oracles say more of a bug of theirs (oracle::verdict, which is one of these).
struct verdict {
    kind what = kind::none;
    std::vector<std::string> culprits;  // the libraries at fault
    std::string message;

    explicit operator bool() const noexcept { return what != kind::none; }
};

/// What tells one bug from another in an engine campaign: the kind and the culprits
/// ("crash-fast"). memo's own campaigns name bugs by more (oracle/signature.hpp).
inline std::string signature(const verdict& v) {
    std::string s(name_of(v.what));
    for (const auto& c : v.culprits) s += "-" + c;
    return s;
}

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
    auto finish = [&](kind k, std::vector<const named_observation*> culprits, std::string message) {
        v.what = k;
        for (const auto* c : culprits) v.culprits.push_back(c->library);
        std::sort(v.culprits.begin(), v.culprits.end());
        v.message = std::move(message);
        return v;
    };
    if (!failed.empty() && !ran.empty()) return finish(kind::crash, failed, failed.front()->library + ": " + failed.front()->seen.message);
    auto finite = [](const named_observation* o) {
        return std::all_of(o->seen.outputs.begin(), o->seen.outputs.end(), [](double x) { return std::isfinite(x); });
    };
    std::vector<const named_observation*> non_finite;
    for (const auto* o : ran)
        if (!finite(o)) non_finite.push_back(o);
    if (!non_finite.empty() && non_finite.size() < ran.size())
        return finish(kind::nan, non_finite, non_finite.front()->library + " gave a non-finite value where others did not");
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
    return finish(kind::inconsistency, apart, std::string("outputs differ beyond a relative tolerance of ") + bound);
}

}  // namespace memo::engine
