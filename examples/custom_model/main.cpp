// custom_model: memo's engine over a model type that is not memo's graph at all. The models are
// little programs of arithmetic instructions; two "libraries" of our own run them, and one of
// them carries two planted faults. Operators, a coverage metric, a context and a codec of our own
// make a whole campaign: the search, execution on both libraries, a judgement, bugs stored in a
// directory, a checkpoint, and a replay of each stored bug. Only the engine's headers are used
// (they need the standard library alone); nothing is linked.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <memo/engine/campaign.hpp>
#include <memo/engine/search.hpp>

namespace {

// ---- the model: a program of instructions applied in turn to each input ----
enum class op : int { add, mul, neg, sqrt, square, div };
constexpr const char* op_names[] = {"add", "mul", "neg", "sqrt", "square", "div"};
constexpr int op_count = 6;

struct instruction {
    op code = op::add;
    double constant = 0;  // for add, mul, div
    friend bool operator==(const instruction&, const instruction&) = default;
};
using program = std::vector<instruction>;

const std::vector<double> inputs{0.5, 2.0, 7.0, 300.0};

// ---- two libraries that run programs ----
/// The precise one.
memo::engine::observation run_precise(const program& p) {
    memo::engine::observation o;
    for (double x : inputs) {
        for (const auto& i : p) switch (i.code) {
                case op::add: x += i.constant; break;
                case op::mul: x *= i.constant; break;
                case op::neg: x = -x; break;
                case op::sqrt: x = std::sqrt(x); break;
                case op::square: x = x * x; break;
                case op::div: x /= i.constant; break;
            }
        o.outputs.push_back(x);
    }
    return o;
}

/// The fast one, with two planted faults: it refuses a division right after a negation (a crash,
/// as a library error), and its square root is two Newton steps from 1, far off for large values
/// (an inconsistency).
memo::engine::observation run_fast(const program& p) {
    memo::engine::observation o;
    for (std::size_t k = 1; k < p.size(); ++k)
        if (p[k - 1].code == op::neg && p[k].code == op::div) return {memo::engine::observation::status::failed, {}, "fused neg-div is not supported"};
    for (double x : inputs) {
        for (const auto& i : p) switch (i.code) {
                case op::add: x += i.constant; break;
                case op::mul: x *= i.constant; break;
                case op::neg: x = -x; break;
                case op::sqrt: {
                    if (!(x >= 0)) {
                        x = std::sqrt(x);  // NaN, as the precise one
                        break;
                    }
                    double y = 1;
                    for (int s = 0; s < 2; ++s) y = 0.5 * (y + x / y);
                    x = x < 50 ? std::sqrt(x) : y;
                    break;
                }
                case op::square: x = x * x; break;
                case op::div: x /= i.constant; break;
            }
        o.outputs.push_back(x);
    }
    return o;
}

// ---- coverage: which instructions, and which pairs of neighbours, programs hold ----
struct pair_coverage {
    std::set<int> seen;
    static std::set<int> items(const program& p) {
        std::set<int> out;
        for (std::size_t k = 0; k < p.size(); ++k) {
            out.insert(static_cast<int>(p[k].code));
            if (k) out.insert(op_count + op_count * static_cast<int>(p[k - 1].code) + static_cast<int>(p[k].code));
        }
        return out;
    }
    std::size_t add(const program& p) {
        std::size_t n = 0;
        for (int i : items(p)) n += seen.insert(i).second;
        return n;
    }
    std::size_t gain(const program& p) const {
        std::size_t n = 0;
        for (int i : items(p)) n += !seen.count(i);
        return n;
    }
    std::size_t covered() const { return seen.size(); }
    std::size_t total() const { return op_count + op_count * op_count; }
};

/// What the operators see: nothing but a size limit.
struct limits {
    std::size_t max_length = 8;
    explicit limits(const pair_coverage&) {}
};

// ---- operators ----
instruction random_instruction(memo::rng& r) {
    const auto code = static_cast<op>(r.uniform(0, op_count - 1));
    return {code, code == op::add || code == op::mul || code == op::div ? static_cast<double>(r.uniform(1, 9)) : 0.0};
}
struct insert {
    static constexpr std::string_view name = "insert";
    memo::expected<program> operator()(const program& p, memo::rng& r, const limits& l) const {
        if (p.size() >= l.max_length) return memo::fail("program at its size limit");
        program q = p;
        q.insert(q.begin() + static_cast<std::ptrdiff_t>(r.index(q.size() + 1)), random_instruction(r));
        return q;
    }
};
struct remove {
    static constexpr std::string_view name = "remove";
    memo::expected<program> operator()(const program& p, memo::rng& r, const limits&) const {
        if (p.size() < 2) return memo::fail("nothing to remove");
        program q = p;
        q.erase(q.begin() + static_cast<std::ptrdiff_t>(r.index(q.size())));
        return q;
    }
};
struct replace {
    static constexpr std::string_view name = "replace";
    memo::expected<program> operator()(const program& p, memo::rng& r, const limits&) const {
        program q = p;
        q[r.index(q.size())] = random_instruction(r);
        return q;
    }
};
using operators = memo::operator_set<insert, remove, replace>;
using program_search = memo::basic_search<program, operators, pair_coverage, memo::mh_selector, limits>;

// ---- the codec: a program's identity and its text ("add 3\nsqrt\n") ----
struct program_codec {
    std::uint64_t key(const program& p) const {
        std::uint64_t h = 1469598103934665603ULL;
        for (const auto& i : p) h = (h ^ (static_cast<std::uint64_t>(i.code) * 31 + static_cast<std::uint64_t>(i.constant))) * 1099511628211ULL;
        return h;
    }
    std::string save(const program& p) const {
        std::string s;
        for (const auto& i : p) {
            s += op_names[static_cast<int>(i.code)];
            if (i.code == op::add || i.code == op::mul || i.code == op::div) s += " " + std::to_string(static_cast<int>(i.constant));
            s += "\n";
        }
        return s;
    }
    memo::expected<program> load(std::string_view text) const {
        program p;
        std::istringstream in{std::string(text)};
        std::string word;
        while (in >> word) {
            int code = 0;
            while (code < op_count && word != op_names[code]) ++code;
            if (code == op_count) return memo::fail("unknown instruction '" + word + "'");
            instruction i{static_cast<op>(code), 0};
            if (i.code == op::add || i.code == op::mul || i.code == op::div) in >> i.constant;
            p.push_back(i);
        }
        if (p.empty()) return memo::fail("an empty program");
        return p;
    }
};

}  // namespace

