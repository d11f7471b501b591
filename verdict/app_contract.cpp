#include "app_contract.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include <fmt/format.h>

namespace kd::app {

using nlohmann::json;

std::string shape_text(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); }

Agreement compare(const float* got, const float* ref, size_t n, Tolerance tol) {
  Agreement a;
  for (size_t i = 0; i < n; ++i) {
    const double d = std::fabs(double(got[i]) - double(ref[i]));
    const double rel = d / std::max(std::fabs(double(ref[i])), 1e-12);
    if (!(d <= a.max_abs)) a.max_abs = d;  // a NaN difference sticks
    if (!(rel <= a.max_rel)) a.max_rel = rel;
    if (!(d <= tol.atol + tol.rtol * std::fabs(double(ref[i]))) && a.within) {
      a.within = false;
      a.first_bad = static_cast<long>(i);
    }
  }
  return a;
}

std::optional<Violation> check_embeddings(const Embeddings& e, Tolerance tol) {
  const size_t n = e.output_ids.size();
  if (n != e.input_ids.size())
    return Violation{"count", "all", fmt::format("{} vectors for {} input ids", n, e.input_ids.size())};
  std::map<int64_t, int> seen;
  for (int64_t id : e.output_ids) ++seen[id];
  for (int64_t id : e.input_ids)
    if (seen[id] != 1) return Violation{"ids", fmt::format("id {}", id), fmt::format("id {} has {} vectors, expected exactly one", id, seen[id])};
  if (e.dim != e.expected_dim)
    return Violation{"dimension", "all", fmt::format("vectors of dimension {}, expected {}", e.dim, e.expected_dim)};
  const size_t d = static_cast<size_t>(e.dim);
  if (e.device.size() != n * d || e.reference.size() != n * d || e.rebatched.size() != n * d)
    return Violation{"count", "all", "the vectors returned do not match the count and dimension"};
  for (size_t i = 0; i < n * d; ++i)
    if (!std::isfinite(e.device[i]))
      return Violation{"finite", fmt::format("id {}", e.output_ids[i / d]), fmt::format("value {} of id {} is {}", i % d, e.output_ids[i / d], e.device[i])};
  const Agreement ref = compare(e.device.data(), e.reference.data(), n * d, tol);
  if (!ref.within)
    return Violation{"cpu_reference", fmt::format("id {}", e.output_ids[size_t(ref.first_bad) / d]),
                     fmt::format("differs from the CPU reference beyond {} + {}*|ref| (max abs error {:.3g})", tol.atol, tol.rtol, ref.max_abs)};
  const Agreement re = compare(e.rebatched.data(), e.device.data(), n * d, tol);
  if (!re.within)
    return Violation{"batch_size", fmt::format("id {}", e.output_ids[size_t(re.first_bad) / d]),
                     fmt::format("another batch size changes the vector (max abs error {:.3g})", re.max_abs)};
  return std::nullopt;
}

double min_reference_cosine(const ReferenceSpec& ref, const OutputTensor& out) {
  const size_t rows = ref.embeddings.size(), dim = ref.embeddings[0].size();
  if (out.shape.size() != 2 || size_t(out.shape[0]) != rows || size_t(out.shape[1]) != dim || out.data.size() != rows * dim)
    return std::nan("");
  double lowest = 1;
  for (size_t r = 0; r < rows; ++r) {
    double dot = 0, a = 0, b = 0;
    for (size_t k = 0; k < dim; ++k) {
      const double x = out.data[r * dim + k], y = ref.embeddings[r][k];
      dot += x * y, a += x * x, b += y * y;
    }
    const double cos = dot / std::sqrt(a * b);
    if (!(cos >= lowest)) lowest = cos;  // a NaN (a zero vector) sticks
  }
  return lowest;
}

std::optional<size_t> find_output(const OutputRef& ref, const std::vector<OutputTensor>& outputs) {
  if (ref.position) return *ref.position < outputs.size() ? ref.position : std::nullopt;
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].name == ref.name) return i;
  if (!ref.name.empty() && ref.name.size() < 10 && ref.name.find_first_not_of("0123456789") == std::string::npos) {
    const size_t p = std::stoul(ref.name);  // a number that is no leaf's name: a position
    if (p < outputs.size()) return p;
  }
  return std::nullopt;
}

std::string output_label(size_t position, const std::vector<OutputTensor>& outputs) {
  const std::string& name = outputs[position].name;
  return name.empty() || name == std::to_string(position) ? fmt::format("output {}", position) : fmt::format("output '{}'", name);
}

namespace {
std::string ref_text(const OutputRef& r) {
  return r.position ? fmt::format("output {}", *r.position) : fmt::format("output '{}'", r.name);
}
}  // namespace

