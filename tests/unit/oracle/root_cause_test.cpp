// Root causes (oracle/root_cause.hpp): one fault's signatures across dimensionalities, paddings
// and max-based operations are one root cause; a different kind, culprit, dtype (of a wrong or lost
// value; a crash's is in its message) or message is another. The bug store writes each bug's root cause and counts them, and runs a bug's
// reproducer hook into its repro/ before the bug is moved into place.
#include <filesystem>

#include <memo/io/json.hpp>
#include <memo/oracle/root_cause.hpp>
#include <memo/store/bugs.hpp>

#include "../support.hpp"

namespace test_oracle_root_cause_test {

namespace {

/// A model of an input of the given shape and one layer of class `cls` with the given parameters
/// and output shape (per sample), in `dtype`.
memo::model one_layer(const std::string& cls, const std::vector<std::int64_t>& shape, memo::io::json params, const std::vector<std::int64_t>& out,
                      const std::string& dtype = "float32") {
    auto batched = [](const std::vector<std::int64_t>& dims) {
        memo::io::json j = {nullptr};
        for (auto d : dims) j.push_back(d);
        return j;
    };
    memo::io::json in = {
        {"layer", "InputLayer"}, {"name", "in"},           {"inputs", memo::io::json::array()}, {"params", {{"shape", shape}, {"dtype", dtype}}},
        {"dtype", dtype},        {"shape", batched(shape)}};
    memo::io::json op = {{"layer", cls}, {"name", "op"}, {"inputs", {0}}, {"params", params}, {"dtype", dtype}, {"shape", batched(out)}};
    memo::io::json j = {{"format", "memo.model"}, {"version", 1}, {"seed", 1}, {"outputs", {1}}, {"nodes", {in, op}}};
    return memo::io::model_from_json(j, test::reg());
}

memo::oracle::verdict lost_nan(const std::string& layer, const std::string& culprit = "ort") {
    memo::oracle::verdict v;
    v.what = memo::oracle::kind::nan;
    v.culprits = {culprit};
    v.peers = {"reference"};
    v.message = "finite outputs where the float64 reference's are not: a NaN or infinity lost";
    v.node = 1;
    v.layer = layer;
    return v;
}

}  // namespace

TEST(RootCause, OperationsDropDimensionalityAndGlobal) {
    EXPECT_EQ(memo::oracle::operation_of("MaxPooling1D"), "MaxPooling");
    EXPECT_EQ(memo::oracle::operation_of("GlobalMaxPooling3D"), "MaxPooling");
    EXPECT_EQ(memo::oracle::operation_of("Conv2DTranspose"), "ConvTranspose");
    EXPECT_EQ(memo::oracle::operation_of("LSTM"), "LSTM");
    EXPECT_EQ(memo::oracle::operation_of("Bidirectional"), "LSTM");  // memo's is Bidirectional(LSTM)
    EXPECT_EQ(memo::oracle::operation_of("TimeDistributed"), "ReLU");
    EXPECT_EQ(memo::oracle::blank_numbers("Conv3D: kernel 12 by 3D"), "ConvND: kernel # by ND");
    // A shape is one '#' whatever its rank: Keras on PyTorch fails LayerNormalization over a
    // middle axis with one message for inputs of rank 3 to 6.
    const std::string rank4 = "Given normalized_shape=[2], expected input with shape [*, 2], but got input of size[2, 1, 2, 1]";
    const std::string rank6 = "Given normalized_shape=[1], expected input with shape [*, 1], but got input of size[2, 1, 1, 1, 1, 2]";
    EXPECT_EQ(memo::oracle::blank_numbers(rank4), "Given normalized_shape=[#], expected input with shape [*, #], but got input of size[#]");
    EXPECT_EQ(memo::oracle::blank_numbers(rank4), memo::oracle::blank_numbers(rank6));
    EXPECT_EQ(memo::oracle::blank_numbers("at 2,3 and (4, 5)"), "at # and (#)");
    EXPECT_NE(memo::oracle::blank_numbers("took 2, then failed"), memo::oracle::blank_numbers("took 2 then failed"));
}

TEST(RootCause, OneFaultAcrossDimensionalitiesPaddingsAndMaxBasedLayersIsOne) {
    const auto pool1 = one_layer("MaxPooling1D", {8, 3}, {{"pool_size", {2}}, {"padding", "valid"}}, {4, 3});
    const auto pool2 = one_layer("MaxPooling2D", {6, 6, 3}, {{"pool_size", {2, 2}}, {"padding", "same"}}, {3, 3, 3});
    const auto global = one_layer("GlobalMaxPooling1D", {8, 3}, memo::io::json::object(), {3});
    const auto relu = one_layer("ReLU", {8, 3}, memo::io::json::object(), {8, 3});
    const std::string cause = memo::oracle::root_cause(lost_nan("MaxPooling1D"), pool1);
    EXPECT_TRUE(cause.starts_with("max-")) << cause;
    EXPECT_EQ(memo::oracle::root_cause(lost_nan("MaxPooling2D"), pool2), cause);
    EXPECT_EQ(memo::oracle::root_cause(lost_nan("GlobalMaxPooling1D"), global), cause);
    EXPECT_EQ(memo::oracle::root_cause(lost_nan("ReLU"), relu), cause);
    // Their signatures tell them apart.
    EXPECT_NE(memo::oracle::signature(lost_nan("MaxPooling1D"), pool1), memo::oracle::signature(lost_nan("MaxPooling2D"), pool2));
}

TEST(RootCause, AnotherKindCulpritDtypeOrMessageIsAnother) {
    const auto pool = one_layer("MaxPooling1D", {8, 3}, {{"pool_size", {2}}}, {4, 3});
    const std::string cause = memo::oracle::root_cause(lost_nan("MaxPooling1D"), pool);
    EXPECT_NE(memo::oracle::root_cause(lost_nan("MaxPooling1D", "ort-opt"), pool), cause);
    EXPECT_NE(memo::oracle::root_cause(lost_nan("MaxPooling1D"), one_layer("MaxPooling1D", {8, 3}, {{"pool_size", {2}}}, {4, 3}, "float16")), cause);
    auto made = lost_nan("MaxPooling1D");
    made.message.clear();  // NaN made where the reference is finite: pooling is then itself, not "max"
    EXPECT_TRUE(memo::oracle::root_cause(made, pool).starts_with("MaxPooling-"));
    auto wrong = lost_nan("MaxPooling1D");
    wrong.what = memo::oracle::kind::inconsistency;
    wrong.message.clear();
    EXPECT_NE(memo::oracle::root_cause(wrong, pool), memo::oracle::root_cause(made, pool));
    auto crash = wrong;
    crash.what = memo::oracle::kind::crash;
    crash.details = memo::oracle::failed_run{memo::run_status::error};
    crash.message = "Conv1D: kernel size 3 exceeds input 2";
    auto crash3d = crash;
    crash3d.message = "Conv3D: kernel size 5 exceeds input 4";
    EXPECT_EQ(memo::oracle::root_cause(crash, pool), memo::oracle::root_cause(crash3d, pool));
    crash3d.message = "Conv3D: out of memory";
    EXPECT_NE(memo::oracle::root_cause(crash, pool), memo::oracle::root_cause(crash3d, pool));
    // A crash's dtype is in its text where it matters: the same refusal in float16 is the same fault.
    const auto pool16 = one_layer("MaxPooling1D", {8, 3}, {{"pool_size", {2}}}, {4, 3}, "float16");
    EXPECT_EQ(memo::oracle::root_cause(crash, pool16), memo::oracle::root_cause(crash, pool));
    auto half = crash;
    half.message = "\"max_pool1d\" not implemented for 'Half'";
    EXPECT_NE(memo::oracle::root_cause(half, pool16), memo::oracle::root_cause(crash, pool16));
}

// A metamorphic verdict names the relation that met the fault: TensorFlow's softmax refusing rank
// 6 under three relations is one fault.
TEST(RootCause, OneFaultUnderSeveralMetamorphicRelationsIsOne) {
    const auto softmax = one_layer("Softmax", {8, 3}, memo::io::json::object(), {8, 3});
    memo::oracle::verdict v;
    v.what = memo::oracle::kind::metamorphic;
    v.details = memo::oracle::relation_broken{{}, memo::run_status::error};
    v.culprits = {"keras-tensorflow"};
    v.node = 1;
    v.layer = "Softmax";
    v.message = "relation triangle: the variant fails, the model runs: AbortedError: Input dims must be <= 5 and >=1 [Op:Softmax]";
    auto other = v;
    other.message = "relation squared-difference: the variant fails, the model runs: AbortedError: Input dims must be <= 5 and >=1 [Op:Softmax]";
    EXPECT_EQ(memo::oracle::root_cause(v, softmax), memo::oracle::root_cause(other, softmax));
    other.message = "relation squared-difference: the variant fails, the model runs: no result within 10000 ms";
    EXPECT_NE(memo::oracle::root_cause(v, softmax), memo::oracle::root_cause(other, softmax));
    EXPECT_EQ(memo::oracle::without_relation("relation triangle: the variant fails"), "the variant fails");
    EXPECT_EQ(memo::oracle::without_relation("Conv2D: out of memory"), "Conv2D: out of memory");
}

TEST(RootCause, TheBugStoreWritesAndCountsRootCausesAndRunsTheReproducerHook) {
    const auto dir = std::filesystem::temp_directory_path() / ("memo-root-cause-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    {
        memo::store::bug_store bugs(dir);
        std::vector<std::string> written_into;
        for (const auto& [layer, out] :
             std::vector<std::pair<std::string, std::vector<std::int64_t>>>{{"MaxPooling1D", {4, 3}}, {"GlobalMaxPooling1D", {3}}, {"Softmax", {8, 3}}}) {
            memo::store::bug_report b;
            b.original = b.minimal = one_layer(layer, {8, 3}, memo::io::json::object(), out);
            b.v = lost_nan(layer);
            b.signature = memo::oracle::signature(b.v, b.minimal);
            b.reproduce = [&](const std::filesystem::path& repro) {
                std::filesystem::create_directories(repro);
                // It waits for the test's word, so that "running" is seen before it ends.
                memo::io::write_file((repro / "repro_ort.sh").string(),
                                     "while [ ! -e '" + (dir / "go").string() + "' ]; do sleep 0.01; done\necho differs\nexit 1\n");
                written_into.push_back(repro.string());
                memo::oracle::reproducers_written r;
                r.v = b.v;
                // Written, not run: the store runs it from the bug's folder once the bug is in place.
                memo::oracle::reproducer_written w;
                w.backend = "ort", w.script = (repro / "repro_ort.sh").string(), w.written = true;
                w.argv = {"/bin/sh", "repro_ort.sh"};
                r.culprits.push_back(w);
                return r;
            };
            EXPECT_TRUE(bugs.record(b, {"reference", "ort"}));
            EXPECT_EQ(bugs.all().at("nan/" + b.signature).at("reproducers").at("ort").at("said"), "running");
        }
        EXPECT_GT(bugs.reproducers_running(), 0u);
        memo::io::write_file((dir / "go").string(), "");
        bugs.wait_reproducers();
        EXPECT_EQ(bugs.reproducers_running(), 0u);
        EXPECT_EQ(bugs.unique(), 3u);
        EXPECT_EQ(bugs.root_causes().size(), 2u);  // the two max poolings are one
        ASSERT_EQ(written_into.size(), 3u);
        EXPECT_EQ(written_into[0].find(dir.string() + "/bugs/nan/MaxPooling1D"), std::string::npos);  // written before the bug is in place
    }
    memo::store::bug_store reloaded(dir);
    EXPECT_EQ(reloaded.root_causes().size(), 2u);
    for (const auto& [key, j] : reloaded.all()) {
        EXPECT_TRUE(j.contains("root_cause")) << key;
        EXPECT_EQ(j.at("reproducers").at("ort").at("script"), "repro/repro_ort.sh") << key;
        EXPECT_EQ(j.at("reproducers").at("ort").at("said"), "shows the fault (exit 1): differs") << key;
        EXPECT_EQ(j.at("reproducers").at("ort").at("shows"), true) << key;
        EXPECT_TRUE(std::filesystem::exists(reloaded.dir_of(key) / "repro" / "repro_ort.out")) << key;  // what it printed
    }
    std::filesystem::remove_all(dir);
}

}  // namespace test_oracle_root_cause_test
