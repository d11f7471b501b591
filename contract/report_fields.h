// Every field of the report that the worker's layers fill, each named once, with its type. A step records a
// fact through one of these (WorkerContext::fact), the report builder lets a fact in only where one of them is
// and only with a value of its kind, and the reporters read the fields back through read(): no JSON pointer is
// written anywhere else. tests/unit/report_fields_test.cpp checks each against schema/report.schema.json.
// What lies inside an object field (an L5 step, a range point) has its rows in report_parts.h.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kd::report {

enum class Kind { string, boolean, integer, number, strings, array, object, flat_object };

// Where a field is (a JSON pointer), what kind of value it takes, whether null is one of them. keyed: the
// field is an object whose keys the step chooses (/timing/ceilings/copy), each of kind `kind`. within: for a
// field of an entry of a list (a layer, a test), where that entry is ("/layers/*/tests/*": any test of any layer),
// and pointer is from the entry.
struct FieldInfo {
  const char* pointer;
  Kind kind;
  bool nullable;
  bool keyed;
  const char* within;
};

// T: the C++ value a step records there (std::optional<X> where the field may be null; nlohmann::json for an
// object or a list the schema describes).
template <class T>
struct Field {
  FieldInfo info;
};

namespace detail {
template <class T> struct KindOf;
template <> struct KindOf<std::string> { static constexpr Kind kind = Kind::string; };
template <> struct KindOf<bool> { static constexpr Kind kind = Kind::boolean; };
template <> struct KindOf<int64_t> { static constexpr Kind kind = Kind::integer; };
template <> struct KindOf<uint64_t> { static constexpr Kind kind = Kind::integer; };
template <> struct KindOf<double> { static constexpr Kind kind = Kind::number; };
template <> struct KindOf<std::vector<std::string>> { static constexpr Kind kind = Kind::strings; };
template <class T> struct Same { using type = T; };  // keeps a fact's value from deducing T
}  // namespace detail

template <class T>
constexpr Field<T> plain(const char* pointer, const char* within = nullptr) {
  return {{pointer, detail::KindOf<T>::kind, false, false, within}};
}
template <class T>
constexpr Field<std::optional<T>> nullable(const char* pointer, const char* within = nullptr) {
  return {{pointer, detail::KindOf<T>::kind, true, false, within}};
}
constexpr Field<nlohmann::json> structured(const char* pointer, Kind kind, bool nullable = false, const char* within = nullptr) {
  return {{pointer, kind, nullable, false, within}};
}
constexpr Field<nlohmann::json> keyed_objects(const char* pointer) { return {{pointer, Kind::object, false, true, nullptr}}; }

