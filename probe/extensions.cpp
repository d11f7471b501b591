// --extension: a custom-operator library loaded into the worker before the model, as
// torch.ops.load_library does (dlopen with global symbols, so the model and later libraries see
// them), and the operators its TORCH_LIBRARY blocks registered: the dispatcher's names after the
// load that it did not know before. Why a library does not load is explained torch-free, in the suite.
#include <ATen/core/dispatch/Dispatcher.h>
#include <dlfcn.h>

#include <algorithm>
#include <set>
#include <string>

#include "probe_app.h"
#include "probe_status.h"

namespace kd::probe {
namespace {

std::set<std::string> operator_names() {
  std::set<std::string> names;
  for (const c10::OperatorName& op : c10::Dispatcher::singleton().getAllOpNames())
    names.insert(op.overload_name.empty() ? op.name : op.name + "." + op.overload_name);
  return names;
}

}  // namespace

kd_status extension_load(const char* path, kd_extension_out* out) {
  *out = kd_extension_out{};
#ifdef _GLIBCXX_USE_CXX11_ABI
  out->cxx11_abi = _GLIBCXX_USE_CXX11_ABI;
#else
  out->cxx11_abi = -1;  // not libstdc++: no ABI to tell apart
#endif
  std::set<std::string> before;
  void* handle = nullptr;
  const kd_status s = guarded([&] {
    before = operator_names();
    handle = ::dlopen(path, RTLD_NOW | RTLD_GLOBAL);  // its static initializers register the operators, or throw
  });
  if (s.kind != KD_OK) return s;
  if (!handle) {
    const char* why = ::dlerror();
    return make_status(KD_ERR_LIBRARY, why ? why : "dlopen failed");
  }
  return guarded([&] {  // the handle stays open: the operators live as long as the worker
    for (const std::string& name : operator_names()) {
      if (before.count(name)) continue;
      if (out->operator_count < KD_EXTENSION_MAX_OPS)
        copy_to(out->operators[out->operator_count], sizeof out->operators[0], name);
      ++out->operator_count;
    }
  });
}

}  // namespace kd::probe
