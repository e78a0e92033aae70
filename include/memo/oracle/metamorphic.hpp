#pragma once
// The metamorphic tester: one library alone, judged by a model and its variant (a relation of
// metamorphic/relations.hpp spliced in), which must give the same outputs. A variant is used only
// once the reference interpreter gives it exactly the model's outputs (the self-check): one whose
// gate rounding made non-zero, or whose F overflowed (0 x Inf), is discarded, never reported.
//
// Verdicts, per backend: the variant's outputs differ from the model's beyond the dtype's
// tolerance, turn non-finite where the model's do not, or one of the two fails where the other
// runs: kind metamorphic, localised to the first node of the gate whose output differs from the
// reference's (the operator that broke the relation).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../core/hash.hpp"
#include "../metamorphic/relations.hpp"
#include "../tensors/budget.hpp"
#include "rounding.hpp"
#include "tester.hpp"

namespace memo::oracle {

struct metamorphic_options {
    int tries = 4;  // relations tried per model, each with its own variant, before the model is skipped
    metamorphic::splice_options splice{};
};

/// Whether two runs' outputs are the same numbers: equal values (0 and -0 alike), NaN where NaN.
inline bool same_outputs(const std::vector<tensor>& a, const std::vector<tensor>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k) {
        if (a[k].dims != b[k].dims) return false;
        for (std::int64_t i = 0; i < a[k].size(); ++i) {
            const double x = a[k][i], y = b[k][i];
            if (!(x == y) && !(std::isnan(x) && std::isnan(y))) return false;
        }
    }
    return true;
}

class metamorphic_tester final : public tester {
public:
    /// `participants` are tested one by one; `reference` (in the model's dtypes) self-checks the
    /// variants and localises.
    metamorphic_tester(std::vector<executor*> participants, executor& reference, const registry& reg, options o = {}, input_options in = {},
                       metamorphic_options mo = {})
        : xs_(std::move(participants)), ref_(&reference), reg_(&reg), cov_(reg), ctx_(reg, cov_), o_(o), in_(in), mo_(mo) {
        ctx_.guided = false;
    }

    std::string_view name() const override { return "metamorphic"; }
    std::span<executor* const> participants() const override { return xs_; }
    const input_options& inputs() const override { return in_; }
    void set_trace(bool on) override { trace_ = on; }

    void begin(const model& m) override {
        current_ = m;
        variant_.reset();
        if (too_large(m)) return;
        inputs_ = make_inputs(m, in_);
        prepare();
        launch();
    }

    /// Tests m against a given variant (a stored bug's), with no self-check.
    void begin(const model& m, metamorphic::variant v) {
        current_ = m;
        variant_.reset();
        if (too_large(v.m)) return;
        inputs_ = make_inputs(m, in_);
        variant_ = std::move(v);
        prepare();
        launch();
    }

    /// The model's runs ready, it starts the variant's (so they run while the campaign goes on).
    bool ready() override {
        for (std::size_t k : running_)
            if (!xs_[k]->ready()) return false;
        if (!on_variant_ && variant_) start_variant();
        for (std::size_t k : running_)
            if (!xs_[k]->ready()) return false;
        return true;
    }

    verdict finish() override {
        if (!on_variant_) {
            if (!variant_) {
                running_.clear();
                skipped_ = true;
                return {};
            }
            start_variant();
        }
        for (std::size_t k : running_) variant_obs_[k].result = xs_[k]->collect();
        const auto judged = running_;
        running_.clear();
        skipped_ = judged.empty();
        for (std::size_t k : judged)
            if (verdict v = judge_pair(k); v) return v;
        return {};
    }

    bool last_skipped() const override { return skipped_; }
    bool last_suppressed() const override { return false; }
    const std::vector<observation>& observations() const override { return obs_; }
    const std::vector<tensor>& last_inputs() const override { return inputs_; }
    /// The variant's runs of the last model (unsupported where it was not run).
    const std::vector<observation>& variant_observations() const noexcept { return variant_obs_; }
    /// The variant the last model was tested with, when one passed the self-check.
    const std::optional<metamorphic::variant>& last_variant() const noexcept { return variant_; }

    /// A metamorphic bug is kept as found: its variant is the evidence, and a smaller model would
    /// need a variant of its own.
    minimised minimise(const model& m, const verdict& v, int) override { return {m, v, 0}; }