std::optional<Violation> check_outputs(const ModelSpec& spec, const std::vector<OutputTensor>& outputs) {
  if (spec.count && outputs.size() != *spec.count)
    return Violation{"count", "all", fmt::format("the model returned {} outputs, the contract says {}", outputs.size(), *spec.count)};
  // Every output a rule addresses exists; a rule on an output asks for a tensor there.
  std::vector<std::optional<std::vector<int64_t>>> shape(outputs.size());
  std::vector<bool> finite(outputs.size(), spec.finite), wants_tensor(outputs.size(), false);
  std::vector<std::string> names;
  for (const auto& o : outputs) names.push_back(o.name);
  auto unknown = [&](const OutputRef& r) {
    return Violation{"name", ref_text(r), fmt::format("the contract names {}; the model returned {} outputs: {}", ref_text(r),
                                                      outputs.size(), fmt::join(names, ", "))};
  };
  for (const auto& [ref, want] : spec.shapes) {
    const auto i = find_output(ref, outputs);
    if (!i) return unknown(ref);
    shape[*i] = want;
    wants_tensor[*i] = true;
  }
  for (const auto& [ref, on] : spec.finite_by_output) {
    const auto i = find_output(ref, outputs);
    if (!i) return unknown(ref);
    finite[*i] = on;
    wants_tensor[*i] = wants_tensor[*i] || on;
  }
  std::optional<size_t> ref_at;
  if (spec.reference) {
    ref_at = find_output(spec.reference->output, outputs);
    if (!ref_at) return unknown(spec.reference->output);
    wants_tensor[*ref_at] = true;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const OutputTensor& o = outputs[i];
    const std::string name = output_label(i, outputs);
    if (!o.is_tensor) {  // a string or a number beside the tensors is fine unless a rule needs a tensor
      if (wants_tensor[i]) return Violation{"type", name, fmt::format("{} is a {}, not a tensor", name, o.dtype)};
      continue;
    }
    if (shape[i]) {
      const auto& want = *shape[i];
      bool ok = want.size() == o.shape.size();
      for (size_t d = 0; ok && d < want.size(); ++d) ok = want[d] == -1 || want[d] == o.shape[d];
      if (!ok)
        return Violation{"shape", name, fmt::format("{} has shape {}, the contract says {}", name, shape_text(o.shape), shape_text(want))};
    }
    if (finite[i])
      for (size_t k = 0; k < o.data.size(); ++k)
        if (!std::isfinite(o.data[k]))
          return Violation{"finite", name, fmt::format("{} holds a non-finite value ({} at flat index {})", name, o.data[k], k)};
  }
  if (spec.reference) {
    const ReferenceSpec& ref = *spec.reference;
    const OutputTensor& out = outputs[*ref_at];
    const std::vector<int64_t> want = {int64_t(ref.embeddings.size()), int64_t(ref.embeddings[0].size())};
    if (out.shape != want)
      return Violation{"reference", output_label(*ref_at, outputs), fmt::format("expected one vector per reference id, shape {}", shape_text(want))};
    for (size_t r = 0; r < ref.embeddings.size(); ++r) {
      ReferenceSpec one{ref.file, ref.min_cosine, {ref.embeddings[r]}, ref.output};
      OutputTensor row{true, out.dtype, {1, want[1]},
                       {out.data.begin() + long(r * want[1]), out.data.begin() + long((r + 1) * want[1])}, out.name, out.device};
      const double cos = min_reference_cosine(one, row);
      if (!(cos >= ref.min_cosine))
        return Violation{"reference", fmt::format("id {}", r), fmt::format("cosine {:.7f} to the reference, the contract says >= {}", cos, ref.min_cosine)};
    }
  }
  return std::nullopt;
}

std::vector<Parameter> parse_signature(const std::string& text) {
  std::vector<Parameter> params;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t a = line.find('\t'), b = line.find('\t', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    params.push_back({line.substr(0, a), line.substr(a + 1, b - a - 1), line.substr(b + 1) == "1"});
  }
  return params;
}

std::string signature_text(const std::vector<Parameter>& params) {
  std::vector<std::string> parts;
  for (const auto& p : params) parts.push_back(fmt::format("{}: {}{}", p.name, p.type, p.has_default ? " = ..." : ""));
  return fmt::format("forward({})", fmt::join(parts, ", "));
}

std::optional<Violation> check_signature(const std::vector<InputSpec>& inputs, const std::vector<Parameter>& params) {
  const std::string sig = signature_text(params);
  if (inputs.size() > params.size())
    return Violation{"inputs", "all", fmt::format("the spec gives {} inputs, {} takes {}", inputs.size(), sig, params.size())};
  std::vector<int> given_by(params.size(), -1);  // which spec input fills each parameter
  size_t next = 0;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].named) given_by[next++] = static_cast<int>(i);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].named) continue;
    const auto it = std::find_if(params.begin(), params.end(), [&](const Parameter& p) { return p.name == inputs[i].name; });
    const std::string which = fmt::format("input '{}'", inputs[i].name);
    if (it == params.end()) return Violation{"inputs", which, fmt::format("{} has no parameter '{}'", sig, inputs[i].name)};
    const size_t at = static_cast<size_t>(it - params.begin());
    if (given_by[at] >= 0)
      return Violation{"inputs", which, fmt::format("parameter '{}' of {} is already given by inputs[{}] (by position)",
                                                    inputs[i].name, sig, given_by[at])};
    given_by[at] = static_cast<int>(i);
  }
  for (size_t p = 0; p < params.size(); ++p)
    if (given_by[p] < 0 && !params[p].has_default)
      return Violation{"inputs", fmt::format("parameter '{}'", params[p].name),
                       fmt::format("{} requires '{}', which the spec does not give", sig, params[p].name)};
  return std::nullopt;
}

}  // namespace kd::app
