// custom_layer: a layer type memo does not have, added in user code. ChannelShuffle (ShuffleNet's
// channel shuffle) gets parameter domains, a shape rule and a reference kernel; memo's search then
// generates models holding it from MEMO's seed models, and coverage counts it like any built-in
// layer. A fixed seed and step count: the output is the same on every run.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/core.h>

#include <memo/all.hpp>

/// ChannelShuffle(groups): splits the channels into `groups` groups of C / groups and interleaves
/// them, channel g * (C / groups) + k moving to k * groups + g. The shape does not change.
/// Its family (reshape: it moves elements, computes none) and input ranks (batch included: 1-D to
/// 3-D maps) come from layer_kind.
struct channel_shuffle : memo::layer_kind<memo::family::reshape, memo::rank_set::between(3, 5)> {
    static constexpr std::string_view name = "ChannelShuffle";
    static std::span<const memo::param> params() {
        static const std::vector<memo::param> ps{
            // in_range(1, 64, 8): any count up to 64 is valid; draws and coverage buckets use 1..8.
            {"groups", memo::in_range(1, 64, 8), memo::role::shape, std::int64_t{2}},
            {"data_format", memo::element_of({"channels_last", "channels_first"}), memo::role::shape, "channels_last"},
        };
        return ps;
    }
    /// Pure: an invalid combination is a reason, never an exception. The search relies on it to
    /// reject mutants (and repair them) without running anything.
    static memo::expected<memo::shape> infer(memo::inputs in, memo::args p) {
        const memo::shape& s = in[0];
        const std::int64_t groups = memo::as_int(p[0]);
        const std::int64_t channels = memo::as_str(p[1]) == "channels_first" ? s[1] : s.back();
        if (channels % groups != 0) return memo::fail(fmt::format("{} channels do not split into {} groups", channels, groups));
        return s;
    }
};
static_assert(memo::layer<channel_shuffle>);

/// The reference interpreter's kernel, one template for its four element types.
template <class T>
memo::expected<memo::reference::array<T>> shuffle(const memo::node& n, std::span<const memo::reference::array<T>> in,
                                                  std::span<const memo::reference::array<T>> /*weights: none*/) {
    const memo::reference::params p{n};
    const auto& x = in[0];
    const int axis = p.channels_first() ? 1 : x.rank() - 1;
    const std::int64_t channels = x.dim(axis), groups = p.integer("groups"), per = channels / groups;
    const std::int64_t inner = x.strides()[static_cast<std::size_t>(axis)], outer = x.size() / (channels * inner);
    memo::reference::array<T> out(x.dims);
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t g = 0; g < groups; ++g)
            for (std::int64_t k = 0; k < per; ++k)
                for (std::int64_t i = 0; i < inner; ++i) out[(o * channels + k * groups + g) * inner + i] = x[(o * channels + g * per + k) * inner + i];
    return out;
}