    /// Variants that failed the self-check, and models no relation gave a usable variant for.
    std::uint64_t discarded() const noexcept { return discarded_; }
    std::uint64_t without_variant() const noexcept { return without_variant_; }
    /// Variants used, by relation.
    const std::array<std::uint64_t, std::size(metamorphic::relation_names)>& used() const noexcept { return used_; }

private:
    /// A model (or variant) whose run would pass the byte budget is not run: no tensor of it is made.
    bool too_large(const model& m) {
        const auto fits = within_budget(m, in_.samples, o_.max_bytes);
        if (fits) return false;
        inputs_.clear();
        obs_.clear();
        variant_obs_.clear();
        running_.clear();
        on_variant_ = false;
        obs_ = variant_obs_ = declined_as_too_large(xs_, fits.reason());
        return true;
    }

    void prepare() {
        obs_.clear();
        variant_obs_.clear();
        running_.clear();
        skipped_ = false;
        on_variant_ = false;
        for (auto* x : xs_) {
            obs_.push_back({std::string(x->name()), run_result::failed(run_status::unsupported, "not run"), {}, {}, x->rounding()});
            variant_obs_.push_back(obs_.back());
        }
        if (!variant_) make_variant();
    }

    /// A variant that passes the self-check, trying the relations in an order drawn from the model.
    void make_variant() {
        rng r(structural_hash(current_) ^ current_.seed);
        const auto first = r.index(metamorphic::all_relations.size());
        auto all = ref_->run(current_, inputs_, {true, {}, {}});
        if (!all.ok()) {
            ++without_variant_;
            return;
        }
        auto splice = mo_.splice;
        splice.sources.clear();
        for (std::size_t i = 0; i < all.outputs.size() && i < current_.size(); ++i) {
            const auto& x = all.outputs[i].data;
            if (!all.outputs[i].has_non_finite() && std::any_of(x.begin(), x.end(), [](double v) { return v != 0; }))
                splice.sources.push_back(static_cast<int>(i));
        }
        std::vector<tensor> original;
        for (int o : current_.outputs) original.push_back(std::move(all.outputs[static_cast<std::size_t>(o)]));
        for (int t = 0; t < mo_.tries; ++t) {
            const auto rel = metamorphic::all_relations[(first + static_cast<std::size_t>(t)) % metamorphic::all_relations.size()];
            auto v = metamorphic::splice(current_, rel, ctx_, r, splice);
            if (!v) continue;
            const auto got = ref_->run(v->m, inputs_, {});
            if (!got.ok() || !same_outputs(original, got.outputs)) {
                ++discarded_;
                continue;
            }
            ++used_[static_cast<std::size_t>(rel)];
            variant_ = std::move(*v);
            return;
        }
        ++without_variant_;
    }

    /// Collects the model's runs and starts the variant where the model ran (or failed), untraced:
    /// the store keeps the model's runs.
    void start_variant() {
        for (std::size_t k : running_) {
            obs_[k].result = xs_[k]->collect();
            keep_node_digests(obs_[k], current_, trace_ && xs_[k]->traceable());
        }
        const auto ran = running_;
        running_.clear();
        on_variant_ = true;
        for (std::size_t k : ran)
            if (obs_[k].result.status != run_status::unsupported) {
                xs_[k]->submit(variant_->m, inputs_, {});
                running_.push_back(k);
            }
    }

    /// Starts the model on every backend that supports both it and its variant.
    void launch() {
        if (!variant_) return;
        for (std::size_t k = 0; k < xs_.size(); ++k) {
            if (auto s = xs_[k]->supports(current_); !s) {
                obs_[k].result = run_result::failed(run_status::unsupported, s.reason());
                continue;
            }
            if (auto s = xs_[k]->supports(variant_->m); !s) {
                obs_[k].result = run_result::failed(run_status::unsupported, "the variant: " + s.reason());
                continue;
            }
            xs_[k]->submit(current_, inputs_, traced_run(trace_, *xs_[k]));
            running_.push_back(k);
        }
    }

