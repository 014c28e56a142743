// docs/language.md is the `.pipe` language reference; its examples are checked here so that it
// cannot drift from what the parser and the engine accept. Every fenced block whose info string
// starts with `pipe` must parse, unless marked:
//   ```pipe check=ok          `parity check` exits 0
//   ```pipe check=M1005       `parity check` exits 1 and reports that code (no dot in it)
//   ```pipe check=eval.x      `parity check` exits 2 with error[eval.x] (a rule has a dot)
//   ```pipe error=parse.x     parsing fails with exactly that rule
// and every `# expect:` line of a checked block must be reported as matched. A second test
// requires every parse.* rule named in the parser's sources (sim/ir/parser*) to appear in the
// reference.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/ir/parser.h"
#include "tests/tools/cli_runner.h"

namespace parity {
namespace {

std::string ReadRunfile(const std::string& path) {
  std::ifstream in(testing::Runfile(path), std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Block {
  std::string info;  // after "pipe"
  std::string text;
  int line = 0;      // of the opening fence in the document
};

std::vector<Block> PipeBlocks(const std::string& doc) {
  std::vector<Block> out;
  std::istringstream in(doc);
  std::string l;
  int n = 0;
  Block* open = nullptr;
  bool in_other = false;
  while (std::getline(in, l)) {
    ++n;
    if (open != nullptr) {
      if (l == "```") {
        open = nullptr;
      } else {
        open->text += l + "\n";
      }
      continue;
    }
    if (in_other) {
      if (l == "```") in_other = false;
      continue;
    }
    if (l.rfind("```pipe", 0) == 0) {
      out.push_back(Block{l.substr(7), "", n});
      open = &out.back();
    } else if (l.rfind("```", 0) == 0) {
      in_other = true;
    }
  }
  EXPECT_EQ(open, nullptr) << "unclosed ```pipe block";
  return out;
}

// The value of `key=` in a fence info string, "" if absent.
std::string Attr(const std::string& info, const std::string& key) {
  std::smatch m;
  if (std::regex_search(info, m, std::regex("(^|\\s)" + key + "=(\\S+)"))) return m[2];
  return "";
}

std::string TempFile(int line, const std::string& text) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path =
      std::string(dir != nullptr ? dir : "/tmp") + "/language_md_line" + std::to_string(line) + ".pipe";
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(LanguageReference, EveryPipeBlockHasItsStatedOutcome) {
  const std::string doc = ReadRunfile("docs/language.md");
  const std::vector<Block> blocks = PipeBlocks(doc);
  ASSERT_GE(blocks.size(), 30u) << "the reference lost its examples";
  int checked = 0, errors = 0, expects = 0;
  for (const Block& b : blocks) {
    SCOPED_TRACE("docs/language.md:" + std::to_string(b.line) + " (```pipe" + b.info + ")");
    const std::string error = Attr(b.info, "error");
    const std::string check = Attr(b.info, "check");
    const std::string file = "docs/language.md:" + std::to_string(b.line);
    auto parsed = ir::ParseProgram(b.text, file);
    if (!error.empty()) {
      ++errors;
      ASSERT_FALSE(parsed.ok()) << "expected rule " << error << ", but the block parses";
      EXPECT_EQ(parsed.status().rule(), error) << parsed.status().ToString();
      continue;
    }
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    if (check.empty()) continue;
    ++checked;
    const testing::CliResult r = testing::RunParity({"check", TempFile(b.line, b.text)});
    const std::string all = r.out + r.err;
    if (check == "ok") {
      EXPECT_EQ(r.exit_code, 0) << all;
    } else if (check.find('.') != std::string::npos) {
      EXPECT_EQ(r.exit_code, 2) << all;
      EXPECT_NE(all.find("error[" + check + "]"), std::string::npos) << all;
    } else {
      EXPECT_EQ(r.exit_code, 1) << all;
      EXPECT_NE(r.out.find(check), std::string::npos) << all;
    }
    // Each `# expect:` line of the default mode (check, eager) is printed with its verdict.
    size_t want = 0, matched = 0;
    std::istringstream lines(b.text);
    for (std::string l; std::getline(lines, l);) {
      if (l.find("# expect:") == std::string::npos) continue;
      ++expects;
      if (l.find(" explore") == std::string::npos && l.find("policy=") == std::string::npos) ++want;
    }
    for (size_t at = all.find("\u2014 matched"); at != std::string::npos;
         at = all.find("\u2014 matched", at + 1)) {
      ++matched;
    }
    EXPECT_EQ(matched, want) << all;
    EXPECT_EQ(all.find("NOT matched"), std::string::npos) << all;
  }
  EXPECT_GE(checked, 15);
  EXPECT_GE(errors, 10);
  EXPECT_GE(expects, 2);
}

TEST(LanguageReference, EveryParseRuleIsDocumented) {
  const std::string doc = ReadRunfile("docs/language.md");
  // Every source of the parser (//sim/ir:parser_sources: sim/ir/parser*.cc and .h).
  std::vector<std::string> sources;
  for (const auto& entry : std::filesystem::directory_iterator(testing::Runfile("sim/ir"))) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("parser", 0) == 0) sources.push_back("sim/ir/" + name);
  }
  ASSERT_NE(std::find(sources.begin(), sources.end(), "sim/ir/parser.cc"), sources.end());
  std::map<std::string, std::string> rules;  // rule -> a source that names it
  const std::regex rule_re("\"(parse(\\.[a-z-]+)?)\"");
  for (const std::string& source : sources) {
    const std::string text = ReadRunfile(source);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), rule_re);
         it != std::sregex_iterator(); ++it) {
      rules.emplace((*it)[1], source);
    }
  }
  ASSERT_GE(rules.size(), 10u) << "the rule scan found too little; did the parser's form change?";
  for (const auto& [rule, source] : rules) {
    // Listed in the rules table (§12) as `| `rule` |`.
    EXPECT_NE(doc.find("| `" + rule + "` |"), std::string::npos)
        << "rule " << rule << " of " << source << " is not in the table of docs/language.md §12";
  }
}

// The reference's example fences are what the first test reads: a misspelt marker would make a
// block silently parse-only.
TEST(LanguageReference, FenceMarkersAreKnown) {
  for (const Block& b : PipeBlocks(ReadRunfile("docs/language.md"))) {
    std::istringstream in(b.info);
    std::string word;
    while (in >> word) {
      EXPECT_TRUE(word.rfind("check=", 0) == 0 || word.rfind("error=", 0) == 0)
          << "docs/language.md:" << b.line << ": unknown fence marker `" << word << "`";
    }
  }
}

}  // namespace
}  // namespace parity
