// Layer L6 under load (docs/layers.md "L6 under load"): the host link's copies, the sustained matrix products with
// their bitwise comparison (silent data corruption), and the memory integrity pass. Device-generic ATen only: the
// same code runs on a GPU and, as the CPU's stand-in, on host memory; the device is synchronized through
// device_ops.h (probe_ceilings_cuda.cpp on a CUDA build).
#include <ATen/core/Tensor.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/bitwise_left_shift.h>
#include <ATen/ops/bitwise_right_shift.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/zeros.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "device_ops.h"
#include "elapsed.h"
#include "probe_app.h"
#include "probe_status.h"
#include "start_line.h"

namespace kd::probe {
namespace {

at::Device device_of(int on_gpu, int index) {
  return on_gpu ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(index)) : at::Device(at::kCPU);
}

void sync(int on_gpu, int index) {
  if (on_gpu) synchronize_or_throw(index);  // CPU work is complete when it returns
}

double seconds_since(std::chrono::steady_clock::time_point t0) { return ms_since(t0) / 1000.0; }

// Runs fn (whose tensors are gone when it returns), then on a GPU gives the cached memory back to the driver: the
// load's gigabytes are not left reserved for the steps after it.
template <class Fn>
kd_status releasing(int on_gpu, Fn&& fn) {
  kd_status s = guarded(fn);
  if (on_gpu) {
    const kd_status released = guarded([] { memory_empty_cache(); });
    if (s.kind == KD_OK) s = released;
  }
  return s;
}

// --- the sustained load ---------------------------------------------------------------------------------------

constexpr int64_t kMaxBatch = 4096;      // products between two synchronizations
constexpr int64_t kReferenceRows = 4, kReferenceCols = 256;

// Rows of `c` (the device's product) against a float64 product of the same rows of a and columns of b on the CPU.
void check_reference(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, double rtol, int which,
                     kd_sustained_out* out) {
  const int64_t cols = std::min(kReferenceCols, b.size(1));
  const at::Tensor ra = a.narrow(0, 0, kReferenceRows).to(at::kCPU).to(at::kDouble);
  const at::Tensor rb = b.narrow(1, 0, cols).to(at::kCPU).to(at::kDouble);
  const at::Tensor ref = at::mm(ra, rb);
  const at::Tensor got = c.narrow(0, 0, kReferenceRows).narrow(1, 0, cols).to(at::kCPU).to(at::kDouble);
  const at::Tensor diff = got.sub(ref).abs_();
  out->reference_bad[which] = diff.gt(ref.abs().mul_(rtol)).sum().item<int64_t>();
  out->reference_max_diff[which] = diff.max().item<double>();
  out->reference_checks = which + 1;
  out->reference_rows = kReferenceRows;
}

void check_link_args(int on_gpu, int64_t bytes, int pinned, int repeats) {
  if (bytes < 1 || repeats < 1 || repeats > KD_HOST_LINK_MAX_REPEATS)
    throw std::invalid_argument("host_link: bytes must be positive, repeats 1 to 32");
  if (pinned && !on_gpu) throw std::invalid_argument("host_link: pinned host memory needs a GPU");
}

// One device's two buffers, every page touched before the first timing.
struct LinkBuffers {
  at::Tensor host, dev;
  LinkBuffers(int on_gpu, int index, int64_t bytes, int pinned) {
    host = at::empty({bytes}, at::TensorOptions().dtype(at::kByte).pinned_memory(pinned != 0));
    dev = at::empty({bytes}, at::TensorOptions().dtype(at::kByte).device(device_of(on_gpu, index)));
    host.fill_(0x5a);
    dev.fill_(0xa5);
    sync(on_gpu, index);
  }
  // One copy, timed by the host clock with the device synchronized at both edges.
  double copy(bool to_device, int on_gpu, int index, int pinned) {
    const auto t0 = std::chrono::steady_clock::now();
    if (to_device) dev.copy_(host, pinned != 0);
    else host.copy_(dev, pinned != 0);
    sync(on_gpu, index);
    return seconds_since(t0);
  }
};

void describe_link(int on_gpu, int64_t bytes, int pinned, int repeats, const std::string& also, kd_host_link_out* out) {
  out->repeats = repeats;
  copy_to(out->desc, sizeof out->desc,
          std::string(on_gpu ? "host to device, then device to host" : "host to host (the CPU's stand-in)") + ", " +
              (pinned ? "pinned" : "pageable") + " host memory, " + std::to_string(bytes) +
              " bytes, host clock with the device synchronized at both edges, " + std::to_string(repeats) + " repeats" +
              also);
}

}  // namespace

