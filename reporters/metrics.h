// --metrics FILE: the report as Prometheus metrics, in the text exposition format (HELP and TYPE lines, every name
// prefixed kernodeck_, label values escaped), for node_exporter's textfile collector (docs/fleets.md "Metrics"): the
// verdict, its code and action, each layer's result, L6's and L8's measured figures with their floors, the GPUs'
// health facts and the kernel log's Xid counts. Every metric is a gauge: a snapshot of one run. Pure: unit-tested,
// and checked with promtool (tests/e2e/test_metrics.py).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace kd {

std::string render_metrics(const nlohmann::json& report);

// A label's value as the format writes it: backslash, double quote and newline escaped.
std::string escape_label_value(const std::string& value);

}  // namespace kd