// The list: a name, then where and of what type. A new fact is a new row here and a new property in the schema.
#define KD_REPORT_FIELDS(X)                                                                                          \
  X(runtime_os_family, nullable<std::string>("/runtime/os_family"))                                                  \
  X(runtime_os_name, nullable<std::string>("/runtime/os_name"))                                                      \
  X(runtime_arch, nullable<std::string>("/runtime/arch"))                                                            \
  X(runtime_libc, nullable<std::string>("/runtime/libc"))                                                            \
  X(runtime_compiler, nullable<std::string>("/runtime/compiler"))                                                    \
  X(runtime_suite_version, nullable<std::string>("/runtime/suite_version"))                                          \
  X(pytorch_loaded, plain<bool>("/pytorch/loaded"))                                                                  \
  X(pytorch_version, nullable<std::string>("/pytorch/version"))                                                      \
  X(pytorch_cuda_compiled, nullable<std::string>("/pytorch/cuda_compiled"))                                          \
  X(pytorch_hip_compiled, nullable<std::string>("/pytorch/hip_compiled"))                                            \
  X(pytorch_backend, plain<std::string>("/pytorch/backend"))                                                         \
  X(pytorch_source, plain<std::string>("/pytorch/source"))                                                           \
  X(pytorch_gpu_available, plain<bool>("/pytorch/gpu_available"))                                                    \
  X(pytorch_visible_device_count, plain<int64_t>("/pytorch/visible_device_count"))                                   \
  X(pytorch_arch_list, nullable<std::vector<std::string>>("/pytorch/arch_list"))                                     \
  X(device, structured("/device", Kind::flat_object, true))                                                          \
  X(execution_device, plain<std::string>("/execution/device"))                                                       \
  X(execution_product_verified, plain<bool>("/execution/product_verified"))                                          \
  X(execution_gradient_verified, plain<bool>("/execution/gradient_verified"))                                        \
  X(execution_loss, plain<double>("/execution/loss"))                                                                \
  X(execution_arch_supported, nullable<bool>("/execution/arch_supported"))                                           \
  X(host_nvml, structured("/host/nvml", Kind::object))                                                                \
  X(host_libcuda, structured("/host/nvidia/libcuda", Kind::object))                                                   \
  X(host_kernel_log, structured("/host/kernel_log", Kind::object))                                                   \
  X(python, structured("/python", Kind::object))                                                                     \
  X(app_embeddings, structured("/app/embeddings", Kind::object))                                                     \
  X(app_training, structured("/app/training", Kind::object))                                                         \
  X(app_extensions, structured("/app/extensions", Kind::array))                                                      \
  X(app_model_format, plain<std::string>("/app/model/format"))                                                       \
  X(app_model_model, plain<std::string>("/app/model/model"))                                                         \
  X(app_model_signature, plain<std::string>("/app/model/signature"))                                                 \
  X(app_model_input, plain<std::string>("/app/model/input"))                                                         \
  X(app_model_outputs, structured("/app/model/outputs", Kind::array))                                                \
  X(app_model_output_list, structured("/app/model/output_list", Kind::array))                                        \
  X(app_model_reference, structured("/app/model/reference", Kind::object))                                           \
  X(app_model_device_assert, structured("/app/model/device_assert", Kind::object))                                   \
  X(app_model_contract, plain<std::string>("/app/model/contract"))                                                   \
  X(app_stop_resume, structured("/app/stop_resume", Kind::object))                                                   \
  X(app_across_devices, structured("/app/across_devices", Kind::object))                                             \
  X(app_across_devices_model, structured("/app/across_devices_model", Kind::object))                                 \
  X(memory_device, plain<std::string>("/memory/device"))                                                             \
  X(memory_workload, plain<std::string>("/memory/workload"))                                                         \
  X(memory_fraction, nullable<double>("/memory/fraction"))                                                           \
  X(memory_weights_bytes, plain<uint64_t>("/memory/weights_bytes"))                                                  \
  X(memory_activation_bytes, plain<uint64_t>("/memory/activation_bytes"))                                            \
  X(memory_steps, structured("/memory/steps", Kind::array, true))                                                    \
  X(memory_iterations, structured("/memory/iterations", Kind::object))                                               \
  X(memory_growth_per_iteration_bytes, plain<double>("/memory/iterations/growth_per_iteration_bytes"))               \
  X(memory_growth_tolerance_bytes, plain<double>("/memory/iterations/tolerance_bytes"))                              \
  X(memory_empty_cache, structured("/memory/empty_cache", Kind::object))                                             \
  X(memory_oom, structured("/memory/oom", Kind::object))                                                             \
  X(memory_range, structured("/memory/range", Kind::object))                                                         \
  X(timing_reference_device, nullable<std::string>("/timing/reference_device"))                                      \
  X(timing_segments, structured("/timing/segments", Kind::object))                                                   \
  X(timing_ceilings, keyed_objects("/timing/ceilings"))                                                              \
  X(timing_host_link, structured("/timing/host_link", Kind::object, true))                                            \
  X(timing_sustained, structured("/timing/sustained", Kind::object, true))                                            \
  X(timing_sustained_results, structured("/timing/sustained_results", Kind::object, true))                            \
  X(timing_memory_integrity, structured("/timing/memory_integrity", Kind::object, true))                              \
  X(peer_device_count, plain<int64_t>("/peer/device_count"))                                                         \
  X(peer_devices, structured("/peer/devices", Kind::array))                                                          \
  X(peer_access, structured("/peer/access", Kind::array))                                                            \
  X(peer_copies, structured("/peer/copies", Kind::array))                                                            \
  X(peer_bandwidth, structured("/peer/bandwidth", Kind::object))                                                     \
  X(peer_all_reduce, structured("/peer/all_reduce", Kind::object))                                                   \
  X(collective_source, plain<std::string>("/collective/source"))                                                     \
  X(collective_world_size, plain<int64_t>("/collective/world_size"))                                                 \
  X(collective_rank, plain<int64_t>("/collective/rank"))                                                             \
  X(collective_local_rank, plain<int64_t>("/collective/local_rank"))                                                 \
  X(collective_device, plain<std::string>("/collective/device"))                                                     \
  X(collective_backend, plain<std::string>("/collective/backend"))                                                   \
  X(collective_join, structured("/collective/join", Kind::object))                                                   \
  X(collective_all_reduce, structured("/collective/all_reduce", Kind::object))                                       \
  X(collective_broadcast, structured("/collective/broadcast", Kind::object))                                         \
  X(collective_barrier, structured("/collective/barrier", Kind::object))                                             \
  X(collective_bandwidth, structured("/collective/bandwidth", Kind::object))                                         \
  X(sharing_measurements, keyed_objects("/sharing/measurements"))

