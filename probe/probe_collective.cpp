// L8 collective: this process is one rank of a job. Rank 0 serves a c10d TCPStore; every rank
// announces itself there and waits for the others, so that a rank that never comes is named by
// its number. Then one process group for the whole job, LibTorch's own: ProcessGroupGloo for CPU
// tensors, ProcessGroupNCCL for GPU tensors (where this LibTorch has it). Before each operation a
// rank marks in the store that it got there: when the operation fails, the ranks without the
// mark are the ones that never reached it. Gloo's headers are not in the pip wheel: see
// probe/gloo_names/README.md. Like the L7 all-reduce, this file pays for the whole ATen header set.
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef KD_COLLECTIVE_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "probe_collective.h"
#include "probe_status.h"

namespace kd::probe {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int64_t kCheckElements = 4096;

// What the steps throw, mapped to a status by collective_guarded.
struct Unreachable : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class Fn>
kd_status collective_guarded(Fn&& fn) {
  try {
    fn();
    return ok_status();
  } catch (const Unreachable& e) {
    return make_status(KD_ERR_UNREACHABLE, e.what());
  } catch (const Unsupported& e) {
    return make_status(KD_ERR_UNSUPPORTED, e.what());
  } catch (...) {
    return guarded([] { std::rethrow_exception(std::current_exception()); });
  }
}

// "rank 1", "ranks 1, 3 and 4", "ranks 1, 2, 3 and 61 more".
std::string missing_text(const int* ranks, int count) {
  const int shown = std::min(count, 8);
  std::string s = count == 1 ? "rank " : "ranks ";
  for (int i = 0; i < shown; ++i) {
    if (i) s += (i + 1 == shown && shown == count) ? " and " : ", ";
    s += std::to_string(ranks[i]);
  }
  if (count > shown) s += " and " + std::to_string(count - shown) + " more";
  return s;
}

std::string seconds_text(double s) { return std::to_string(static_cast<int64_t>(s * 10 + 0.5) / 10) + "." +
                                             std::to_string(static_cast<int64_t>(s * 10 + 0.5) % 10) + " s"; }
constexpr const char* kPrefix = "kernodeck/";

struct Group {
  kd_collective_in in{};
  Clock::time_point deadline;  // no operation waits past it (kd_collective_in.op_timeout_s)
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> backend;
  at::Device device = at::kCPU;
};

// Held until collective_end. A group whose operation failed is never torn down: its threads may still
// wait on a dead peer, and the process is about to end with its verdict anyway.
Group* group = nullptr;

milliseconds ms(double seconds) { return milliseconds(static_cast<int64_t>(std::max(seconds, 0.1) * 1000)); }
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string rank_key(const char* what, int rank) { return std::string(kPrefix) + what + "/" + std::to_string(rank); }

// The ranks without `what`'s mark, as far as the store still answers (it may have died with rank 0).
void list_missing(const char* what, int* count, int* missing) {
  *count = 0;
  try {
    for (int r = 0; r < group->in.world_size; ++r)
      if (!group->store->check({rank_key(what, r)})) {
        if (*count < KD_COLLECTIVE_MAX_MISSING) missing[*count] = r;
        ++*count;
      }
  } catch (const std::exception&) {
    *count = 0;  // unknown: the message says what failed
  }
}

[[noreturn]] void unreachable(const std::string& text) { throw Unreachable(text); }

at::TensorOptions options(at::ScalarType t) { return at::TensorOptions().dtype(t).device(group->device); }

// What is left of the operations' time (kd_collective_in.op_timeout_s).
double left() { return std::chrono::duration<double>(group->deadline - Clock::now()).count(); }

void wait_for(const c10::intrusive_ptr<c10d::Work>& work) {
  if (!work->wait(ms(left()))) unreachable("did not finish within the limit");
#ifdef KD_COLLECTIVE_NCCL
  if (group->device.is_cuda()) c10::cuda::device_synchronize();
#endif
}

// Rank 0's store must outlive the other ranks' reading of it: after a failed operation, rank 0 waits (5 s at
// most) until every rank that reached the operation has read which ones did not.
void wait_for_readers(const char* what, int missing) {
  try {
    const std::string key = std::string(kPrefix) + "read/" + what;
    int64_t readers = group->store->add(key, 1);
    if (group->in.rank != 0) return;
    const auto deadline = Clock::now() + ms(std::min(left(), 5.0));
    while (readers < group->in.world_size - missing && Clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(20));
      readers = group->store->add(key, 0);
    }
  } catch (const std::exception&) {  // the store is gone (rank 0 with it): nothing to wait for
  }
}