kd_status host_link(int on_gpu, int index, int64_t bytes, int pinned, int repeats, kd_host_link_out* out) {
  return releasing(on_gpu, [&] {
    *out = kd_host_link_out{};
    check_link_args(on_gpu, bytes, pinned, repeats);
    c10::InferenceMode guard;
    LinkBuffers buffers(on_gpu, index, bytes, pinned);
    for (const bool to_device : {true, false}) {
      double* seconds = to_device ? out->to_device_s : out->to_host_s;
      for (int i = -1; i < repeats; ++i) {  // -1: the warm-up
        const double s = buffers.copy(to_device, on_gpu, index, pinned);
        if (i >= 0) seconds[i] = s;
      }
    }
    describe_link(on_gpu, bytes, pinned, repeats, "", out);
  });
}

kd_status host_links_together(int on_gpu, const int* indices, int count, int64_t bytes, int pinned, int repeats,
                              kd_host_link_out* outs) {
  return releasing(on_gpu, [&] {
    if (count < 1 || count > KD_HOST_LINKS_MAX) throw std::invalid_argument("host_links_together: 1 to 64 devices");
    check_link_args(on_gpu, bytes, pinned, repeats);
    c10::InferenceMode guard;
    std::vector<LinkBuffers> buffers;  // allocated first: a device without the memory fails before any thread waits
    for (int i = 0; i < count; ++i) {
      outs[i] = kd_host_link_out{};
      buffers.emplace_back(on_gpu, indices[i], bytes, pinned);
    }
    StartLine line(count);
    std::vector<std::exception_ptr> errors(static_cast<size_t>(count));
    std::vector<std::thread> threads;
    for (int i = 0; i < count; ++i)
      threads.emplace_back([&, i] {
        try {
          c10::InferenceMode thread_guard;  // thread-local
          for (const bool to_device : {true, false}) {
            double* seconds = to_device ? outs[i].to_device_s : outs[i].to_host_s;
            for (int r = -1; r < repeats; ++r) {  // -1: the warm-up
              if (!line.arrive_and_wait()) return;
              const double s = buffers[static_cast<size_t>(i)].copy(to_device, on_gpu, indices[i], pinned);
              if (r >= 0) seconds[r] = s;
            }
          }
          describe_link(on_gpu, bytes, pinned, repeats,
                        count > 1 ? ", " + std::to_string(count) + " devices at once, every repeat started together" : "",
                        &outs[i]);
        } catch (...) {
          errors[static_cast<size_t>(i)] = std::current_exception();
          line.leave();
        }
      });
    for (std::thread& t : threads) t.join();
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
  });
}