// What the supervisor writes itself: the verdict and the run around it. No fact lands here.
#define KD_REPORT_SUPERVISOR_FIELDS(X)                                                                               \
  X(schema_version, plain<std::string>("/schema_version"))                                                           \
  X(run_id, plain<std::string>("/run_id"))                                                                           \
  X(started_at, plain<std::string>("/started_at"))                                                                   \
  X(duration_ms, plain<double>("/duration_ms"))                                                                      \
  X(status, plain<std::string>("/status"))                                                                           \
  X(code, plain<std::string>("/code"))                                                                               \
  X(exit_code, plain<int64_t>("/exit_code"))                                                                         \
  X(stage, nullable<std::string>("/stage"))                                                                          \
  X(next_action, plain<std::string>("/next_action"))                                                                 \
  X(device_index, nullable<int64_t>("/device_index"))                                                                \
  X(requested, structured("/requested", Kind::object))                                                               \
  X(host, structured("/host", Kind::object, true))                                                                   \
  X(layers, structured("/layers", Kind::array))                                                                      \
  X(markers, structured("/markers", Kind::array))                                                                    \
  X(warnings, plain<std::vector<std::string>>("/warnings"))                                                          \
  X(devices, structured("/devices", Kind::array, true))                                                              \
  X(error, structured("/error", Kind::object, true))                                                                 \
  X(error_code, plain<std::string>("/error/code"))                                                                   \
  X(error_exit_code, plain<int64_t>("/error/exit_code"))                                                             \
  X(error_stage, nullable<std::string>("/error/stage"))                                                              \
  X(error_meaning, plain<std::string>("/error/meaning"))                                                             \
  X(error_message, plain<std::string>("/error/message"))                                                             \
  X(error_cause, nullable<std::string>("/error/cause"))                                                              \
  X(error_signature, nullable<std::string>("/error/signature"))                                                      \
  X(error_next_action, plain<std::string>("/error/next_action"))                                                     \
  X(error_action, plain<std::string>("/error/action"))                                                               \
  X(after_failure, structured("/after_failure", Kind::object, true))                                                 \
  X(after_failure_event, plain<std::string>("/after_failure/event"))                                                 \
  X(after_failure_code, plain<std::string>("/after_failure/code"))                                                   \
  X(after_failure_stage, nullable<std::string>("/after_failure/stage"))                                              \
  X(after_failure_message, plain<std::string>("/after_failure/message"))

// The fields of each entry of the supervisor's lists, read from the entry: read(layer, report::layer_status).
#define KD_REPORT_ENTRY_FIELDS(X)                                                                                    \
  X(layer_id, plain<std::string>("/id", "/layers/*"))                                                                \
  X(layer_suite, plain<std::string>("/suite", "/layers/*"))                                                          \
  X(layer_title, plain<std::string>("/title", "/layers/*"))                                                          \
  X(layer_status, plain<std::string>("/status", "/layers/*"))                                                        \
  X(layer_skip_kind, plain<std::string>("/skip_kind", "/layers/*"))                                                  \
  X(layer_blocked_by, structured("/blocked_by", Kind::object, false, "/layers/*"))                                   \
  X(layer_tests, structured("/tests", Kind::array, false, "/layers/*"))                                              \
  X(test_name, plain<std::string>("/name", "/layers/*/tests/*"))                                                     \
  X(test_status, plain<std::string>("/status", "/layers/*/tests/*"))                                                 \
  X(test_duration_ms, plain<double>("/duration_ms", "/layers/*/tests/*"))                                            \
  X(test_code, plain<std::string>("/code", "/layers/*/tests/*"))                                                     \
  X(test_stage, nullable<std::string>("/stage", "/layers/*/tests/*"))                                                \
  X(test_message, plain<std::string>("/message", "/layers/*/tests/*"))                                               \
  X(test_skip_kind, plain<std::string>("/skip_kind", "/layers/*/tests/*"))                                           \
  X(test_blocked_by, structured("/blocked_by", Kind::object, false, "/layers/*/tests/*"))                            \
  X(marker_name, plain<std::string>("/name", "/markers/*"))                                                          \
  X(marker_stage, nullable<std::string>("/stage", "/markers/*"))                                                     \
  X(marker_t_ms, plain<double>("/t_ms", "/markers/*"))                                                               \
  X(blocked_by_stage, plain<std::string>("/stage", "/layers/*/blocked_by"))                                          \
  X(blocked_by_code, plain<std::string>("/code", "/layers/*/blocked_by"))                                            \
  X(gpu_index, plain<int64_t>("/index", "/devices/*"))                                                               \
  X(gpu_name, nullable<std::string>("/name", "/devices/*"))                                                          \
  X(gpu_code, plain<std::string>("/code", "/devices/*"))                                                             \
  X(gpu_exit_code, plain<int64_t>("/exit_code", "/devices/*"))                                                       \
  X(gpu_stage, nullable<std::string>("/stage", "/devices/*"))                                                        \
  X(gpu_message, nullable<std::string>("/message", "/devices/*"))