// Runs one collective operation after marking this rank's arrival; a failure of the transport (or of a
// peer) becomes KD_ERR_UNREACHABLE, with the ranks that never got there.
template <class Fn>
kd_status operation(const char* what, kd_collective_check_out* out, Fn fn) {
  *out = kd_collective_check_out{};
  out->first_wrong = -1;
  if (!group) return make_status(KD_ERR_RUNTIME, "the collective group was not joined");
  const auto t0 = Clock::now();
  kd_status s = collective_guarded([&] {
    group->store->set(rank_key(what, group->in.rank), std::vector<uint8_t>{1});
    try {
      fn();
    } catch (const c10::OutOfMemoryError&) {
      throw;
    } catch (const Unreachable& e) {
      unreachable(std::string(what) + ": " + e.what());
    } catch (const std::exception& e) {  // a peer gone, or the transport between ranks broken
      unreachable(std::string(what) + " failed: " + summary_line(e.what()));
    }
  });
  out->seconds = since(t0);
  if (s.kind == KD_ERR_UNREACHABLE) {
    // A slower peer may still be on its way to the operation (a dead one broke it first): its mark gets a
    // moment (2 s at most) before this rank names who never reached it.
    const auto until = Clock::now() + ms(std::min(left(), 2.0));
    list_missing(what, &out->missing_count, out->missing);
    while (out->missing_count > 0 && Clock::now() < until) {
      std::this_thread::sleep_for(milliseconds(50));
      list_missing(what, &out->missing_count, out->missing);
    }
    wait_for_readers(what, out->missing_count);
  }
  return s;
}

// Compares every element with the value it must hold.
void compare(const at::Tensor& got, const at::Tensor& expected, kd_collective_check_out* out) {
  const at::Tensor g = got.cpu(), e = expected.cpu();
  const at::Tensor wrong = at::ne(g, e);
  out->elements = g.numel();
  out->wrong = wrong.sum().item<int64_t>();
  if (!out->wrong) return;
  out->first_wrong = at::nonzero(wrong)[0][0].item<int64_t>();
  out->expected = e[out->first_wrong].item<double>();
  out->got = g[out->first_wrong].item<double>();
}

// Waits until rank 0's port takes a connection, or the deadline. TCPStore's own connect retries with
// growing pauses that can overrun the limit (and log each retry); this loop keeps to it.
bool port_answers(const std::string& host, int port, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  while (Clock::now() < deadline) {
    addrinfo* found = nullptr;
    if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) == 0) {
      for (addrinfo* a = found; a; a = a->ai_next) {
        const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        bool ok = connect(fd, a->ai_addr, a->ai_addrlen) == 0;
        if (!ok && errno == EINPROGRESS) {  // an unrouted address: wait at most half a second for it
          pollfd p{fd, POLLOUT, 0};
          int err = 0;
          socklen_t len = sizeof err;
          ok = poll(&p, 1, 500) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
        }
        close(fd);
        if (ok) {
          freeaddrinfo(found);
          return true;
        }
      }
      freeaddrinfo(found);
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  return false;
}

