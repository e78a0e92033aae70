#pragma once
// The backend concept: a DL library (or our reference interpreter) that runs a model.
//
//   struct my_backend {
//       std::string_view name() const;
//       memo::expected<void> supports(const memo::model&) const;   // why not, per layer or dtype
//       memo::run_result run(const memo::model&, std::span<const memo::tensor> inputs,
//                            const memo::run_options&);
//   };
//
// A backend that supports only some layers or dtypes says so in supports(); the oracle then
// compares that model only among the backends that support it.
#include <concepts>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../core/model.hpp"
#include "../engine/error.hpp"
#include "../tensors/digest.hpp"
#include "../tensors/tensor.hpp"
#include "../tensors/values.hpp"

namespace memo {

/// What a run returns, besides the outputs.
enum class run_status : unsigned char {
    ok,           // outputs are valid
    unsupported,  // the backend declined the model (a layer or dtype it lacks): not compared
    error,        // the library raised an error (an exception, a status): a crash verdict if others ran
    crash,        // the worker died (signal) or aborted
    timeout,      // the worker passed its time limit and was killed
    memory,       // the worker passed its memory limit and was killed
    invalid,      // the library's own model checks (ONNX's checker, its shape inference) reject the
                  // model, or infer other shapes than the model's: a shape verdict
};
inline constexpr std::string_view run_status_names[] = {"ok", "unsupported", "error", "crash", "timeout", "memory", "invalid"};
inline constexpr std::size_t run_status_count = std::size(run_status_names);
constexpr std::string_view name_of(run_status s) noexcept { return run_status_names[static_cast<int>(s)]; }

/// A bug's reproducer in a library's own terms, which a worker writes instead of running the model
/// (run_options::reproducer): a script and its data in `directory`, their names beginning with
/// `stem`, headed by `title`; each check a node whose value shows the fault, with the value
/// expected (memo's float64 reference) and the most rounding may move it. Without checks the fault
/// is the run failing.
struct reproducer_request {
    struct check {
        int node = -1;
        tensor expected;
        double bound = 0;
    };
    std::string directory, stem, title;
    std::vector<check> checks;
};

/// How to run.
struct run_options {
    /// Return every node's output (in node order), not only the model's outputs.
    bool every_node = false;
    /// Teacher forcing: when not empty (one tensor per node), each node reads its inputs from
    /// these tensors instead of its own producers' outputs, so each node's output can be compared
    /// on identical inputs. Implies every_node.
    std::span<const tensor> forced{};
    /// Compute every node in this dtype instead of the model's (the float64 ground truth).
    std::optional<dtype> precision{};
    /// With every_node: a worker answers with the model's outputs and a digest of every node's
    /// output (run_result::node_digests) rather than every node's tensor: what a campaign's store
    /// keeps, for a fraction of the bytes over the pipe. Backends themselves ignore it.
    bool digest_nodes = false;
    /// Not a run: the backend's worker writes this reproducer of the model (executor::
    /// writes_reproducers says which do), runs it, and answers ok with what it printed.
    const reproducer_request* reproducer = nullptr;
};

/// What a node held on its way to its output, as far as its dtype's range goes: values past the
/// range leave no trace in the outputs (tanh(inf) is 1; an L2 norm's sum of squares that overflows
/// makes x / inf 0, one that underflows to 0 makes x / 0 infinite, one that is subnormal makes it a
/// few percent off), yet each library's answer from there is its own, as it keeps such values in
/// the node's dtype or in a wider one.
struct inner_range {
    double largest = 0;                                              // of its states (a recurrence's over its steps) and what it divides by (0: none)
    double least_divisor = std::numeric_limits<double>::infinity();  // of what it divides by (an L2 norm's sum of squares; inf: nothing)
};

struct run_result {
    /// Keeps the model's outputs of an every_node result, with a digest of each node's output
    /// in node_digests and what its values reach in node_spans.
    void digest_nodes(const model& m) {
        node_digests.clear();
        node_spans.clear();
        for (const auto& t : outputs) {
            const auto [d, s] = digest_and_span(t);
            node_digests.push_back(d);
            node_spans.push_back(s);
        }
        std::vector<tensor> model_outputs;
        for (int o : m.outputs)
            if (static_cast<std::size_t>(o) < outputs.size()) model_outputs.push_back(std::move(outputs[static_cast<std::size_t>(o)]));
        outputs = std::move(model_outputs);
    }

    run_status status = run_status::ok;
    std::vector<tensor> outputs;         // the model's outputs, or every node's with every_node/forced
    std::string message;                 // the error text, or how the worker died
    int signal = 0;                      // the signal that killed the worker, for crash
    int node = -1;                       // the node that failed, when the backend knows
    bool whole_graph = false;            // the failure is the library's running of the whole graph: every node ran alone
    double ms = 0.0;                     // wall time of the run
    double cpu_ms = 0.0;                 // CPU time the worker spent on it, every thread's (0: not measured)
    double compile_ms = 0.0;             // the part of ms the library spent compiling (0: none, or not said)
    std::int64_t peak_kb = 0;            // peak resident memory of the worker during the run (0: not measured)
    std::int64_t start_kb = 0;           // resident memory of the worker when the run began (0: not measured)
    std::vector<digest> node_digests;    // every node's, from a worker asked for digest_nodes
    std::vector<value_span> node_spans;  // with node_digests: the classes and range of every node's values
    /// From a worker whose plain run computed every node (Keras' eager runs): per node, whether its
    /// output holds a NaN or infinity. Where a NaN starts is then known without running again.
    std::vector<std::uint8_t> node_non_finite;
    /// With every_node, from the reference interpreter in process: per node, what it held inside
    /// (inner_range). Empty where the backend does not say.
    std::vector<inner_range> node_inner;

    bool ok() const noexcept { return status == run_status::ok; }
    static run_result failed(run_status s, std::string why) {
        run_result r;
        r.status = s;
        r.message = std::move(why);
        return r;
    }
};

/// The backend concept.
template <class B>
concept backend = requires(B& b, const B& cb, const model& m, std::span<const tensor> in, const run_options& o) {
    { cb.name() } -> std::convertible_to<std::string_view>;
    { cb.supports(m) } -> std::same_as<expected<void>>;
    { b.run(m, in, o) } -> std::same_as<run_result>;
};

}  // namespace memo
