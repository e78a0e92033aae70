// MEMO's parameter pool (api_config_pool.json) against our registry: every class exists and is
// in the universe, every parameter exists, every candidate value is in our domain, and every
// numeric parameter ([0] in the pool) has a numeric domain.
#include <nlohmann/json.hpp>

#include "../support.hpp"

namespace test_layers_pool_test {

namespace {

memo::value pool_value(const nlohmann::json& j) {
    if (j.is_null()) return memo::none;
    if (j.is_boolean()) return j.get<bool>();
    if (j.is_number_integer()) return j.get<std::int64_t>();
    if (j.is_number_float()) return j.get<double>();
    return j.get<std::string>();
}

bool numeric(const memo::any_domain& d) {
    return std::holds_alternative<memo::int_range>(d.d) || std::holds_alternative<memo::int_tuple>(d.d) || std::holds_alternative<memo::real_range>(d.d);
}

}  // namespace

TEST(MemoPool, EveryClassParameterAndValueIsInOurDomains) {
    const auto pool = memo::io::parse_json_file(std::string(MEMO_TEST_DATA_DIR) + "/memo/api_config_pool.json");
    ASSERT_EQ(pool.size(), 67u);
    std::size_t values = 0;
    for (auto it = pool.begin(); it != pool.end(); ++it) {
        const auto* L = test::reg().find(it.key());
        ASSERT_NE(L, nullptr) << it.key();
        EXPECT_TRUE(L->in_universe) << it.key();
        for (auto p = it.value().begin(); p != it.value().end(); ++p) {
            SCOPED_TRACE(it.key() + "." + p.key());
            const int k = L->param_index(p.key());
            ASSERT_GE(k, 0) << "missing parameter";
            const auto& dom = L->params[static_cast<std::size_t>(k)].dom;
            for (const auto& cand : p.value()) {
                if (cand.is_number_integer() && cand.get<int>() == 0) {  // 0 is the pool's mark of a numeric parameter
                    EXPECT_TRUE(numeric(dom)) << "the pool marks it numeric, our domain is " << dom.describe();
                    continue;
                }
                const auto v = pool_value(cand);
                const auto tuple = std::get_if<memo::int_tuple>(&dom.d);
                const memo::value w = (tuple && std::holds_alternative<std::int64_t>(v)) ? memo::value{memo::ints::filled(tuple->count, memo::as_int(v))} : v;
                EXPECT_TRUE(dom.validate(w)) << memo::to_string(v) << " not in " << dom.describe();
                ++values;
            }
        }
    }
    EXPECT_GT(values, 1500u);
}

}  // namespace test_layers_pool_test