// Every rank announces itself, then waits for all: a missing rank is named, not just timed out.
// WHAT is "joined" (every rank in the store) or "connected" (every rank's group made: only then is the join
// over for all, so that a rank lost after it is seen by every other rank in the same later step).
void wait_for_ranks(const char* what, const char* verb, const kd_collective_in& in, Clock::time_point t0,
                    kd_collective_join_out* out) {
  const auto deadline = t0 + ms(in.join_timeout_s);
  group->store->set(rank_key(what, in.rank), std::vector<uint8_t>{1});
  std::vector<std::string> keys;
  for (int r = 0; r < in.world_size; ++r) keys.push_back(rank_key(what, r));
  while (!group->store->check(keys)) {
    if (Clock::now() >= deadline) {
      list_missing(what, &out->missing_count, out->missing);
      if (out->joined == 0) out->joined = in.world_size - out->missing_count;  // every rank joined if "connected"
      unreachable(missing_text(out->missing, out->missing_count) + " did not " + verb + " within " +
                  seconds_text(in.join_timeout_s));
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
  out->joined = in.world_size;
}

c10::intrusive_ptr<c10d::Backend> make_backend(const kd_collective_in& in, kd_collective_join_out* out) {
  const auto store = c10::make_intrusive<c10d::PrefixStore>(std::string(kPrefix) + "group", group->store);
  if (!in.on_gpu) {
    copy_to(out->backend, sizeof out->backend, "gloo");
    // create_default: the device for GLOO_SOCKET_IFNAME when set, else for this host's name.
    auto opts = c10d::ProcessGroupGloo::Options::create_default(ms(left()));
    return c10::make_intrusive<c10d::ProcessGroupGloo>(store, in.rank, in.world_size, opts);
  }
#ifdef KD_COLLECTIVE_NCCL
  copy_to(out->backend, sizeof out->backend, "nccl");
  // A dead peer must end in this rank's verdict, not in the watchdog's abort of the process.
  setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "0", 1);
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(in.index));
  auto opts = c10d::ProcessGroupNCCL::Options::create();
  opts->timeout = ms(left());
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, in.rank, in.world_size, opts);
#else
  throw Unsupported("not supported by this LibTorch on a GPU: the probe was built without LibTorch's NCCL process group");
#endif
}

}  // namespace

kd_status collective_join(const kd_collective_in* in, kd_collective_join_out* out) {
  *out = kd_collective_join_out{};
  if (group) return make_status(KD_ERR_RUNTIME, "the collective group was already joined");
  const auto t0 = Clock::now();
  kd_status s = collective_guarded([&] {
    group = new Group{*in, {}, {}, {}, in->on_gpu ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(in->index))
                                                : at::Device(at::kCPU)};
      const auto deadline = t0 + ms(in->join_timeout_s);
      group->deadline = t0 + ms(in->op_timeout_s);
      c10d::TCPStoreOptions so;
      so.port = static_cast<uint16_t>(in->port);
      so.isServer = in->rank == 0;
      so.waitWorkers = false;  // this probe waits itself, so that it can name who is missing
      so.timeout = ms(in->join_timeout_s);
      const std::string not_answered = "rank 0's rendezvous store did not answer within " +
                                       seconds_text(in->join_timeout_s) +
                                       " (rank 0 not started, or its address or port not reachable from here)";
      if (in->rank != 0 && !port_answers(in->host, in->port, deadline)) {
        out->store_unreachable = 1;
        unreachable(not_answered);
      }
      try {
        group->store = c10::make_intrusive<c10d::TCPStore>(in->host, so);
      } catch (const std::exception& e) {
        out->store_unreachable = 1;
        unreachable(in->rank == 0 ? "rank 0 could not serve the rendezvous store: " + summary_line(e.what())
                                  : not_answered);
      }
      group->store->setTimeout(ms(left()));
      wait_for_ranks("joined", "join", *in, t0, out);
      try {
        group->backend = make_backend(*in, out);
      } catch (const Unsupported&) {
        throw;
      } catch (const std::exception& e) {
        unreachable(std::string("every rank joined, but the ") + out->backend + " group could not connect: " +
                    summary_line(e.what()));
      }
      wait_for_ranks("connected", (std::string("connect its ") + out->backend + " group").c_str(), *in, t0, out);
  });
  out->seconds = since(t0);
  copy_to(out->desc, sizeof out->desc,
          std::string("c10d TCPStore rendezvous, then ProcessGroup") + (out->backend[0] == 'n' ? "NCCL" : "Gloo") +
              " over " + std::to_string(in->world_size) + " rank(s)");
  return s;
}