int main() {
    const std::vector<memo::engine::library<program>> libraries{{"precise", run_precise}, {"fast", run_fast}};
    const std::vector<program> seeds{{{op::add, 1}}, {{op::square, 0}, {op::mul, 2}}};

    program_search s(seeds, pair_coverage{}, memo::mh_selector(0.05), 1);
    memo::engine::campaign<program_search, program_codec> c("custom_model_campaign", program_codec{}, libraries, {.tolerance = 1e-9});
    const auto sum = c.run(s, 3000);
    std::printf("%llu steps: %llu valid, %llu raised coverage (%zu of %zu items), %llu run on both libraries\n", static_cast<unsigned long long>(sum.steps),
                static_cast<unsigned long long>(sum.valid), static_cast<unsigned long long>(sum.diverse), s.coverage().covered(), s.coverage().total(),
                static_cast<unsigned long long>(sum.tested));
    for (const auto& [signature, models] : sum.bugs) {
        const auto again = memo::engine::replay(std::filesystem::path("custom_model_campaign") / "bugs" / signature, program_codec{}, libraries, 1e-9);
        std::printf("bug %-26s seen in %4llu models; its stored model replays as %s\n", signature.c_str(), static_cast<unsigned long long>(models),
                    memo::engine::signature(again) == signature ? "the same bug" : memo::engine::signature(again).c_str());
    }
    return sum.bugs.size() == 2 ? 0 : 1;
}