    verdict judge_pair(std::size_t k) {
        const auto& a = obs_[k].result;
        const auto& b = variant_obs_[k].result;
        verdict v;
        if (a.status == run_status::unsupported || b.status == run_status::unsupported) return v;
        const std::string rel(metamorphic::name_of(variant_->rel));
        v.culprits = {obs_[k].backend};
        v.peers = {obs_[k].backend};
        relation_broken broken;  // its variant copied only once the relation is found broken
        if (failed(a.status) || failed(b.status)) {
            if (failed(a.status) && failed(b.status)) {
                v.details = all_failed{};
                return v;
            }
            const auto& bad = failed(a.status) ? a : b;
            broken.status = bad.status;
            v.node = bad.node;
            v.message =
                "relation " + rel + ": " + (failed(a.status) ? "the model fails, its variant runs: " : "the variant fails, the model runs: ") + bad.message;
        } else if (has_non_finite(a.outputs) != has_non_finite(b.outputs)) {
            v.message = "relation " + rel + ": " +
                        (has_non_finite(b.outputs) ? "the variant's outputs turn non-finite" : "the model's outputs are non-finite, its variant's are not");
        } else {
            // Output by output, each against its own node's rounding (oracle/rounding.hpp).
            const auto d = compare(a.outputs, b.outputs);
            bool differs = d.shapes_differ;
            for (std::size_t o = 0; !differs && o < a.outputs.size() && o < current_.outputs.size(); ++o) {
                const auto dk = compare({a.outputs[o]}, {b.outputs[o]});
                const auto n = static_cast<std::size_t>(current_.outputs[o]);
                differs = beyond(dk, rounding_bound(current_, n, xs_[k]->rounding().of(current_.nodes[n].type), dk.scale, dk.scale, 0.0, o_));
            }
            if (!differs) return v;
            broken.max_abs = d.max_abs;
            broken.max_rel = d.max_rel;
            v.message = "relation " + rel + ": the variant's outputs differ from the model's";
        }
        v.what = kind::metamorphic;
        broken.variant = *variant_;
        v.details = std::move(broken);
        if (v.node < 0) v.node = localise(*xs_[k]);
        if (v.node >= 0 && static_cast<std::size_t>(v.node) < variant_->m.size()) {
            const node& n = variant_->m[v.node];
            v.layer = std::string(n.layer->name);
            if (!n.inputs.empty()) v.producer = std::string(variant_->m[n.inputs[0]].layer->name);
        }
        return v;
    }

    /// The first node of the gate (then the product and the sum) whose output on x differs from
    /// the reference's on the same inputs (the reference reads x's values of each node's
    /// producers): the operator that broke the relation, not a gate node downstream of a faulty
    /// layer of the model itself; -1 when none does.
    int localise(executor& x) {
        const auto a = x.run(variant_->m, inputs_, {true, {}, {}});
        if (!a.ok() || a.outputs.size() != variant_->m.size()) return -1;
        const auto b = ref_->run(variant_->m, inputs_, {true, a.outputs, {}});
        if (!a.ok() || !b.ok()) return -1;
        for (int i : variant_->gate) {
            const auto k = static_cast<std::size_t>(i);
            if (k >= a.outputs.size() || k >= b.outputs.size()) break;
            if (a.outputs[k].has_non_finite() != b.outputs[k].has_non_finite()) return i;
            const auto d = compare({a.outputs[k]}, {b.outputs[k]});
            const dtype like = judged_as(variant_->m.nodes[k].type, x.rounding(), ref_->rounding());
            if (beyond(d, rounding_bound(variant_->m, k, like, d.scale, input_magnitude(variant_->m, k, b.outputs), 0.0, o_))) return i;
        }
        return -1;
    }

    std::vector<executor*> xs_;
    executor* ref_;
    const registry* reg_;
    memo_coverage cov_;  // empty: F's layers are drawn unguided
    mutation::context ctx_;
    options o_;
    input_options in_;
    metamorphic_options mo_;
    model current_;
    std::vector<tensor> inputs_;
    std::optional<metamorphic::variant> variant_;
    std::vector<observation> obs_, variant_obs_;
    std::vector<std::size_t> running_;
    bool trace_ = false, skipped_ = false;
    bool on_variant_ = false;  // the model's runs are in; the variant's are running
    std::uint64_t discarded_ = 0, without_variant_ = 0;
    std::array<std::uint64_t, std::size(metamorphic::relation_names)> used_{};
};

}  // namespace memo::oracle
