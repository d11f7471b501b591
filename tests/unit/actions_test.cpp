// The machine-readable actions (verdict/actions.h, docs/fleets.md "Actions"): every failing code and every signature
// has one from the vocabulary, the docs show exactly the words the code gives (README's code table,
// docs/signatures.md's action column), and a report carries the signature's word, else its code's.
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "contract/report_fields.h"
#include "reporters/report_builder.h"
#include "verdict/actions.h"
#include "verdict/codes.h"
#include "verdict/signatures.h"

namespace kd {
namespace {

std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::stringstream in(row.substr(1));
  for (std::string cell; std::getline(in, cell, '|');) {
    const size_t b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
  }
  return out;
}

// The `words` of a cell, in order.
std::vector<std::string> quoted_words(const std::string& cell) {
  std::vector<std::string> out;
  for (size_t at = cell.find('`'); at != std::string::npos; at = cell.find('`', at + 1)) {
    const size_t end = cell.find('`', at + 1);
    if (end == std::string::npos) break;
    out.push_back(cell.substr(at + 1, end - at - 1));
    at = end;
  }
  return out;
}

// The table rows of a Markdown file whose header has these cells.
std::vector<std::vector<std::string>> table(const char* path, const std::vector<std::string>& header) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::vector<std::vector<std::string>> rows;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("|", 0) != 0) {
      inside = false;
      continue;
    }
    std::vector<std::string> c = cells(line);
    if (c == header) {
      inside = true;
      continue;
    }
    if (inside && line.rfind("|---", 0) != 0) rows.push_back(c);
  }
  return rows;
}

TEST(Actions, TheVocabularyIsFixedAndTheNodeWordsAreTheThree) {
  std::vector<std::string> words, node;
  for (const auto& a : action_vocabulary()) {
    words.push_back(std::string(a.word));
    EXPECT_EQ(action_from_word(a.word), a.action);
    EXPECT_FALSE(a.meaning.empty());
    if (a.node_at_fault) node.push_back(std::string(a.word));
  }
  EXPECT_EQ(words, (std::vector<std::string>{"rerun", "fix_command", "fix_install", "fix_environment", "fix_model",
                                             "triage", "reset_gpu", "drain_node", "replace_gpu"}));
  EXPECT_EQ(node, (std::vector<std::string>{"reset_gpu", "drain_node", "replace_gpu"}));
  EXPECT_FALSE(action_from_word("drain"));
  EXPECT_EQ(more_severe(Action::ResetGpu, Action::DrainNode), Action::DrainNode);
  EXPECT_EQ(more_severe(Action::ReplaceGpu, Action::DrainNode), Action::ReplaceGpu);
}

// Every failing code has its own action, a pass none; the ones a drain must never follow are not the node's.
TEST(Actions, EveryFailingCodeHasOneAndTheReadmeShowsIt) {
  std::map<std::string, std::string> readme;  // code name -> its action cell's word
  for (const auto& row : table(KD_README, {"code", "exit", "meaning", "next action", "action"})) {
    ASSERT_EQ(row.size(), 5u);
    std::stringstream names(row[0]);
    const std::vector<std::string> words = quoted_words(row[4]);
    size_t k = 0;
    for (std::string name; std::getline(names, name, '/'); ++k) {
      name = cells("|" + name + "|")[0];
      readme[name] = row[4] == "—" ? "—" : k < words.size() ? words[k] : "?";
    }
  }
  ASSERT_FALSE(readme.empty());
  for (int c = 0; c <= static_cast<int>(Code::SuiteIncomplete); ++c) {
    const CodeInfo& i = info(static_cast<Code>(c));
    SCOPED_TRACE(std::string(i.name));
    EXPECT_EQ(i.action.has_value(), !is_pass(i.code));
    for (Code never : {Code::UsageError, Code::OutputWriteFailed, Code::SuiteIncomplete})
      if (i.code == never) EXPECT_FALSE(node_at_fault(*i.action));
    const auto it = readme.find(std::string(i.name));
    if (it == readme.end()) continue;  // a code the table does not list yet
    EXPECT_EQ(it->second, i.action ? std::string(action_word(*i.action)) : "—");
  }
  EXPECT_TRUE(readme.count("GPU_UNHEALTHY"));
}

// docs/signatures.md's action column names the words each signature may give, no more and no fewer.
TEST(Actions, EverySignatureHasItsActionsAndTheDocsShowThem) {
  std::map<std::string, std::vector<std::string>> documented;
  for (const auto& header : {std::vector<std::string>{"id", "symptom (the words)", "facts that confirm it", "cause",
                                                      "next action", "action", "test"}})
    for (const auto& row : table(KD_SIGNATURES_DOC, header)) documented[quoted_words(row[0]).at(0)] = quoted_words(row[5]);
  for (const auto& [id, actions] : signature_actions()) {
    SCOPED_TRACE(id);
    ASSERT_FALSE(actions.empty());
    std::vector<std::string> words;
    for (Action a : actions) words.push_back(std::string(action_word(a)));
    EXPECT_EQ(documented[id], words);
  }
}

// A signature's word replaces the code's; a failure no signature explains keeps its code's; a pass has no error.
TEST(Actions, TheReportCarriesTheSignaturesWordElseTheCodes) {
  nlohmann::json r = nlohmann::json::object();
  set_verdict(&r, Code::GpuUnhealthy, "L2.health", "NVML reports GPU 0: a row remapping failed");
  EXPECT_EQ(report::read(r, report::error_action), "reset_gpu");  // the code's own, before any diagnosis
  set_verdict(&r, Code::OutputWriteFailed, "report", "exists");
  EXPECT_EQ(report::read(r, report::error_action), "fix_command");
  set_verdict(&r, Code::GpuCheckPassed, "", "");
  EXPECT_TRUE(report::read(r, report::error).is_null());
  SignatureFacts f;
  const auto d = diagnose(Code::GpuUnhealthy, "NVML reports GPU 0 (x): a row remapping failed (...)", f);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, Action::ReplaceGpu);
  f.machine.in_container = true;
  f.machine.kernel_driver = "580.95.05";
  EXPECT_EQ(diagnose(Code::GpuUnavailable, "Found no NVIDIA driver on your system", f)->kind, Action::FixEnvironment);
  f.machine.in_container = false;
  f.machine.device_nodes = 2;
  EXPECT_EQ(diagnose(Code::GpuUnavailable, "Found no NVIDIA driver on your system", f)->kind, Action::DrainNode);
  EXPECT_EQ(diagnose(Code::PerformanceBelowFloor, "all-reduce bus bandwidth 1.00 GB/s ... below", f)->kind, Action::Triage);
  EXPECT_EQ(diagnose(Code::PerformanceBelowFloor, "copy 1.2 TB/s is 0.25 of the H200's", f)->kind, Action::DrainNode);
}

}  // namespace
}  // namespace kd
