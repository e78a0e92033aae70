#pragma once
// A backend chosen at run time, in process or in its own worker: what a campaign holds. submit()
// starts a run and returns at once when the backend runs in a worker, so the campaign generates
// the next model while the libraries compute; collect() waits for the result.
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "backend.hpp"

namespace memo {

/// How a backend's arithmetic rounds: for each dtype a model runs in, the dtype whose rounding its
/// results carry. Each dtype its own by default. TF32 maths (a GPU's tensor cores on float32)
/// rounds the operands of products to a 10-bit mantissa, float16's, in float32's range: such a
/// backend computes float32 like float16, and the oracle judges its float32 results so.
struct arithmetic {
    std::array<dtype, 4> like = all_dtypes;
    dtype of(dtype t) const noexcept { return like[static_cast<std::size_t>(t)]; }
};
/// The one of two dtypes that rounds more coarsely.
constexpr dtype coarser(dtype a, dtype b) noexcept { return unit_roundoff(a) >= unit_roundoff(b) ? a : b; }

class executor {
public:
    virtual ~executor() = default;
    virtual std::string_view name() const = 0;
    virtual expected<void> supports(const model& m) const = 0;
    virtual void submit(const model& m, std::span<const tensor> inputs, const run_options& o) = 0;
    virtual run_result collect() = 0;
    /// Whether collect() would return without waiting.
    virtual bool ready() const { return true; }
    /// A descriptor that becomes readable when the run in flight has its answer (its worker's
    /// pipe), or -1: none to wait on (ready() says). A campaign waits on all its lanes' at once.
    virtual int awaited_fd() const { return -1; }
    /// Worker restarts after a death or a time-out (0 in process).
    virtual std::uint64_t restarts() const { return 0; }
    /// Drops the run in flight, whose answer will not be collected (a campaign at its budget's
    /// end): a worker is stopped at once, and the next submit() starts a fresh one.
    virtual void abandon() {}
    /// The limits of a backend that runs in a worker (0: none), settable: a time-out is confirmed
    /// with a longer one, and a known hang or blow-up met again gets a short one.
    virtual double time_limit() const { return 0; }
    virtual void set_time_limit(double) {}
    virtual std::int64_t memory_limit_mb() const { return 0; }
    virtual void set_memory_limit_mb(std::int64_t) {}
    /// Whether the backend writes a bug's reproducer in its library's terms when asked
    /// (run_options::reproducer); one that does not would run the model instead.
    virtual bool writes_reproducers() const { return false; }

    run_result run(const model& m, std::span<const tensor> inputs, const run_options& o = {}) {
        submit(m, inputs, o);
        return collect();
    }

    /// Whether a campaign that records its runs may run this backend with every_node, so that the
    /// store keeps a digest per node (replay then names the first node that diverges). Off for a
    /// library whose graph optimisations an output per node would prevent (ONNX Runtime with its
    /// optimisations on), or whose worker would ship every node's tensor back.
    bool traceable() const noexcept { return traceable_; }
    void set_traceable(bool t) noexcept { traceable_ = t; }

    /// Whether the backend's plain runs rewrite the whole graph first (a compiler: torch.compile,
    /// XLA; graph optimisations: ONNX Runtime's), while its every-node and forced runs compute
    /// each layer as it does without them: a fault of the rewriting shows in no layer alone.
    bool rewrites_graph() const noexcept { return rewrites_graph_; }
    void set_rewrites_graph(bool r) noexcept { rewrites_graph_ = r; }

    /// How the backend rounds (arithmetic above): what the oracle allows its results.
    const arithmetic& rounding() const noexcept { return rounding_; }
    void set_rounding(const arithmetic& a) noexcept { rounding_ = a; }

private:
    bool traceable_ = true, rewrites_graph_ = false;
    arithmetic rounding_;
};

/// A backend run in the campaign's own process: fast, and trusted not to crash.
template <backend B>
class in_process final : public executor {
public:
    explicit in_process(B b) : b_(std::move(b)) {}
    std::string_view name() const override { return b_.name(); }
    expected<void> supports(const model& m) const override { return b_.supports(m); }
    void submit(const model& m, std::span<const tensor> inputs, const run_options& o) override { result_ = b_.run(m, inputs, o); }
    run_result collect() override { return std::move(result_); }
    B& get() noexcept { return b_; }

private:
    B b_;
    run_result result_;
};

template <backend B>
std::unique_ptr<executor> make_in_process(B b) {
    return std::make_unique<in_process<B>>(std::move(b));
}

}  // namespace memo
