// Declarations only: see probe/gloo_names/README.md. ProcessGroupGloo::GlooStore overrides these
// (GLOO_STORE_HAS_STORE_V2 stays undefined, so its newer overrides are left out); the probe never
// constructs a GlooStore, so this interface only has to compile.
#pragma once
#include <chrono>
#include <string>
#include <vector>

namespace gloo::rendezvous {
class Store {
 public:
  virtual ~Store() = default;
  virtual void set(const std::string& key, const std::vector<char>& data) = 0;
  virtual std::vector<char> get(const std::string& key) = 0;
  virtual void wait(const std::vector<std::string>& keys) = 0;
  virtual void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) = 0;
};
}  // namespace gloo::rendezvous