kd_status sustained(const kd_sustained_in* in, kd_sustained_out* out, kd_point_sink point, void* user) {
  return releasing(in->on_gpu, [&] {
    *out = kd_sustained_out{};
    if (!(in->seconds > 0) || in->seconds > 4000 || !(in->point_seconds > 0) || in->n < 16 || in->n > 32768)
      throw std::invalid_argument("sustained: seconds must be in (0, 4000], n in [16, 32768]");
    c10::InferenceMode guard;
    const int on_gpu = in->on_gpu, index = in->index;
    const int64_t n = in->n;
    const bool bf16 = on_gpu != 0;
    const auto opts = at::TensorOptions().dtype(bf16 ? at::kBFloat16 : at::kFloat).device(device_of(on_gpu, index));
    const auto bits = bf16 ? at::kShort : at::kInt;  // the same bits as integers: a comparison that is bitwise
    const at::Tensor a = at::rand({n, n}, opts), b = at::rand({n, n}, opts);
    const at::Tensor first = at::mm(a, b);
    at::Tensor c = at::empty_like(first), diff = at::empty_like(first);
    at::Tensor flags = at::empty({n, n}, opts.dtype(at::kBool));
    at::Tensor counts = at::zeros({kMaxBatch}, opts.dtype(at::kLong)), largest = at::zeros({kMaxBatch}, opts.dtype(at::kFloat));
    const double rtol = bf16 ? 1.0 / 64 : 1e-4;  // bf16 keeps 8 significant bits; the products accumulate in float32
    out->reference_tolerance = rtol;
    check_reference(a, b, first, rtol, 0, out);
    out->flops_per_product = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    sync(on_gpu, index);

    const auto start = std::chrono::steady_clock::now();
    int64_t batch = 2, iteration = 1;  // iteration 0 is `first`
    out->first_bad_product = -1;
    while (seconds_since(start) < in->seconds) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int64_t k = 0; k < batch; ++k, ++iteration) {
        at::mm_out(c, a, b);
        if (iteration == in->corrupt_iteration)  // TEST ONLY: one bit of one element flipped, as a faulty SM would
          c.view(bits).select(0, 0).select(0, 0).bitwise_xor_(0x10);
        at::ne_out(flags, c.view(bits), first.view(bits));
        counts.select(0, k).copy_(flags.sum());
        at::sub_out(diff, c, first);
        largest.select(0, k).copy_(diff.abs_().max());
      }
      const at::Tensor host_counts = counts.narrow(0, 0, batch).to(at::kCPU);  // synchronizes
      const at::Tensor host_largest = largest.narrow(0, 0, batch).to(at::kCPU);
      const double took = seconds_since(t0);
      const int64_t* cnt = host_counts.data_ptr<int64_t>();
      for (int64_t k = 0; k < batch; ++k) {
        if (cnt[k] == 0) continue;
        if (out->bad_products++ == 0) {
          out->first_bad_product = iteration - batch + k;
          out->first_bad_elements = cnt[k];
          out->first_bad_max_diff = static_cast<double>(host_largest.data_ptr<float>()[k]);
        }
      }
      out->total_products += batch;
      if (out->points < KD_SUSTAINED_MAX_POINTS) {
        out->t_s[out->points] = seconds_since(start);
        out->products[out->points] = batch;
        ++out->points;
      }
      if (point) point(user, seconds_since(start), batch);
      // The next point's products: about point_seconds' worth at this point's pace, at most twice as many as this
      // one's (a first fast point must not make a point of seconds), and no more than the time left needs.
      const double per_product = std::max(took, 1e-6) / static_cast<double>(batch);
      const double left = in->seconds - seconds_since(start);
      const double wanted = std::min(in->point_seconds, std::max(left, per_product)) / per_product;
      batch = std::clamp<int64_t>(static_cast<int64_t>(wanted), 1, std::min<int64_t>(2 * batch, kMaxBatch));
    }
    check_reference(a, b, c, rtol, 1, out);
    copy_to(out->desc, sizeof out->desc,
            "matrix products " + std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n) + ", " +
                (bf16 ? "bf16" : "float32") + " (random), each compared bitwise with the first; rows 0-3 x columns 0-" +
                std::to_string(std::min(kReferenceCols, n) - 1) + " against a float64 CPU product at the start and end");
  });
}

namespace {

// --- memory integrity ---------------------------------------------------------------------------------------------

constexpr const char* kPatternNames[KD_INTEGRITY_PATTERNS] = {"address-in-address", "walking ones", "seeded pseudo-random"};
constexpr int64_t kMix1 = static_cast<int64_t>(0x9E3779B97F4A7C15ULL), kMix2 = static_cast<int64_t>(0xBF58476D1CE4E5B9ULL);

// Writes pattern p of the words g0 .. g0 + dst.numel() - 1 (their index in the tested region) into dst (int64);
// tmp: scratch of at least dst's size, one: a 0-dim int64 1 on the device.
void generate(at::Tensor& dst, int64_t g0, int p, int64_t seed, at::Tensor& tmp, const at::Tensor& one) {
  at::arange_out(dst, g0, g0 + dst.numel(), 1);
  if (p == 1) {
    dst.remainder_(64);
    at::bitwise_left_shift_out(dst, one, dst);
  } else if (p == 2) {
    at::Tensor t = tmp.narrow(0, 0, dst.numel());
    dst.add_(seed).mul_(kMix1);
    at::bitwise_right_shift_out(t, dst, 29);
    dst.bitwise_xor_(t).mul_(kMix2);
  }
}

}  // namespace