kd_status collective_all_reduce(kd_collective_check_out* out) {
  return operation("all_reduce", out, [&] {
    // Rank r contributes (r + 1) * (i % 97 + 1): the sum at i is W(W+1)/2 * (i % 97 + 1), exact in float64.
    const int w = group->in.world_size;
    const at::Tensor pattern = at::remainder(at::arange(kCheckElements, options(at::kDouble)), 97) + 1;
    std::vector<at::Tensor> t = {pattern * (group->in.rank + 1)};
    if (group->in.wrong_contribution) t[0][7] += 1;
    wait_for(group->backend->allreduce(t));
    compare(t[0], pattern * (w * (w + 1) / 2.0), out);
    copy_to(out->desc, sizeof out->desc,
            "sum of " + std::to_string(kCheckElements) + " float64 values, rank r contributing (r + 1) * (i % 97 + 1)");
  });
}

kd_status collective_broadcast(kd_collective_check_out* out) {
  return operation("broadcast", out, [&] {
    const at::Tensor pattern = at::arange(kCheckElements, options(at::kDouble)) * 3 + 1;
    std::vector<at::Tensor> t = {group->in.rank == 0 ? pattern.clone() : at::zeros({kCheckElements}, options(at::kDouble))};
    wait_for(group->backend->broadcast(t));
    compare(t[0], pattern, out);
    copy_to(out->desc, sizeof out->desc, "rank 0's " + std::to_string(kCheckElements) + " float64 values (3i + 1) to every rank");
  });
}

kd_status collective_barrier(kd_collective_check_out* out) {
  return operation("barrier", out, [&] {
    c10d::BarrierOptions opts;
    opts.timeout = ms(left());
    if (group->device.is_cuda()) opts.device_ids = {static_cast<int64_t>(group->in.index)};
    wait_for(group->backend->barrier(opts));
  });
}

kd_status collective_bandwidth(const int64_t* bytes, int count, double seconds_per_size, kd_collective_bandwidth_out* out) {
  *out = kd_collective_bandwidth_out{};
  kd_collective_check_out marks{};
  const kd_status s = operation("bandwidth", &marks, [&] {
    for (int k = 0; k < std::min(count, KD_COLLECTIVE_MAX_SIZES); ++k) {
      std::vector<at::Tensor> t = {at::ones({bytes[k] / 4}, options(at::kFloat))};
      wait_for(group->backend->allreduce(t));  // warm-up: NCCL sets up its channels for this size here
      const auto t1 = Clock::now();
      wait_for(group->backend->allreduce(t));
      // Every rank must run as many: rank 0 chooses from its one timed all-reduce, and tells the others.
      const int64_t chosen = std::clamp<int64_t>(static_cast<int64_t>(seconds_per_size / std::max(since(t1), 1e-6)), 1, 200);
      std::vector<at::Tensor> n = {at::full({1}, chosen, options(at::kLong))};
      wait_for(group->backend->broadcast(n));
      const int64_t iterations = n[0].item<int64_t>();
      std::vector<c10::intrusive_ptr<c10d::Work>> works;
      const auto t0 = Clock::now();
      for (int64_t i = 0; i < iterations; ++i) works.push_back(group->backend->allreduce(t));  // queued back to back
      for (const auto& w : works) wait_for(w);
      out->seconds[k] = since(t0) / static_cast<double>(iterations);
      out->bytes[k] = bytes[k];
      out->iterations[k] = static_cast<int>(iterations);
      out->sizes = k + 1;
    }
    copy_to(out->desc, sizeof out->desc,
            std::string("all-reduce (sum) of float32 tensors, after one warm-up, queued back to back; ") +
                group->backend->getBackendName());
  });
  if (s.kind == KD_ERR_UNREACHABLE && marks.missing_count) {
    kd_status named = s;
    copy_to(named.message, sizeof named.message,
            std::string(s.message) + " (" + missing_text(marks.missing, marks.missing_count) + " never reached it)");
    return named;
  }
  return s;
}

kd_status collective_end() {
  if (!group) return ok_status();
  kd_status s = collective_guarded([&] {
    // Rank 0's store must outlive every other rank's last use of it.
    group->store->add(std::string(kPrefix) + "done", 1);
    const auto deadline = Clock::now() + ms(std::min(left(), 5.0));
    while (group->in.rank == 0 && group->store->add(std::string(kPrefix) + "done", 0) < group->in.world_size &&
           Clock::now() < deadline)
      std::this_thread::sleep_for(milliseconds(20));
    group->backend->shutdown();
  });
  delete group;
  group = nullptr;
  return s;
}

}  // namespace kd::probe
