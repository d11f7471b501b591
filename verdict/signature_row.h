// One row of the catalogue (verdict/signatures.h): its id, when it applies (the error's code and words, and the
// facts that must agree), its cause and its next action, each fixed text or made from the facts, and its
// machine-readable action (verdict/actions.h): one word, or a rule choosing among the words it names.
#pragma once
#include <string>
#include <vector>

#include "signatures.h"

namespace kd::signature {

struct Symptom {
  Code code;
  const std::string& message;
  const SignatureFacts& facts;
  const MachineFacts& machine() const { return facts.machine; }
  bool says(const char* phrase) const { return mentions(message, phrase); }
  bool says_any(std::initializer_list<const char*> phrases) const {
    for (const char* p : phrases)
      if (says(p)) return true;
    return false;
  }
};

struct Text {
  const char* fixed = nullptr;
  std::string (*made)(const Symptom&) = nullptr;
  Text(const char* text) : fixed(text) {}                          // NOLINT: a row's fixed text
  Text(std::string (*make)(const Symptom&)) : made(make) {}        // NOLINT: a row's text made from the facts
  std::string operator()(const Symptom& s) const { return made ? made(s) : std::string(fixed); }
};

// The action column: one word, or a rule that chooses among the words it lists (docs/signatures.md shows them all).
struct ActionColumn {
  std::vector<Action> possible;
  Action (*made)(const Symptom&) = nullptr;
  ActionColumn(Action a) : possible{a} {}  // NOLINT: a row's fixed action
  ActionColumn(Action (*make)(const Symptom&), std::initializer_list<Action> among) : possible(among), made(make) {}
  Action operator()(const Symptom& s) const { return made ? made(s) : possible.front(); }
};

struct Row {
  const char* id;
  bool (*matches)(const Symptom&);
  Text cause;
  Text action;  // the next action, for a person
  ActionColumn kind;  // the action's word, for automation
};

// The rows of the application's own failures in L4 (verdict/app_signatures.cpp): its model file, its extension
// libraries, inputs on the wrong device, precision mismatches.
const std::vector<Row>& app_rows();

}  // namespace kd::signature
