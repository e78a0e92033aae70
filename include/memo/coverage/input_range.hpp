#pragma once
// The criterion layer_input_range: which classes of value each layer class received when a model
// ran (value_span.hpp): negative, zero, small (below 2^-10), large (2^10 and above), non-finite
// (what every layer should pass on), and, for a class with thresholds (a ReLU's max_value and
// threshold, ThresholdedReLU's theta), values on both sides of one. Unlike MEMO's criteria it is
// known only after a run, from the traced run's per-node spans, so it counts executed models alone.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../io/json.hpp"
#include "coverage.hpp"
#include "value_span.hpp"

namespace memo {

inline constexpr std::string_view layer_input_range_name = "layer_input_range";

class input_range_coverage {
public:
    explicit input_range_coverage(const registry& reg) : u_(&universe::of(reg)) {
        offset_.resize(u_->classes());
        for (std::size_t s = 0; s < u_->classes(); ++s) {
            offset_[s] = total_;
            total_ += generic;
            for (const auto& p : u_->class_at(s).params)
                if (is_threshold_param(p.name)) {
                    total_ += 1;  // beyond
                    break;
                }
        }
        set_ = item_set(total_);
    }

    /// Records what the nodes of m received, given every node's span (a traced run's); returns
    /// how many items were new.
    std::size_t add(const model& m, std::span<const value_span> spans) {
        std::size_t fresh = 0;
        received(m, spans, [&](std::size_t item) { fresh += set_.set(item); });
        return fresh;
    }

    /// Calls f(item) for each item the nodes of m received.
    template <class F>
    void received(const model& m, std::span<const value_span> spans, F&& f) const {
        if (spans.size() < m.size()) return;  // not traced
        for (std::size_t i = 0; i < m.size(); ++i) {
            const node& n = m.nodes[i];
            const int s = u_->slot_of(*n.layer);
            if (s < 0 || n.inputs.empty()) continue;
            value_span in;
            for (int e : n.inputs) in.merge(spans[static_cast<std::size_t>(e)]);
            const auto base = offset_[static_cast<std::size_t>(s)];
            for (std::size_t c = 0; c < generic; ++c)
                if (in.classes & (1u << c)) f(base + c);
            if (has_beyond(static_cast<std::size_t>(s)) && straddles_threshold(n, in)) f(base + generic);
        }
    }

    std::size_t covered() const noexcept { return set_.count(); }
    std::size_t total() const noexcept { return total_; }
    const item_set& items() const noexcept { return set_; }

    /// "ReLU received beyond"
    std::string describe(std::size_t item) const {
        for (std::size_t s = u_->classes(); s-- > 0;)
            if (item >= offset_[s]) return std::string(u_->class_at(s).name) + " received " + std::string(value_class_names[item - offset_[s]]);
        return "?";
    }

    io::json save() const { return set_.words(); }
    void restore(const io::json& j) { set_.assign(j.get<std::vector<std::uint64_t>>()); }

private:
    static constexpr std::size_t generic = 5;  // every class: negative, zero, small, large, non_finite

    bool has_beyond(std::size_t s) const noexcept {
        const std::size_t end = s + 1 < offset_.size() ? offset_[s + 1] : total_;
        return end - offset_[s] > generic;
    }
    static bool straddles_threshold(const node& n, const value_span& in) {
        for (std::size_t j = 0; j < n.params.size(); ++j)
            if (is_threshold_param(n.layer->params[j].name))
                if (const auto* t = std::get_if<double>(&n.params[j]); t && in.straddles(*t)) return true;
        return false;
    }

    const universe* u_;
    std::vector<std::size_t> offset_;
    std::size_t total_ = 0;
    item_set set_;
};

}  // namespace memo
