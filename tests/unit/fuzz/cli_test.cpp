// The command line: each option declared once parses, defaults, refuses and documents alike.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include <memo/fuzz/main.hpp>

namespace cli = memo::fuzz::cli;

namespace {
cli::options sample_options() {
    return {cli::valued("seconds", "S", "time limit", "60"), cli::flag("json", "machine-readable output"), cli::heading("more"),
            cli::valued("out", "DIR", "where to write")};
}
}  // namespace

TEST(Cli, AnAbsentOptionReadsItsDeclaredDefault) {
    const cli::args none({"FILE"}, sample_options());
    EXPECT_EQ(none.value("seconds"), "60");
    EXPECT_EQ(none.number("seconds"), 60.0);
    EXPECT_FALSE(none.has("json"));
    EXPECT_FALSE(none.get("out"));
    EXPECT_EQ(none.positional(), std::vector<std::string>{"FILE"});
    const cli::args given({"--seconds", "5", "--json", "--out=x"}, sample_options());
    EXPECT_EQ(given.count("seconds"), 5u);
    EXPECT_TRUE(given.has("json"));
    EXPECT_EQ(given.value("out"), "x");
}

TEST(Cli, AnUndeclaredOrMalformedOptionIsAClearError) {
    try {
        cli::args({"--bogus"}, sample_options());
        FAIL() << "an undeclared option passed";
    } catch (const memo::error& e) {
        EXPECT_STREQ(e.what(), "unknown option --bogus");
    }
    EXPECT_THROW(cli::args({"--seconds"}, sample_options()), memo::error);  // no value
    EXPECT_THROW(cli::args({"--seconds", "-1"}, sample_options()).count("seconds"), memo::error);
    EXPECT_THROW(cli::args({"--seconds", "2x"}, sample_options()).number("seconds"), memo::error);
    EXPECT_THROW(cli::args({}, sample_options()).value("resume"), memo::error);  // read but never declared
    EXPECT_NO_THROW(cli::args({"--help"}, sample_options()));
}

TEST(Cli, HelpListsEachOptionWithItsDefaultUnderItsHeading) {
    const auto h = cli::options_help(sample_options());
    EXPECT_NE(h.find("  --seconds S  "), std::string::npos) << h;
    EXPECT_NE(h.find("time limit (default 60)"), std::string::npos) << h;
    EXPECT_LT(h.find("--json"), h.find("\nmore:\n")) << h;
    EXPECT_LT(h.find("\nmore:\n"), h.find("--out DIR")) << h;
    for (std::size_t at = 0, nl; at < h.size(); at = nl + 1) {
        nl = h.find('\n', at);
        if (nl == std::string::npos) nl = h.size();
        EXPECT_LE(nl - at, 100u) << h.substr(at, nl - at);
    }
}

// Every command of memo-fuzz: the options its synopsis names are declared, each once, each with a
// help line, and its --help shows every one.
TEST(Cli, EveryCommandDeclaresEachOptionItNamesOnce) {
    const std::regex named("--([a-z0-9-]+)");
    for (const auto& c : memo::fuzz::all_commands()) {
        std::set<std::string> declared;
        for (const auto& o : c.opts) {
            if (o.name.empty()) continue;
            EXPECT_TRUE(declared.insert(o.name).second) << c.name << ": --" << o.name << " declared twice";
            EXPECT_FALSE(o.help.empty()) << c.name << ": --" << o.name;
            EXPECT_NE(c.help().find("--" + o.name), std::string::npos) << c.name << ": --" << o.name << " missing from --help";
        }
        for (std::sregex_iterator m(c.synopsis.begin(), c.synopsis.end(), named), end; m != end; ++m)
            EXPECT_TRUE(declared.count((*m)[1])) << c.name << ": the synopsis names --" << (*m)[1] << ", which is not declared";
    }
}
