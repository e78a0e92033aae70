// A reproducer exits 1 while its fault shows, and Python and Node exit 1 on an error nobody catches
// too: each worker's command runs its script under a harness (tools/reproducing.py,
// tools/reproducing.js) that makes the script's own failure (a layer it cannot build) exit 2, and
// memo's runner (oracle/reproducers.hpp) tells the three apart, so that a script that fails on its
// own is never called a bug shown. (Node's harness is here too: it needs no package of its own.)
#include <memo/oracle/reproducers.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "../unit/support.hpp"

namespace test_keras_reproducer_harness_test {

namespace {

namespace fs = std::filesystem;

std::string output_of(const std::string& command) {
    std::string out;
    if (std::FILE* p = ::popen(command.c_str(), "r")) {
        char buf[4096];
        for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
        ::pclose(p);
    }
    return out;
}

/// What memo's runner says of `text`, saved as `name` and run with the command its worker gives.
std::string said(const std::string& name, const std::string& text) {
    const fs::path dir = fs::absolute("reproducer_harness");
    fs::create_directories(dir);
    const fs::path script = dir / name;
    std::ofstream(script) << text;
    const std::string tools = MEMO_SOURCE_DIR "/tools";
    const std::string answer =
        name.ends_with(".py") ? output_of(MEMO_SOURCE_DIR "/.venv/bin/python -c 'import sys; sys.path.insert(0, \"" + tools +
                                          "\"); import reproducing; print(reproducing.command(sys.argv[1]))' " + script.string())
                              : output_of("node -e 'console.log(require(\"" + tools + "/reproducing.js\").command(process.argv[1], \"\"))' " + script.string());
    memo::oracle::reproducer_written w;
    if (!memo::oracle::read_reproducer_command(answer, w)) return "no command: " + answer;
    memo::oracle::reproducer_process p(w);
    p.wait();
    EXPECT_TRUE(fs::exists(fs::path(script).replace_extension(".out"))) << name << ": its output is kept beside it";
    return p.said();
}

TEST(KerasReproducerHarness, ExitOneShowsZeroDoesNotAndTheScriptsOwnFailureFails) {
    if (!fs::exists(MEMO_SOURCE_DIR "/.venv/bin/python")) GTEST_SKIP() << "no .venv (scripts/setup.sh makes it)";
    EXPECT_EQ(said("shows.py", "import sys\nprint('differs')\nsys.exit(1)\n"), "shows the fault (exit 1): differs");
    EXPECT_EQ(said("passes.py", "print('the model runs')\n"), "does not show the fault (exit 0): the model runs");
    EXPECT_EQ(said("breaks.py", "raise ValueError('No such layer: conv2d')\n"), "fails (exit 2): ValueError: No such layer: conv2d");
    EXPECT_EQ(said("shows.js", "console.log('differs');\nprocess.exit(1);\n"), "shows the fault (exit 1): differs");
    EXPECT_EQ(said("passes.js", "console.log('the model runs');\n"), "does not show the fault (exit 0): the model runs");
    EXPECT_EQ(said("breaks.js", "throw new Error('No such layer: conv2d');\n"), "fails (exit 2): Error: No such layer: conv2d");
    EXPECT_EQ(said("breaks_later.js", "(async () => { await null; throw new Error('late'); })();\n"), "fails (exit 2): Error: late");
}

}  // namespace

}  // namespace test_keras_reproducer_harness_test
