// The L4 embeddings workload's input set, shared by L4 (its contract) and L6 (its timing).
#pragma once
#include <algorithm>

#include "probe/probe_api.h"

namespace kd {

inline kd_app_embed_in embeddings_input(bool on_gpu, int index) {
  kd_app_embed_in in{};
  in.on_gpu = on_gpu;
  in.index = index;
  const int64_t ids[] = {101, 102, 103, 104, 105, 106, 107, 108};
  const int lengths[] = {5, 64, 17, 1, 33, 64, 9, 48};  // varied, up to the maximum 64
  in.count = 8;
  std::copy(ids, ids + 8, in.ids);
  std::copy(lengths, lengths + 8, in.lengths);
  in.batch_size = 4;
  in.rebatch_size = 3;
  return in;
}

}  // namespace kd