#define KD_REPORT_FIELD(name, definition) inline constexpr auto name = definition;
KD_REPORT_FIELDS(KD_REPORT_FIELD)
KD_REPORT_SUPERVISOR_FIELDS(KD_REPORT_FIELD)
KD_REPORT_ENTRY_FIELDS(KD_REPORT_FIELD)
#undef KD_REPORT_FIELD

// Every field a fact may fill, in the order above.
const std::vector<FieldInfo>& all_fields();
// Every field the supervisor writes, its lists' entries' included.
const std::vector<FieldInfo>& supervisor_fields();

// The field a fact's pointer names (a keyed field's "/timing/ceilings/copy" included), or nullptr: never one of
// the supervisor's.
const FieldInfo* find_field(std::string_view pointer);

// The JSON type of a kind's values: "string", "boolean", "integer", "number", "array" or "object".
const char* json_type(Kind kind);

// Whether a value is of the field's kind (null only where the field is nullable).
bool fits(const FieldInfo& field, const nlohmann::json& value);

// The value at a field of a report (of an entry, for a field within a list), or null when it is absent or of
// another kind (never throws: a report may come from another machine's file).
const nlohmann::json& value_at(const nlohmann::json& report, const FieldInfo& field);

// A field's value as its type: nothing when absent, null or of another type.
namespace detail {
// v as T, v being of T's kind or null: nothing for null, or for a negative number where a count belongs.
template <class T>
std::optional<T> as(const nlohmann::json& v) {
  if (v.is_null()) return std::nullopt;
  if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>)
    if (!v.is_number_unsigned() && v.get<int64_t>() < 0) return std::nullopt;
  return v.get<T>();
}
}  // namespace detail
template <class T>
std::optional<T> read(const nlohmann::json& report, const Field<T>& f) {
  return detail::as<T>(value_at(report, f.info));
}
template <class T>
std::optional<T> read(const nlohmann::json& report, const Field<std::optional<T>>& f) {
  return detail::as<T>(value_at(report, f.info));
}
// An object or list field, null when absent or of another kind.
inline const nlohmann::json& read(const nlohmann::json& report, const Field<nlohmann::json>& f) {
  return value_at(report, f.info);
}

// A field's value as JSON, null when absent or of another kind: for a reporter that shows it as it is ("?" or "-"
// when null).
template <class T>
const nlohmann::json& json_at(const nlohmann::json& report, const Field<T>& f) {
  return value_at(report, f.info);
}

// A fact's value as it goes on the wire: std::nullopt is null.
template <class T>
nlohmann::json to_value(const T& v) { return nlohmann::json(v); }
template <class T>
nlohmann::json to_value(const std::optional<T>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

// "text", or nothing when it is empty: a value the probe leaves empty when it does not know it.
inline std::optional<std::string> unless_empty(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

template <class T>
using ValueOf = typename detail::Same<T>::type;

// A field's place in a report, made when absent: for a list or an object changed in place (a warning added).
template <class T>
nlohmann::json& slot(nlohmann::json* report, const Field<T>& f) {
  return (*report)[nlohmann::json::json_pointer(f.info.pointer)];
}

// Sets a field of a report (of an entry, for a field within a list) to a value of its type, making the objects on
// its way.
template <class T>
void put(nlohmann::json* report, const Field<T>& f, const ValueOf<T>& value) {
  (*report)[nlohmann::json::json_pointer(f.info.pointer)] = to_value(value);
}

}  // namespace kd::report
