// Turns whatever LibTorch throws into a kd_status: the first line of the message,
// without the backtrace, classified as out-of-memory or another runtime error.
#pragma once
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>

#include "probe_api.h"

namespace kd::probe {

inline kd_status ok_status() {
  kd_status s{};
  s.kind = KD_OK;
  return s;
}

// The line that says what went wrong: the first, except for TorchScript, whose first line only
// says that the interpreter failed and whose last "...Error: ..." line says why.
inline std::string summary_line(const std::string& text) {
  const size_t begin = std::min(text.find_first_not_of("\n\r "), text.size());  // some messages start with a newline
  const std::string first = text.substr(begin, text.find('\n', begin) - begin);
  if (first.rfind("The following operation failed in the TorchScript interpreter", 0) != 0) return first;
  std::string why;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    const size_t colon = line.find("Error: ");
    if (colon != std::string::npos && line.find(' ') > colon) why = line;  // "RuntimeError: ..." at the line's start
    start = end + 1;
  }
  return why.empty() ? first : why;
}

// TorchScript's failing operation: the code the last "~~~ <--- HERE" marks ("torch.embedding"); "" when none.
inline std::string failing_operation(const std::string& text) {
  std::string previous, op;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    const size_t tilde = line.find('~'), here = line.find("<--- HERE");
    if (tilde != std::string::npos && here != std::string::npos && tilde < previous.size())
      op = previous.substr(tilde, line.find_first_not_of('~', tilde) - tilde);
    previous = line;
    start = end + 1;
  }
  return op;
}

inline kd_status make_status(int kind, const std::string& text) {
  kd_status s{};
  s.kind = kind;
  const std::string first = summary_line(text);
  std::strncpy(s.message, first.c_str(), sizeof(s.message) - 1);
  return s;
}

inline bool looks_like_oom(const std::string& m) {
  return m.find("out of memory") != std::string::npos || m.find("can't allocate memory") != std::string::npos ||
         m.find("not enough memory") != std::string::npos;
}

// Call fn(); map exceptions to a status. Never lets an exception cross the C ABI.
template <class Fn>
kd_status guarded(Fn&& fn) {
  try {
    fn();
    return ok_status();
  } catch (const c10::Error& e) {
    const std::string m = e.what_without_backtrace();
    return make_status(looks_like_oom(m) ? KD_ERR_OUT_OF_MEMORY : KD_ERR_RUNTIME, m);
  } catch (const std::bad_alloc& e) {
    return make_status(KD_ERR_OUT_OF_MEMORY, e.what());
  } catch (const std::exception& e) {
    const std::string m = e.what();
    return make_status(looks_like_oom(m) ? KD_ERR_OUT_OF_MEMORY : KD_ERR_RUNTIME, m);
  } catch (...) {
    return make_status(KD_ERR_RUNTIME, "unknown exception");
  }
}

inline void copy_to(char* dst, size_t cap, const std::string& src) {
  std::strncpy(dst, src.c_str(), cap - 1);
  dst[cap - 1] = '\0';
}

}  // namespace kd::probe
