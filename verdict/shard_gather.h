// L4 across GPUs, torch-free and unit-tested: the input ids split over the devices as a
// data-parallel job splits them (contiguous blocks, the first ones one longer when the count does
// not divide), then each shard's outputs gathered back on the host and checked: every id exactly
// once (none lost, none doubled, none foreign), the input order restored, and the gathered
// result equal to the single-device result within the tolerance. A shard that failed is named
// by its device: "GPU 1", or in the CPU's test-only shards "CPU shard 1" (unit).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kd::shard {

struct Shard {
  int device = 0;
  std::vector<int64_t> ids;  // in input order
};
// devices: the GPUs (or, in the tests, the CPU shards' numbers), in order; never empty.
std::vector<Shard> split(const std::vector<int64_t>& ids, const std::vector<int>& devices);

struct ShardOutput {
  int device = 0;
  std::optional<std::string> error;      // the shard failed (e.g. out of memory): its message
  std::vector<int64_t> ids;              // the ids it returned, in its own order
  std::vector<std::vector<double>> rows; // one output row per returned id
};

struct Violation {
  std::string rule;           // "shard_failed", "lost", "doubled", "foreign", "shape", "mismatch"
  std::string message;        // names the id and the device
  std::optional<int> device;  // the device at fault, when one is
};

struct Gathered {
  std::vector<std::vector<double>> rows;  // in the input ids' order (complete only without a violation)
  std::optional<Violation> violation;     // the first rule broken
};
Gathered gather(const std::vector<int64_t>& ids, const std::vector<ShardOutput>& outputs, const std::string& unit = "GPU");

// The gathered rows against the single-device rows, id by id: |a - b| <= atol + rtol * |b|.
// owner: the device each id was sent to (split()'s), to name it.
std::optional<Violation> compare(const std::vector<int64_t>& ids, const std::vector<std::vector<double>>& gathered,
                                 const std::vector<std::vector<double>>& single, const std::vector<Shard>& shards,
                                 double atol, double rtol, const std::string& unit = "GPU");

}  // namespace kd::shard