int main() {
    // memo's layers plus ours: a type list, so nothing registers itself behind the user's back.
    using my_layers = memo::concat<memo::default_layers, memo::layer_list<channel_shuffle>>;
    const memo::registry& reg = memo::registry_of<my_layers>();

    // The reference interpreter needs our layer's kernel, once per element type it computes in.
    memo::reference::interpreter interp;
    auto add_kernel = [&]<class T>(std::type_identity<T>) { interp.kernels<T>().set(channel_shuffle::name, shuffle<T>); };
    add_kernel(std::type_identity<Eigen::half>{});
    add_kernel(std::type_identity<Eigen::bfloat16>{});
    add_kernel(std::type_identity<float>{});
    add_kernel(std::type_identity<double>{});

    // The kernel on a worked example: 6 channels in 2 groups, (0 1 2)(3 4 5) -> 0 3 1 4 2 5.
    {
        memo::builder b(reg);
        b.add("ChannelShuffle", {b.input({1, 6})}, {{"groups", 2}});
        const memo::model m = b.finish();
        memo::tensor x({1, 1, 6});
        for (int c = 0; c < 6; ++c) x.data[static_cast<std::size_t>(c)] = c;
        const auto r = interp.run(m, std::vector<memo::tensor>{x}, {});
        fmt::print("ChannelShuffle(groups=2) of 0 1 2 3 4 5:");
        for (double v : r.outputs.at(0).data) fmt::print(" {}", v);
        fmt::print("\n");
    }

    // MEMO's ten seed models over our registry, reduced (Algorithm 1) and made cheap to run.
    std::vector<memo::model> seeds;
    for (auto name : memo::zoo::names()) seeds.push_back(memo::campaign::fit_to_cost(memo::reduce(memo::zoo::build(name, reg), reg).reduced, 2'000'000));

    memo::search<memo::model, memo::mutation::memo_operators, memo::memo_coverage, memo::mh_selector> s(seeds, memo::memo_coverage(reg),
                                                                                                        memo::mh_selector(0.05), 11);
    s.set_max_seed_size(160);
    s.context().max_cost = 20'000'000;
    const memo::layer_def& L = reg.at("ChannelShuffle");
    std::vector<memo::model> holding;  // the generated models that hold our layer
    int diverse = 0;
    const int steps = 2000;
    for (int i = 0; i < steps; ++i) {
        const auto r = s.step();
        if (!r.gain) continue;
        ++diverse;
        for (const auto& n : r.mutant->nodes)
            if (n.layer == &L) {
                holding.push_back(*r.mutant);
                break;
            }
    }

    // What the search covered of ChannelShuffle: its type, its parameters' buckets, the pairs it
    // makes with other classes, and its inputs (rank, dtype, size).
    const memo::memo_coverage& c = s.coverage();
    const memo::universe& u = c.space();
    using memo::criterion;
    const auto slot = static_cast<std::size_t>(u.slot_of(L));
    fmt::print("search: {} steps from {} seed models, {} raised coverage, {} of them hold ChannelShuffle\n", steps, seeds.size(), diverse, holding.size());
    fmt::print("universe: {} layer classes (MEMO's 67 and ours); ChannelShuffle covered: {}\n", u.classes(), c.has(criterion::layer_type, slot) ? "yes" : "no");
    for (std::size_t j = 0; j < L.params.size(); ++j) {
        // describe() names an item: "ChannelShuffle.groups bucket 0", "ChannelShuffle.data_format='channels_first'".
        const std::string prefix = "ChannelShuffle." + std::string(L.params[j].name);
        std::string seen;
        int covered = 0;
        for (int b = 0; b < L.params[j].dom.buckets(); ++b)
            if (const auto item = u.param_item(slot, j, b); c.has(criterion::layer_param, item)) {
                const auto what = u.describe(criterion::layer_param, item).substr(prefix.size() + 1);
                seen += (covered++ ? ", " : "") + what;
            }
        fmt::print("  {}: {}/{} buckets ({})\n", L.params[j].name, covered, L.params[j].dom.buckets(), seen);
    }
    std::vector<std::string> before, after;
    for (std::size_t a = 0; a < u.classes(); ++a) {
        if (c.has(criterion::layer_pair, u.pair_item(a, slot))) before.emplace_back(u.class_at(a).name);
        if (c.has(criterion::layer_pair, u.pair_item(slot, a))) after.emplace_back(u.class_at(a).name);
    }
    fmt::print("  pairs: {} classes feed it, it feeds {}; e.g. {} -> ChannelShuffle -> {}\n", before.size(), after.size(),
               before.empty() ? "-" : before.front(), after.empty() ? "-" : after.front());
    std::vector<int> inputs;  // its input items: each accepted rank, each dtype, each size bucket
    L.ranks.for_each([&](int r) { inputs.push_back(u.input_rank_item(slot, r)); });
    for (auto t : memo::all_dtypes) inputs.push_back(u.input_dtype_item(slot, t));
    for (int b = 0; b < memo::shape_buckets; ++b) inputs.push_back(u.input_bucket_item(slot, b));
    fmt::print("  inputs: {}/{} (ranks, dtypes, sizes)\n", std::count_if(inputs.begin(), inputs.end(), [&](int i) { return c.has(criterion::layer_input, i); }),
               inputs.size());
    fmt::print("all layers: types {}/{} pairs {}/{} params {}/{} inputs {}/{}\n", c.covered(criterion::layer_type), c.total(criterion::layer_type),
               c.covered(criterion::layer_pair), c.total(criterion::layer_pair), c.covered(criterion::layer_param), c.total(criterion::layer_param),
               c.covered(criterion::layer_input), c.total(criterion::layer_input));

    // Our kernel lets the reference interpreter run what the search made (the first few, for time).
    const std::size_t tried = std::min<std::size_t>(holding.size(), 40);
    int ok = 0;
    for (std::size_t i = 0; i < tried; ++i) ok += interp.run(holding[i], memo::make_inputs(holding[i]), {}).ok();
    fmt::print("reference interpreter: {}/{} of the first models holding ChannelShuffle ran\n", ok, tried);
    return 0;
}