kd_status memory_integrity(const kd_integrity_in* in, kd_integrity_out* out) {
  return releasing(in->on_gpu, [&] {
    *out = kd_integrity_out{};
    out->first_bad_pattern = -1;
    out->first_bad_chunk = out->first_bad_chunk_offset = out->first_bad_word_offset = -1;
    if (in->bytes < 8 || in->chunk_bytes < 8) throw std::invalid_argument("memory_integrity: bytes and chunk_bytes below one word");
    c10::InferenceMode guard;
    const int on_gpu = in->on_gpu, index = in->index;
    const auto longs = at::TensorOptions().dtype(at::kLong).device(device_of(on_gpu, index));
    const int64_t chunk_words = in->chunk_bytes / 8;
    const int64_t slice = std::min<int64_t>(chunk_words, int64_t(16) << 20);  // words a scratch buffer holds (128 MiB)
    at::Tensor expect = at::empty({slice}, longs), tmp = at::empty({slice}, longs);
    at::Tensor flags = at::empty({slice}, longs.dtype(at::kBool));
    const at::Tensor one = at::ones({}, longs);
    std::vector<at::Tensor> chunks;
    for (int64_t left = in->bytes / 8; left > 0;) {
      const int64_t words = std::min(left, chunk_words);
      try {
        chunks.push_back(at::empty({words}, longs));
      } catch (const std::exception&) {  // others took memory meanwhile: the pass covers what it has
        break;
      }
      left -= words;
    }
    out->chunks = static_cast<int64_t>(chunks.size());
    at::Tensor counts = at::zeros({std::max<int64_t>(out->chunks, 1)}, longs);
    // Each slice of each chunk: fn(the slice, its first word's index in the region).
    const auto each_slice = [&](const auto& fn) {
      int64_t g = 0;  // the chunk's first word's index in the region
      for (size_t ci = 0; ci < chunks.size(); g += chunks[ci].numel(), ++ci)
        for (int64_t s = 0; s < chunks[ci].numel(); s += slice) {
          at::Tensor part = chunks[ci].narrow(0, s, std::min(slice, chunks[ci].numel() - s));
          fn(ci, part, g + s);
        }
    };
    std::vector<int64_t> chunk_start;
    int64_t words_total = 0;
    for (const at::Tensor& ch : chunks) chunk_start.push_back(words_total), words_total += ch.numel();
    out->bytes_tested = words_total * 8;
    sync(on_gpu, index);
    for (int p = 0; p < KD_INTEGRITY_PATTERNS; ++p) {
      const auto t0 = std::chrono::steady_clock::now();
      counts.zero_();
      each_slice([&](size_t, at::Tensor& part, int64_t g) { generate(part, g, p, in->seed, tmp, one); });
      if (p == 0 && in->corrupt_chunk >= 0 && in->corrupt_chunk < out->chunks)  // TEST ONLY: one bit of one word
        chunks[static_cast<size_t>(in->corrupt_chunk)].select(0, chunks[static_cast<size_t>(in->corrupt_chunk)].numel() / 3)
            .bitwise_xor_(int64_t(1) << 17);
      each_slice([&](size_t ci, at::Tensor& part, int64_t g) {
        at::Tensor e = expect.narrow(0, 0, part.numel()), f = flags.narrow(0, 0, part.numel());
        generate(e, g, p, in->seed, tmp, one);
        at::ne_out(f, part, e);
        counts.select(0, static_cast<int64_t>(ci)).add_(f.sum());
      });
      const at::Tensor host = counts.to(at::kCPU);  // synchronizes
      out->pattern_seconds[p] = seconds_since(t0);
      const int64_t* cnt = host.data_ptr<int64_t>();
      for (int64_t ci = 0; ci < out->chunks; ++ci) {
        if (cnt[ci] == 0) continue;
        out->mismatches += cnt[ci];
        ++out->bad_chunks;
        if (out->first_bad_pattern >= 0) continue;
        out->first_bad_pattern = p;
        out->first_bad_chunk = ci;
        out->first_bad_chunk_offset = chunk_start[static_cast<size_t>(ci)] * 8;
        out->first_bad_chunk_mismatches = cnt[ci];
        at::Tensor& ch = chunks[static_cast<size_t>(ci)];  // where in it: the slices again, this chunk only
        for (int64_t s = 0; s < ch.numel() && out->first_bad_word_offset < 0; s += slice) {
          at::Tensor part = ch.narrow(0, s, std::min(slice, ch.numel() - s));
          at::Tensor e = expect.narrow(0, 0, part.numel());
          generate(e, chunk_start[static_cast<size_t>(ci)] + s, p, in->seed, tmp, one);
          const at::Tensor wrong = part.ne(e).to(at::kByte);
          if (wrong.max().item<int64_t>() > 0) {
            const int64_t word = s + wrong.argmax().item<int64_t>();  // the first wrong word of the slice
            out->first_bad_word_offset = word * 8;
            out->first_bad_address = reinterpret_cast<uint64_t>(ch.data_ptr<int64_t>() + word);
          }
        }
      }
    }
    copy_to(out->desc, sizeof out->desc,
            std::to_string(out->chunks) + " chunks of up to " + std::to_string(in->chunk_bytes >> 20) + " MiB, int64 words: " +
                kPatternNames[0] + ", " + kPatternNames[1] + ", " + kPatternNames[2] + " (seed " + std::to_string(in->seed) +
                "), each written and read back on the device");
  });
}

}  // namespace kd::probe
