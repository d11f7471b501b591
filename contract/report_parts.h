// The report's sections as a whole (copied whole into a bundle or a merged report), and what lies inside its
// object fields, each named once, with its type: an NVML GPU entry, an L5 step, a
// range point, a ceiling, the python object, what was requested. The reporters read these parts through the rows
// below (read(point, report::point_value)), never by key. tests/unit/report_fields_test.cpp checks each against
// schema/report.schema.json. within: where the object is ("*": any entry of a list or of an object of entries).
#pragma once
#include "report_fields.h"

namespace kd::report {

#define KD_REPORT_PART_FIELDS(X)                                                                                     \
  X(section_runtime, structured("/runtime", Kind::object))                                                           \
  X(section_pytorch, structured("/pytorch", Kind::object))                                                           \
  X(section_execution, structured("/execution", Kind::object))                                                       \
  X(section_app, structured("/app", Kind::object, true))                                                             \
  X(section_memory, structured("/memory", Kind::object, true))                                                       \
  X(section_peer, structured("/peer", Kind::object, true))                                                           \
  X(section_collective, structured("/collective", Kind::object, true))                                               \
  X(section_timing, structured("/timing", Kind::object, true))                                                       \
  X(section_sharing, structured("/sharing", Kind::object, true))                                                     \
  X(app_embeddings_input, plain<std::string>("/input", "/app/embeddings"))                                           \
  X(app_embeddings_output, plain<std::string>("/output", "/app/embeddings"))                                         \
  X(app_embeddings_count, plain<int64_t>("/count", "/app/embeddings"))                                               \
  X(app_embeddings_dim, plain<int64_t>("/dim", "/app/embeddings"))                                                   \
  X(app_embeddings_eval_mode, plain<bool>("/eval_mode", "/app/embeddings"))                                          \
  X(app_embeddings_inference_mode, plain<bool>("/inference_mode", "/app/embeddings"))                                \
  X(app_embeddings_contract, plain<std::string>("/contract", "/app/embeddings"))                                     \
  X(cpu_reference_max_abs_error, nullable<double>("/cpu_reference/max_abs_error", "/app/embeddings"))                \
  X(cpu_reference_max_rel_error, nullable<double>("/cpu_reference/max_rel_error", "/app/embeddings"))                \
  X(cpu_reference_atol, plain<double>("/cpu_reference/atol", "/app/embeddings"))                                     \
  X(cpu_reference_rtol, plain<double>("/cpu_reference/rtol", "/app/embeddings"))                                     \
  X(cpu_reference_within, plain<bool>("/cpu_reference/within", "/app/embeddings"))                                   \
  X(rebatched_max_abs_error, nullable<double>("/batch_size_change/max_abs_error", "/app/embeddings"))                \
  X(rebatched_max_rel_error, nullable<double>("/batch_size_change/max_rel_error", "/app/embeddings"))                \
  X(rebatched_atol, plain<double>("/batch_size_change/atol", "/app/embeddings"))                                     \
  X(rebatched_rtol, plain<double>("/batch_size_change/rtol", "/app/embeddings"))                                     \
  X(rebatched_within, plain<bool>("/batch_size_change/within", "/app/embeddings"))                                   \
  X(app_training_input, plain<std::string>("/input", "/app/training"))                                               \
  X(app_training_loss, nullable<double>("/loss", "/app/training"))                                                   \
  X(app_training_trainable_changed, plain<int64_t>("/trainable_changed", "/app/training"))                           \
  X(app_training_trainable_total, plain<int64_t>("/trainable_total", "/app/training"))                               \
  X(app_training_frozen_changed, plain<int64_t>("/frozen_changed", "/app/training"))                                 \
  X(app_training_frozen_total, plain<int64_t>("/frozen_total", "/app/training"))                                     \
  X(app_training_eval_without_dropout, plain<bool>("/eval_without_dropout", "/app/training"))                        \
  X(app_training_train_mode_restored, plain<bool>("/train_mode_restored", "/app/training"))                          \
  X(app_training_state_identical, plain<bool>("/state_identical", "/app/training"))                                  \
  X(app_training_state_bytes, plain<uint64_t>("/state_bytes", "/app/training"))                                      \
  X(extension_library, plain<std::string>("/library", "/app/extensions/*"))                                          \
  X(extension_loaded, plain<bool>("/loaded", "/app/extensions/*"))                                                   \
  X(extension_operators, plain<std::vector<std::string>>("/operators", "/app/extensions/*"))                         \
  X(extension_operator_count, plain<int64_t>("/operator_count", "/app/extensions/*"))                                \
  X(output_name, plain<std::string>("/name", "/app/model/output_list/*"))                                            \
  X(output_tensor, plain<bool>("/tensor", "/app/model/output_list/*"))                                               \
  X(output_shape, structured("/shape", Kind::array, true, "/app/model/output_list/*"))                               \
  X(output_dtype, plain<std::string>("/dtype", "/app/model/output_list/*"))                                          \
  X(output_device, nullable<std::string>("/device", "/app/model/output_list/*"))                                     \
  X(device_assert_gpu_error, plain<std::string>("/gpu_error", "/app/model/device_assert"))                           \
  X(device_assert_cpu_rerun, plain<std::string>("/cpu_rerun", "/app/model/device_assert"))                           \
  X(device_assert_cpu_error, nullable<std::string>("/cpu_error", "/app/model/device_assert"))                        \
  X(device_assert_gpu_process, plain<std::string>("/gpu_process", "/app/model/device_assert"))                       \
  X(model_reference_vectors, plain<uint64_t>("/vectors", "/app/model/reference"))                                    \
  X(model_reference_dim, plain<uint64_t>("/dim", "/app/model/reference"))                                            \
  X(model_reference_min_cosine, nullable<double>("/min_cosine", "/app/model/reference"))                             \
  X(model_reference_threshold, plain<double>("/threshold", "/app/model/reference"))                                  \
  X(stop_resume_items, plain<int64_t>("/items", "/app/stop_resume"))                                                 \
  X(stop_resume_batch_size, plain<int64_t>("/batch_size", "/app/stop_resume"))                                       \
  X(stop_resume_batches, plain<int64_t>("/batches", "/app/stop_resume"))                                             \
  X(stop_resume_runs, structured("/runs", Kind::array, false, "/app/stop_resume"))                                   \
  X(stop_resume_contract, plain<std::string>("/contract", "/app/stop_resume"))                                       \
  X(resume_run_signal, nullable<std::string>("/signal", "/app/stop_resume/runs/*"))                                  \
  X(resume_run_started_at, plain<int64_t>("/started_at", "/app/stop_resume/runs/*"))                                 \
  X(resume_run_sent_after, nullable<int64_t>("/sent_after", "/app/stop_resume/runs/*"))                              \
  X(resume_run_ended_at, plain<int64_t>("/ended_at", "/app/stop_resume/runs/*"))                                     \
  X(resume_run_exit, plain<std::string>("/exit", "/app/stop_resume/runs/*"))                                         \
  X(resume_run_uncommitted_bytes, plain<int64_t>("/uncommitted_bytes", "/app/stop_resume/runs/*"))                   \
  X(resume_run_torn_tail, plain<bool>("/torn_tail", "/app/stop_resume/runs/*"))                                      \
  X(across_devices, plain<int64_t>("/devices", "/app/across_devices"))                                               \
  X(across_unit, plain<std::string>("/unit", "/app/across_devices"))                                                 \
  X(across_split, structured("/split", Kind::array, false, "/app/across_devices"))                                   \
  X(across_split_device, plain<int64_t>("/device", "/app/across_devices/split/*"))                                   \
  X(across_split_ids, plain<int64_t>("/ids", "/app/across_devices/split/*"))                                         \
  X(across_gathered, plain<int64_t>("/gathered", "/app/across_devices"))                                             \
  X(across_ids, plain<int64_t>("/ids", "/app/across_devices"))                                                       \
  X(across_contract, plain<std::string>("/contract", "/app/across_devices"))                                         \
  X(across_model_devices, plain<int64_t>("/devices", "/app/across_devices_model"))                                   \
  X(across_model_unit, plain<std::string>("/unit", "/app/across_devices_model"))                                     \
  X(across_model_split, structured("/split", Kind::array, false, "/app/across_devices_model"))                       \
  X(across_model_split_device, plain<int64_t>("/device", "/app/across_devices_model/split/*"))                       \
  X(across_model_split_ids, plain<int64_t>("/ids", "/app/across_devices_model/split/*"))                             \
  X(across_model_gathered, plain<int64_t>("/gathered", "/app/across_devices_model"))                                 \
  X(across_model_ids, plain<int64_t>("/ids", "/app/across_devices_model"))                                           \
  X(across_model_contract, plain<std::string>("/contract", "/app/across_devices_model"))                             \
  X(python_version, nullable<std::string>("/version", "/python"))                                                    \
  X(python_import, plain<std::string>("/import", "/python"))                                                         \
  X(python_torch_version, nullable<std::string>("/torch_version", "/python"))                                        \
  X(python_cuda, nullable<std::string>("/cuda", "/python"))                                                          \
  X(python_hip, nullable<std::string>("/hip", "/python"))                                                            \
  X(device_name, plain<std::string>("/name", "/device"))                                                             \
  X(device_capability, plain<std::string>("/capability", "/device"))                                                 \
  X(device_total_memory_bytes, plain<uint64_t>("/total_memory_bytes", "/device"))                                    \
  X(device_entry_index, plain<int64_t>("/index", "/device"))                                                         \
  X(device_multiprocessors, plain<int64_t>("/multiprocessors", "/device"))                                           \
  X(device_pci_bus_id, plain<std::string>("/pci_bus_id", "/device"))                                                 \
  X(device_compute_mode, plain<std::string>("/compute_mode", "/device"))                                              \
  X(host_status, plain<std::string>("/status", "/host"))                                                             \
  X(host_message, nullable<std::string>("/message", "/host"))                                                        \
  X(host_tool, plain<std::string>("/tool", "/host"))                                                                 \
  X(host_duration_ms, plain<double>("/duration_ms", "/host"))                                                        \
  X(host_note, plain<std::string>("/note", "/host"))                                                                 \
  X(host_gpus, structured("/gpus", Kind::array, false, "/host"))                                                     \
  X(host_gpu_driver_version, plain<std::string>("/driver_version", "/host/gpus/*"))                                  \
  X(host_gpu_memory_total_mib, plain<int64_t>("/memory_total_mib", "/host/gpus/*"))                                  \
  X(host_limits, structured("/limits", Kind::object, false, "/host"))                                                 \
  X(limit_soft, nullable<uint64_t>("/soft", "/host/limits/*"))                                                        \
  X(limit_hard, nullable<uint64_t>("/hard", "/host/limits/*"))                                                        \
  X(host_container, structured("/container", Kind::object, false, "/host"))                                           \
  X(container_detected, plain<bool>("/detected", "/host/container"))                                                  \
  X(container_kind, nullable<std::string>("/kind", "/host/container"))                                                \
  X(cgroup_version, nullable<std::string>("/cgroup_version", "/host/container"))                                      \
  X(cgroup_memory_limit_bytes, nullable<uint64_t>("/memory_limit_bytes", "/host/container"))                          \
  X(cgroup_memory_used_bytes, nullable<uint64_t>("/memory_used_bytes", "/host/container"))                            \
  X(cgroup_cpu_quota_cores, nullable<double>("/cpu_quota_cores", "/host/container"))                                  \
  X(cgroup_pids_limit, nullable<int64_t>("/pids_limit", "/host/container"))                                           \
  X(process_cpus, plain<int64_t>("/cpus", "/host/container"))                                                         \
  X(host_shm, structured("/shm", Kind::object, false, "/host"))                                                       \
  X(shm_size_bytes, nullable<uint64_t>("/size_bytes", "/host/shm"))                                                   \
  X(shm_free_bytes, nullable<uint64_t>("/free_bytes", "/host/shm"))                                                   \
  X(host_temp, structured("/temp", Kind::object, false, "/host"))                                                     \
  X(temp_folder, plain<std::string>("/folder", "/host/temp"))                                                         \
  X(temp_skipped, plain<std::vector<std::string>>("/skipped", "/host/temp"))                                          \
  X(host_nvidia, structured("/nvidia", Kind::object, false, "/host"))                                                 \
  X(nvidia_kernel_driver, nullable<std::string>("/kernel_driver_version", "/host/nvidia"))                            \
  X(nvidia_uvm_loaded, nullable<bool>("/uvm_loaded", "/host/nvidia"))                                                 \
  X(nvidia_device_nodes, structured("/device_nodes", Kind::array, false, "/host/nvidia"))                             \
  X(device_node_name, plain<std::string>("/name", "/host/nvidia/device_nodes/*"))                                     \
  X(device_node_accessible, plain<bool>("/accessible", "/host/nvidia/device_nodes/*"))                                \
  X(nvidia_compat_on_path, plain<bool>("/compat_libcuda_on_path", "/host/nvidia"))                                    \
  X(libcuda_loaded, plain<bool>("/loaded", "/host/nvidia/libcuda"))                                                   \
  X(libcuda_source, nullable<std::string>("/source", "/host/nvidia/libcuda"))                                         \
  X(libcuda_version, nullable<std::string>("/version", "/host/nvidia/libcuda"))                                       \
  X(libcuda_cuda_version, nullable<std::string>("/cuda_version", "/host/nvidia/libcuda"))                             \
  X(host_infiniband_devices, plain<int64_t>("/infiniband_devices", "/host"))                                          \
  X(host_environment, structured("/environment", Kind::array, false, "/host"))                                        \
  X(env_name, plain<std::string>("/name", "/host/environment/*"))                                                     \
  X(env_valid, nullable<bool>("/valid", "/host/environment/*"))                                                       \
  X(env_value, nullable<std::string>("/value", "/host/environment/*"))                                                \
  X(env_note, nullable<std::string>("/note", "/host/environment/*"))                                                  \
  X(nvml_status, plain<std::string>("/status", "/host/nvml"))                                                        \
  X(nvml_message, nullable<std::string>("/message", "/host/nvml"))                                                   \
  X(nvml_duration_ms, plain<double>("/duration_ms", "/host/nvml"))                                                   \
  X(nvml_driver_version, nullable<std::string>("/driver_version", "/host/nvml"))                                     \
  X(nvml_cuda_driver_version, nullable<std::string>("/cuda_driver_version", "/host/nvml"))                           \
  X(nvml_gpus, structured("/gpus", Kind::array, false, "/host/nvml"))                                                \
  X(nvml_gpu_index, plain<int64_t>("/index", "/host/nvml/gpus/*"))                                                   \
  X(nvml_gpu_name, nullable<std::string>("/name", "/host/nvml/gpus/*"))                                              \
  X(nvml_gpu_pci_bus_id, nullable<std::string>("/pci_bus_id", "/host/nvml/gpus/*"))                                  \
  X(nvml_gpu_memory_total_mib, nullable<int64_t>("/memory_total_mib", "/host/nvml/gpus/*"))                          \
  X(nvml_gpu_memory_used_mib, nullable<int64_t>("/memory_used_mib", "/host/nvml/gpus/*"))                            \
  X(nvml_gpu_ecc_mode, nullable<std::string>("/ecc_mode", "/host/nvml/gpus/*"))                                      \
  X(nvml_gpu_ecc_volatile_corrected, nullable<int64_t>("/ecc_volatile_corrected", "/host/nvml/gpus/*"))              \
  X(nvml_gpu_ecc_volatile_uncorrected, nullable<int64_t>("/ecc_volatile_uncorrected", "/host/nvml/gpus/*"))          \
  X(nvml_gpu_pcie_gen, nullable<int64_t>("/pcie_gen", "/host/nvml/gpus/*"))                                          \
  X(nvml_gpu_pcie_gen_max, nullable<int64_t>("/pcie_gen_max", "/host/nvml/gpus/*"))                                  \
  X(nvml_gpu_pcie_width, nullable<int64_t>("/pcie_width", "/host/nvml/gpus/*"))                                      \
  X(nvml_gpu_pcie_width_max, nullable<int64_t>("/pcie_width_max", "/host/nvml/gpus/*"))                              \
  X(nvml_gpu_c2c_links, nullable<int64_t>("/c2c_links", "/host/nvml/gpus/*"))                                        \
  X(nvml_gpu_c2c_gb_s, nullable<double>("/c2c_gb_s", "/host/nvml/gpus/*"))                                           \
  X(nvml_gpu_sm_clock_mhz, nullable<int64_t>("/sm_clock_mhz", "/host/nvml/gpus/*"))                                  \
  X(nvml_gpu_sm_clock_max_mhz, nullable<int64_t>("/sm_clock_max_mhz", "/host/nvml/gpus/*"))                          \
  X(nvml_gpu_mem_clock_mhz, nullable<int64_t>("/mem_clock_mhz", "/host/nvml/gpus/*"))                                \
  X(nvml_gpu_mem_clock_max_mhz, nullable<int64_t>("/mem_clock_max_mhz", "/host/nvml/gpus/*"))                        \
  X(nvml_gpu_temperature_c, nullable<int64_t>("/temperature_c", "/host/nvml/gpus/*"))                                \
  X(nvml_gpu_retired_pages_pending, nullable<bool>("/retired_pages_pending", "/host/nvml/gpus/*"))                   \
  X(nvml_gpu_row_remap_pending, nullable<bool>("/row_remap_pending", "/host/nvml/gpus/*"))                           \
  X(nvml_gpu_row_remap_failed, nullable<bool>("/row_remap_failed", "/host/nvml/gpus/*"))                             \
  X(nvml_gpu_clock_event_reasons, nullable<std::vector<std::string>>("/clock_event_reasons", "/host/nvml/gpus/*"))   \
  X(nvml_gpu_power_draw_w, nullable<double>("/power_draw_w", "/host/nvml/gpus/*"))                                   \
  X(nvml_gpu_power_limit_w, nullable<double>("/power_limit_w", "/host/nvml/gpus/*"))                                 \
  X(nvml_gpu_persistence_mode, nullable<std::string>("/persistence_mode", "/host/nvml/gpus/*"))                      \
  X(nvml_gpu_compute_mode, nullable<std::string>("/compute_mode", "/host/nvml/gpus/*"))                              \
  X(nvml_gpu_mig_mode, nullable<std::string>("/mig_mode", "/host/nvml/gpus/*"))                                      \
  X(nvml_gpu_fabric_state, nullable<std::string>("/fabric_state", "/host/nvml/gpus/*"))                               \
  X(nvml_gpu_fabric_status, nullable<std::string>("/fabric_status", "/host/nvml/gpus/*"))                             \
  X(nvml_gpu_utilization_percent, nullable<int64_t>("/utilization_percent", "/host/nvml/gpus/*"))                    \
  X(nvml_gpu_compute_processes, nullable<int64_t>("/compute_processes", "/host/nvml/gpus/*"))                        \
  X(nvml_gpu_compute_processes_memory_mib, nullable<int64_t>("/compute_processes_memory_mib", "/host/nvml/gpus/*"))  \
  X(nvml_gpu_problems, plain<std::vector<std::string>>("/problems", "/host/nvml/gpus/*"))                            \
  X(nvml_gpu_warnings, plain<std::vector<std::string>>("/warnings", "/host/nvml/gpus/*"))                            \
  X(kernel_log_readable, plain<bool>("/readable", "/host/kernel_log"))                                                 \
  X(kernel_log_source, nullable<std::string>("/source", "/host/kernel_log"))                                           \
  X(kernel_log_why_not, nullable<std::string>("/why_not", "/host/kernel_log"))                                         \
  X(kernel_log_records, plain<int64_t>("/records", "/host/kernel_log"))                                                \
  X(kernel_log_truncated, plain<bool>("/truncated", "/host/kernel_log"))                                               \
  X(kernel_log_from_boot, plain<bool>("/from_boot", "/host/kernel_log"))                                               \
  X(kernel_log_oldest_s_ago, nullable<double>("/oldest_record_s_ago", "/host/kernel_log"))                             \
  X(kernel_log_driver_loaded_s_ago, nullable<double>("/driver_loaded_s_ago", "/host/kernel_log"))                      \
  X(kernel_log_duration_ms, plain<double>("/duration_ms", "/host/kernel_log"))                                         \
  X(kernel_log_events, structured("/events", Kind::array, true, "/host/kernel_log"))                                   \
  X(xid_kind, plain<std::string>("/kind", "/host/kernel_log/events/*"))                                                \
  X(xid_pci_bus_id, plain<std::string>("/pci_bus_id", "/host/kernel_log/events/*"))                                    \
  X(xid_code, plain<int64_t>("/code", "/host/kernel_log/events/*"))                                                    \
  X(xid_meaning, plain<std::string>("/meaning", "/host/kernel_log/events/*"))                                          \
  X(xid_unusable, plain<bool>("/unusable", "/host/kernel_log/events/*"))                                               \
  X(xid_action, nullable<std::string>("/action", "/host/kernel_log/events/*"))                                         \
  X(xid_count, plain<int64_t>("/count", "/host/kernel_log/events/*"))                                                  \
  X(xid_first_s_ago, plain<double>("/first_s_ago", "/host/kernel_log/events/*"))                                       \
  X(xid_last_s_ago, plain<double>("/last_s_ago", "/host/kernel_log/events/*"))                                         \
  X(xid_after_driver_load, plain<bool>("/after_driver_load", "/host/kernel_log/events/*"))                             \
  X(xid_recovery_action, nullable<std::string>("/recovery_action", "/host/kernel_log/events/*"))                       \
  X(xid_severity, nullable<std::string>("/severity", "/host/kernel_log/events/*"))                                     \
  X(host_link_workload, plain<std::string>("/workload", "/timing/host_link"))                                         \
  X(host_link_link_kind, nullable<std::string>("/link_kind", "/timing/host_link"))                                    \
  X(host_link_generation, nullable<int64_t>("/generation", "/timing/host_link"))                                      \
  X(host_link_width, nullable<int64_t>("/width", "/timing/host_link"))                                                \
  X(host_link_generation_max, nullable<int64_t>("/generation_max", "/timing/host_link"))                              \
  X(host_link_width_max, nullable<int64_t>("/width_max", "/timing/host_link"))                                        \
  X(host_link_expected_gb_s, nullable<double>("/expected_gb_s", "/timing/host_link"))                                 \
  X(host_link_sizes, structured("/sizes", Kind::array, false, "/timing/host_link"))                                   \
  X(host_link_h2d_gb_s, plain<double>("/h2d_gb_s", "/timing/host_link"))                                              \
  X(host_link_d2h_gb_s, plain<double>("/d2h_gb_s", "/timing/host_link"))                                              \
  X(host_link_h2d_fraction, nullable<double>("/h2d_fraction", "/timing/host_link"))                                   \
  X(host_link_d2h_fraction, nullable<double>("/d2h_fraction", "/timing/host_link"))                                   \
  X(host_link_floor, plain<double>("/floor", "/timing/host_link"))                                                    \
  X(host_link_below_floor, plain<bool>("/below_floor", "/timing/host_link"))                                          \
  X(host_link_note, nullable<std::string>("/note", "/timing/host_link"))                                              \
  X(host_link_together, structured("/together", Kind::object, true, "/timing/host_link"))                             \
  X(sustained_workload, plain<std::string>("/workload", "/timing/sustained"))                                         \
  X(sustained_seconds, plain<double>("/seconds", "/timing/sustained"))                                                \
  X(sustained_products, plain<int64_t>("/products", "/timing/sustained"))                                             \
  X(sustained_unit, plain<std::string>("/unit", "/timing/sustained"))                                                 \
  X(sustained_first_rate, plain<double>("/first_rate", "/timing/sustained"))                                          \
  X(sustained_steady_rate, plain<double>("/steady_rate", "/timing/sustained"))                                        \
  X(sustained_fraction, plain<double>("/fraction", "/timing/sustained"))                                              \
  X(sustained_floor, plain<double>("/floor", "/timing/sustained"))                                                    \
  X(sustained_below_floor, plain<bool>("/below_floor", "/timing/sustained"))                                          \
  X(sustained_hottest_c, nullable<int64_t>("/hottest_c", "/timing/sustained"))                                        \
  X(sustained_lowest_sm_clock_mhz, nullable<int64_t>("/lowest_sm_clock_mhz", "/timing/sustained"))                    \
  X(sustained_highest_power_w, nullable<double>("/highest_power_w", "/timing/sustained"))                             \
  X(sustained_reasons, plain<std::vector<std::string>>("/reasons", "/timing/sustained"))                              \
  X(sustained_nvml_samples, plain<int64_t>("/nvml_samples", "/timing/sustained"))                                     \
  X(sustained_curve, structured("/curve", Kind::array, false, "/timing/sustained"))                                   \
  X(sustained_nvml, structured("/nvml", Kind::array, false, "/timing/sustained"))                                     \
  X(sustained_fault, nullable<std::string>("/fault", "/timing/sustained"))                                            \
  X(sustained_results_compared, plain<int64_t>("/compared", "/timing/sustained_results"))                             \
  X(sustained_results_differing_products, plain<int64_t>("/differing_products", "/timing/sustained_results"))         \
  X(sustained_results_first_iteration, nullable<int64_t>("/first_iteration", "/timing/sustained_results"))            \
  X(sustained_results_first_elements, nullable<int64_t>("/first_elements", "/timing/sustained_results"))              \
  X(sustained_results_first_max_diff, nullable<double>("/first_max_diff", "/timing/sustained_results"))               \
  X(sustained_results_reference_rows, plain<int64_t>("/reference_rows", "/timing/sustained_results"))                 \
  X(sustained_results_reference_tolerance, plain<double>("/reference_tolerance", "/timing/sustained_results"))        \
  X(sustained_results_reference_start_bad, plain<int64_t>("/reference_start_bad", "/timing/sustained_results"))       \
  X(sustained_results_reference_end_bad, plain<int64_t>("/reference_end_bad", "/timing/sustained_results"))           \
  X(sustained_results_reference_max_diff, plain<double>("/reference_max_diff", "/timing/sustained_results"))          \
  X(integrity_workload, plain<std::string>("/workload", "/timing/memory_integrity"))                                  \
  X(integrity_free_bytes, nullable<int64_t>("/free_bytes", "/timing/memory_integrity"))                               \
  X(integrity_bytes_tested, plain<int64_t>("/bytes_tested", "/timing/memory_integrity"))                              \
  X(integrity_coverage, nullable<double>("/coverage", "/timing/memory_integrity"))                                    \
  X(integrity_chunks, plain<int64_t>("/chunks", "/timing/memory_integrity"))                                          \
  X(integrity_chunk_bytes, plain<int64_t>("/chunk_bytes", "/timing/memory_integrity"))                                \
  X(integrity_patterns, structured("/patterns", Kind::array, false, "/timing/memory_integrity"))                      \
  X(integrity_pass_seconds, plain<double>("/pass_seconds", "/timing/memory_integrity"))                               \
  X(integrity_mismatches, plain<int64_t>("/mismatches", "/timing/memory_integrity"))                                  \
  X(integrity_bad_chunks, plain<int64_t>("/bad_chunks", "/timing/memory_integrity"))                                  \
  X(integrity_first_bad, structured("/first_bad", Kind::object, true, "/timing/memory_integrity"))                    \
  X(integrity_ecc_before, structured("/ecc_before", Kind::object, true, "/timing/memory_integrity"))                  \
  X(integrity_ecc_after, structured("/ecc_after", Kind::object, true, "/timing/memory_integrity"))                    \
  X(segments_workload, plain<std::string>("/workload", "/timing/segments"))                                          \
  X(segments_load_ms, plain<double>("/load_ms", "/timing/segments"))                                                 \
  X(segments_cold_prepare_ms, plain<double>("/cold/prepare_ms", "/timing/segments"))                                 \
  X(segments_cold_compute_ms, plain<double>("/cold/compute_ms", "/timing/segments"))                                 \
  X(segments_cold_compute_event_ms, nullable<double>("/cold/compute_event_ms", "/timing/segments"))                  \
  X(segments_cold_write_ms, plain<double>("/cold/write_ms", "/timing/segments"))                                     \
  X(segments_warm_n, plain<int64_t>("/warm/n", "/timing/segments"))                                                  \
  X(segments_warm_prepare_median_ms, plain<double>("/warm/prepare_ms/median", "/timing/segments"))                   \
  X(segments_warm_prepare_p95_ms, plain<double>("/warm/prepare_ms/p95", "/timing/segments"))                         \
  X(segments_warm_compute_median_ms, plain<double>("/warm/compute_ms/median", "/timing/segments"))                   \
  X(segments_warm_compute_p95_ms, plain<double>("/warm/compute_ms/p95", "/timing/segments"))                         \
  X(segments_warm_compute_event, structured("/warm/compute_event_ms", Kind::object, true, "/timing/segments"))       \
  X(segments_warm_compute_event_median_ms, plain<double>("/warm/compute_event_ms/median", "/timing/segments"))       \
  X(segments_warm_compute_event_p95_ms, plain<double>("/warm/compute_event_ms/p95", "/timing/segments"))             \
  X(segments_warm_write_median_ms, plain<double>("/warm/write_ms/median", "/timing/segments"))                       \
  X(segments_warm_write_p95_ms, plain<double>("/warm/write_ms/p95", "/timing/segments"))                             \
  X(ceiling_measured, plain<double>("/measured", "/timing/ceilings/*"))                                              \
  X(ceiling_reference, nullable<double>("/reference", "/timing/ceilings/*"))                                         \
  X(ceiling_fraction, nullable<double>("/fraction", "/timing/ceilings/*"))                                           \
  X(ceiling_floor, plain<double>("/floor", "/timing/ceilings/*"))                                                    \
  X(ceiling_unit, plain<std::string>("/unit", "/timing/ceilings/*"))                                                 \
  X(ceiling_workload, plain<std::string>("/workload", "/timing/ceilings/*"))                                         \
  X(ceiling_repeats, plain<int64_t>("/repeats", "/timing/ceilings/*"))                                               \
  X(ceiling_min, plain<double>("/min", "/timing/ceilings/*"))                                                        \
  X(ceiling_max, plain<double>("/max", "/timing/ceilings/*"))                                                        \
  X(ceiling_floor_kind, plain<std::string>("/floor_kind", "/timing/ceilings/*"))                                        \
  X(ceiling_floor_source, plain<std::string>("/floor_source", "/timing/ceilings/*"))                                    \
  X(ceiling_below_floor, plain<bool>("/below_floor", "/timing/ceilings/*"))                                             \
  X(ceiling_measurements, structured("/measurements", Kind::array, false, "/timing/ceilings/*"))                        \
  X(iterations_n, plain<int64_t>("/n", "/memory/iterations"))                                                        \
  X(iterations_allocated_bytes, structured("/allocated_bytes", Kind::array, true, "/memory/iterations"))             \
  X(iterations_leak_injected, plain<bool>("/leak_injected", "/memory/iterations"))                                   \
  X(step_name, plain<std::string>("/name", "/memory/steps/*"))                                                       \
  X(step_allocated_bytes, plain<uint64_t>("/allocated_bytes", "/memory/steps/*"))                                    \
  X(step_reserved_bytes, plain<uint64_t>("/reserved_bytes", "/memory/steps/*"))                                      \
  X(step_peak_allocated_bytes, plain<uint64_t>("/peak_allocated_bytes", "/memory/steps/*"))                          \
  X(step_device_free_bytes, plain<uint64_t>("/device_free_bytes", "/memory/steps/*"))                                \
  X(step_device_total_bytes, plain<uint64_t>("/device_total_bytes", "/memory/steps/*"))                              \
  X(empty_cache_returned_bytes, plain<uint64_t>("/returned_bytes", "/memory/empty_cache"))                           \
  X(empty_cache_cached_before_bytes, plain<uint64_t>("/cached_before_bytes", "/memory/empty_cache"))                 \
  X(empty_cache_allocated_before_bytes, plain<uint64_t>("/allocated_before_bytes", "/memory/empty_cache"))           \
  X(empty_cache_allocated_after_bytes, plain<uint64_t>("/allocated_after_bytes", "/memory/empty_cache"))             \
  X(empty_cache_referenced_intact, plain<bool>("/referenced_intact", "/memory/empty_cache"))                         \
  X(oom_phase, plain<std::string>("/phase", "/memory/oom"))                                                          \
  X(oom_requested_bytes, nullable<uint64_t>("/requested_bytes", "/memory/oom"))                                      \
  X(oom_device_free_bytes, nullable<uint64_t>("/device_free_bytes", "/memory/oom"))                                  \
  X(oom_device_total_bytes, nullable<uint64_t>("/device_total_bytes", "/memory/oom"))                                \
  X(oom_reserved_bytes, nullable<uint64_t>("/reserved_bytes", "/memory/oom"))                                        \
  X(oom_allocated_bytes, nullable<uint64_t>("/allocated_bytes", "/memory/oom"))                                      \
  X(oom_held_by_others_bytes, nullable<uint64_t>("/held_by_others_bytes", "/memory/oom"))                            \
  X(oom_fraction, nullable<double>("/fraction", "/memory/oom"))                                                      \
  X(range_axis, plain<std::string>("/axis", "/memory/range"))                                                        \
  X(range_workload, plain<std::string>("/workload", "/memory/range"))                                                \
  X(range_fixed, structured("/fixed", Kind::object, false, "/memory/range"))                                         \
  X(fixed_batch, plain<int64_t>("/batch", "/memory/range/fixed"))                                                    \
  X(fixed_max_length, plain<int64_t>("/max_length", "/memory/range/fixed"))                                          \
  X(range_warm_runs, plain<int64_t>("/warm_runs", "/memory/range"))                                                  \
  X(range_budget_s, plain<double>("/budget_s", "/memory/range"))                                                     \
  X(range_budget_capped_by_timeout, plain<bool>("/budget_capped_by_timeout", "/memory/range"))                       \
  X(range_memory_fraction, plain<double>("/memory_fraction", "/memory/range"))                                       \
  X(range_memory_limit, plain<std::string>("/memory_limit", "/memory/range"))                                        \
  X(range_memory_cap_bytes, nullable<uint64_t>("/memory_cap_bytes", "/memory/range"))                                \
  X(range_device_free_bytes, nullable<uint64_t>("/device_free_bytes", "/memory/range"))                              \
  X(range_memory_note, nullable<std::string>("/memory_note", "/memory/range"))                                       \
  X(range_host_memory_share, nullable<double>("/host_memory_share", "/memory/range"))                                \
  X(range_points, structured("/points", Kind::array, false, "/memory/range"))                                        \
  X(range_largest_pass, nullable<int64_t>("/largest_pass", "/memory/range"))                                         \
  X(range_first_fail, nullable<int64_t>("/first_fail", "/memory/range"))                                             \
  X(range_stop_reason, plain<std::string>("/stop_reason", "/memory/range"))                                          \
  X(range_recoveries, nullable<int64_t>("/recoveries", "/memory/range"))                                             \
  X(range_seconds, plain<double>("/seconds", "/memory/range"))                                                       \
  X(range_knee, nullable<int64_t>("/knee", "/memory/range"))                                                         \
  X(range_knee_min_gain, plain<double>("/knee_min_gain", "/memory/range"))                                           \
  X(range_latency_limit_ms, nullable<double>("/latency_limit_ms", "/memory/range"))                                  \
  X(range_limit, structured("/limit", Kind::object, true, "/memory/range"))                                          \
  X(limit_processes, plain<int64_t>("/processes", "/memory/range/limit"))                                            \
  X(limit_process, plain<int64_t>("/process", "/memory/range/limit"))                                                \
  X(limit_phase, plain<std::string>("/phase", "/memory/range/limit"))                                                \
  X(limit_seconds, nullable<double>("/seconds", "/memory/range/limit"))                                              \
  X(limit_note, nullable<std::string>("/note", "/memory/range/limit"))                                               \
  X(point_value, plain<int64_t>("/value", "/memory/range/points/*"))                                                 \
  X(point_result, plain<std::string>("/result", "/memory/range/points/*"))                                           \
  X(point_ran, plain<bool>("/ran", "/memory/range/points/*"))                                                        \
  X(point_seconds, plain<double>("/seconds", "/memory/range/points/*"))                                              \
  X(point_note, nullable<std::string>("/note", "/memory/range/points/*"))                                            \
  X(point_warm_median_ms, nullable<double>("/warm_median_ms", "/memory/range/points/*"))                             \
  X(point_cold_ms, nullable<double>("/cold_ms", "/memory/range/points/*"))                                           \
  X(point_throughput_per_s, nullable<double>("/throughput_per_s", "/memory/range/points/*"))                         \
  X(point_p50_ms, nullable<double>("/p50_ms", "/memory/range/points/*"))                                             \
  X(point_p95_ms, nullable<double>("/p95_ms", "/memory/range/points/*"))                                             \
  X(point_peak_allocated_bytes, nullable<uint64_t>("/peak_allocated_bytes", "/memory/range/points/*"))               \
  X(point_reserved_bytes, nullable<uint64_t>("/reserved_bytes", "/memory/range/points/*"))                           \
  X(point_estimated_bytes, nullable<uint64_t>("/estimated_bytes", "/memory/range/points/*"))                         \
  X(point_rss_peak_bytes, nullable<uint64_t>("/rss_peak_bytes", "/memory/range/points/*"))                           \
  X(point_processes, structured("/processes", Kind::array, false, "/memory/range/points/*"))                         \
  X(process_index, plain<int64_t>("/process", "/memory/range/points/*/processes/*"))                                 \
  X(process_result, plain<std::string>("/result", "/memory/range/points/*/processes/*"))                             \
  X(process_phase, plain<std::string>("/phase", "/memory/range/points/*/processes/*"))                               \
  X(process_seconds, nullable<double>("/seconds", "/memory/range/points/*/processes/*"))                             \
  X(process_warm_median_ms, nullable<double>("/warm_median_ms", "/memory/range/points/*/processes/*"))               \
  X(process_cold_ms, nullable<double>("/cold_ms", "/memory/range/points/*/processes/*"))                             \
  X(process_rss_peak_bytes, nullable<uint64_t>("/rss_peak_bytes", "/memory/range/points/*/processes/*"))             \
  X(process_device_peak_bytes, nullable<uint64_t>("/device_peak_bytes", "/memory/range/points/*/processes/*"))       \
  X(process_device_reserved_bytes, nullable<uint64_t>("/device_reserved_bytes", "/memory/range/points/*/processes/*"))\
  X(process_device_total_bytes, nullable<uint64_t>("/device_total_bytes", "/memory/range/points/*/processes/*"))     \
  X(process_exit, nullable<std::string>("/exit", "/memory/range/points/*/processes/*"))                              \
  X(process_note, nullable<std::string>("/note", "/memory/range/points/*/processes/*"))                              \
  X(copy_src, plain<int64_t>("/src", "/peer/copies/*"))                                                              \
  X(copy_dst, plain<int64_t>("/dst", "/peer/copies/*"))                                                              \
  X(copy_path, plain<std::string>("/path", "/peer/copies/*"))                                                        \
  X(copy_bytes, plain<int64_t>("/bytes", "/peer/copies/*"))                                                          \
  X(copy_mismatches, plain<int64_t>("/mismatches", "/peer/copies/*"))                                                \
  X(copy_verified, plain<bool>("/verified", "/peer/copies/*"))                                                       \
  X(bandwidth_unit, plain<std::string>("/unit", "/peer/bandwidth"))                                                  \
  X(bandwidth_bytes, plain<int64_t>("/bytes", "/peer/bandwidth"))                                                    \
  X(bandwidth_matrix, structured("/matrix", Kind::array, false, "/peer/bandwidth"))                                  \
  X(bandwidth_pairs, structured("/pairs", Kind::array, false, "/peer/bandwidth"))                                    \
  X(pair_src, plain<int64_t>("/src", "/peer/bandwidth/pairs/*"))                                                     \
  X(pair_dst, plain<int64_t>("/dst", "/peer/bandwidth/pairs/*"))                                                     \
  X(pair_median, plain<double>("/median", "/peer/bandwidth/pairs/*"))                                                \
  X(pair_min, plain<double>("/min", "/peer/bandwidth/pairs/*"))                                                      \
  X(pair_max, plain<double>("/max", "/peer/bandwidth/pairs/*"))                                                      \
  X(pair_repeats, plain<int64_t>("/repeats", "/peer/bandwidth/pairs/*"))                                             \
  X(pair_workload, plain<std::string>("/workload", "/peer/bandwidth/pairs/*"))                                       \
  X(all_reduce_status, plain<std::string>("/status", "/peer/all_reduce"))                                            \
  X(all_reduce_message, plain<std::string>("/message", "/peer/all_reduce"))                                          \
  X(all_reduce_ranks, plain<int64_t>("/ranks", "/peer/all_reduce"))                                                  \
  X(all_reduce_ms, plain<double>("/ms", "/peer/all_reduce"))                                                         \
  X(all_reduce_elements, plain<int64_t>("/elements", "/peer/all_reduce"))                                            \
  X(all_reduce_expected, plain<double>("/expected", "/peer/all_reduce"))                                             \
  X(all_reduce_workload, plain<std::string>("/workload", "/peer/all_reduce"))                                        \
  X(join_status, plain<std::string>("/status", "/collective/join"))                                                  \
  X(join_joined, plain<int64_t>("/joined", "/collective/join"))                                                      \
  X(join_missing_ranks, structured("/missing_ranks", Kind::array, false, "/collective/join"))                        \
  X(join_missing_count, plain<int64_t>("/missing_count", "/collective/join"))                                        \
  X(join_waited_s, plain<double>("/waited_s", "/collective/join"))                                                   \
  X(join_ms, plain<double>("/ms", "/collective/join"))                                                               \
  X(join_workload, plain<std::string>("/workload", "/collective/join"))                                              \
  X(all_reduce_check_status, plain<std::string>("/status", "/collective/all_reduce"))                                \
  X(all_reduce_check_elements, plain<int64_t>("/elements", "/collective/all_reduce"))                                \
  X(all_reduce_check_wrong, plain<int64_t>("/wrong", "/collective/all_reduce"))                                      \
  X(all_reduce_check_ms, plain<double>("/ms", "/collective/all_reduce"))                                             \
  X(all_reduce_check_workload, plain<std::string>("/workload", "/collective/all_reduce"))                            \
  X(broadcast_check_status, plain<std::string>("/status", "/collective/broadcast"))                                  \
  X(broadcast_check_elements, plain<int64_t>("/elements", "/collective/broadcast"))                                  \
  X(broadcast_check_wrong, plain<int64_t>("/wrong", "/collective/broadcast"))                                        \
  X(broadcast_check_ms, plain<double>("/ms", "/collective/broadcast"))                                               \
  X(broadcast_check_workload, plain<std::string>("/workload", "/collective/broadcast"))                              \
  X(barrier_check_status, plain<std::string>("/status", "/collective/barrier"))                                      \
  X(barrier_check_elements, plain<int64_t>("/elements", "/collective/barrier"))                                      \
  X(barrier_check_wrong, plain<int64_t>("/wrong", "/collective/barrier"))                                            \
  X(barrier_check_ms, plain<double>("/ms", "/collective/barrier"))                                                   \
  X(barrier_check_workload, plain<std::string>("/workload", "/collective/barrier"))                                  \
  X(collective_bw_unit, plain<std::string>("/unit", "/collective/bandwidth"))                                        \
  X(collective_bw_formula, plain<std::string>("/formula", "/collective/bandwidth"))                                  \
  X(collective_bw_workload, plain<std::string>("/workload", "/collective/bandwidth"))                                \
  X(collective_bw_floor_busbw, nullable<double>("/floor_busbw", "/collective/bandwidth"))                            \
  X(collective_bw_floor_checked, plain<bool>("/floor_checked", "/collective/bandwidth"))                             \
  X(collective_bw_sizes, structured("/sizes", Kind::array, false, "/collective/bandwidth"))                          \
  X(collective_bw_note, nullable<std::string>("/note", "/collective/bandwidth"))                                     \
  X(collective_bw_floor_source, nullable<std::string>("/floor_source", "/collective/bandwidth"))                        \
  X(collective_bw_measurements, structured("/busbw_measurements", Kind::array, false, "/collective/bandwidth"))         \
  X(bw_size_bytes, plain<int64_t>("/bytes", "/collective/bandwidth/sizes/*"))                                        \
  X(bw_size_iterations, plain<int64_t>("/iterations", "/collective/bandwidth/sizes/*"))                              \
  X(bw_size_ms, plain<double>("/ms", "/collective/bandwidth/sizes/*"))                                               \
  X(bw_size_algbw, plain<double>("/algbw", "/collective/bandwidth/sizes/*"))                                         \
  X(bw_size_busbw, plain<double>("/busbw", "/collective/bandwidth/sizes/*"))                                         \
  X(share_source, plain<std::string>("/source", "/sharing/measurements/*"))                                          \
  X(share_fallback_reason, nullable<std::string>("/fallback_reason", "/sharing/measurements/*"))                     \
  X(share_before, structured("/before", Kind::object, false, "/sharing/measurements/*"))                             \
  X(share_during, structured("/during", Kind::object, false, "/sharing/measurements/*"))                             \
  X(share_others, nullable<std::string>("/others", "/sharing/measurements/*"))                                       \
  X(share_contended, plain<bool>("/contended", "/sharing/measurements/*"))                                           \
  X(share_floor, plain<std::string>("/floor", "/sharing/measurements/*"))                                            \
  /* a window: "during", and "before" of the same shape */                                                           \
  X(window_other_processes, nullable<int64_t>("/other_processes", "/sharing/measurements/*/during"))                 \
  X(window_other_memory_bytes, nullable<uint64_t>("/other_memory_bytes", "/sharing/measurements/*/during"))          \
  X(window_unlisted_memory_bytes, nullable<uint64_t>("/unlisted_memory_bytes", "/sharing/measurements/*/during"))    \
  X(window_utilization_percent, nullable<int64_t>("/utilization_percent", "/sharing/measurements/*/during"))         \
  X(window_other_sm_percent, nullable<int64_t>("/other_sm_percent", "/sharing/measurements/*/during"))               \
  X(window_samples, plain<int64_t>("/samples", "/sharing/measurements/*/during"))                                    \
  X(requested_device, plain<std::string>("/device", "/requested"))                                                   \
  X(requested_device_index, nullable<int64_t>("/device_index", "/requested"))                                        \
  X(requested_all_devices, plain<bool>("/all_devices", "/requested"))                                                \
  X(requested_device_list, structured("/device_list", Kind::array, true, "/requested"))                              \
  X(requested_fault_injection, nullable<std::string>("/fault_injection", "/requested"))                              \
  X(requested_kernel_log_file, plain<bool>("/kernel_log_file", "/requested"))                                        \
  X(requested_gtest_environment_ignored, plain<std::vector<std::string>>("/gtest_environment_ignored", "/requested"))

#define KD_REPORT_FIELD(name, definition) inline constexpr auto name = definition;
KD_REPORT_PART_FIELDS(KD_REPORT_FIELD)
#undef KD_REPORT_FIELD

// Every part above, in its order.
const std::vector<FieldInfo>& part_fields();

}  // namespace kd::report
