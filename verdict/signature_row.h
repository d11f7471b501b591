// One row of the catalogue (verdict/signatures.h): its id, when it applies (the error's code and words, and the
// facts that must agree), its cause and its next action, each fixed text or made from the facts. A row is data:
// another column (a machine-readable action) fits beside these.
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

struct Row {
  const char* id;
  bool (*matches)(const Symptom&);
  Text cause;
  Text action;
};

// The rows of the application's own failures in L4 (verdict/app_signatures.cpp): its model file, its extension
// libraries, inputs on the wrong device, precision mismatches.
const std::vector<Row>& app_rows();

}  // namespace kd::signature
