// How a worker may end, as the supervisor records it (verdict/decision.h), for the tests of the verdict.
#pragma once
#include <csignal>

#include "verdict/decision.h"

namespace kd::test {

inline WorkerEnd exited(int status) {
  WorkerEnd w;
  w.exited = true;
  w.exit_status = status;
  return w;
}
inline WorkerEnd killed(int sig) {
  WorkerEnd w;
  w.signal = sig;
  return w;
}
inline WorkerEnd timed_out() {  // the supervisor killed it at the limit
  WorkerEnd w = killed(SIGKILL);
  w.timed_out = true;
  return w;
}
inline WorkerEnd interrupted() {  // the supervisor was asked to stop, and stopped the worker
  WorkerEnd w = killed(SIGTERM);
  w.interrupted = true;
  return w;
}
inline WorkerEnd flooded() {  // it sent more events than the supervisor reads, and was stopped
  WorkerEnd w = killed(SIGKILL);
  w.flooded = true;
  return w;
}

}  // namespace kd::test
