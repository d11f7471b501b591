// The report's fields (contract/report_fields.h) against schema/report.schema.json: each is where the schema has a
// property, of a kind the schema allows there, null only where the schema allows it; and the fixed sections have
// no property the list lacks. Then how a fact is matched to a field and how a field is read back.
#include "contract/report_fields.h"
#include "contract/report_parts.h"

#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace kd {
namespace {

using nlohmann::json;

const json& schema() {
  static const json s = json::parse(std::ifstream(KD_SCHEMA_FILE));
  return s;
}

const json& resolve(const json& node) {
  if (!node.contains("$ref")) return node;
  const std::string ref = node["$ref"];  // "#/$defs/name"
  return resolve(schema()["$defs"][ref.substr(ref.rfind('/') + 1)]);
}

// The node and its anyOf/oneOf alternatives, resolved.
std::vector<const json*> alternatives(const json& node) {
  std::vector<const json*> out = {&resolve(node)};
  for (const char* k : {"anyOf", "oneOf"})
    if (out[0]->contains(k))
      for (const auto& a : (*out[0])[k]) out.push_back(&resolve(a));
  return out;
}

// The JSON types a schema node allows: its type(s), or those of its enum's or const's values.
std::set<std::string> types(const json& node) {
  std::set<std::string> out;
  auto type_of = [](const json& v) {
    return v.is_null() ? "null" : v.is_boolean() ? "boolean" : v.is_number_integer() ? "integer" : v.is_number() ? "number"
                                : v.is_string() ? "string" : v.is_array() ? "array" : "object";
  };
  for (const json* n : alternatives(node)) {
    if (n->contains("type")) {
      const json& t = (*n)["type"];
      if (t.is_string()) out.insert(t.get<std::string>());
      else for (const auto& x : t) out.insert(x.get<std::string>());
    }
    if (n->contains("enum"))
      for (const auto& v : (*n)["enum"]) out.insert(type_of(v));
    if (n->contains("const")) out.insert(type_of((*n)["const"]));
  }
  if (out.count("number")) out.insert("integer");
  return out;
}

// The schema nodes at a pointer ("*": any entry of a list, or each entry of an object of entries); none when the
// schema has no such property.
std::vector<const json*> nodes_at(const std::string& pointer) {
  std::vector<const json*> nodes = {&schema()};
  for (size_t start = 1; start <= pointer.size() && !nodes.empty();) {
    size_t end = pointer.find('/', start);
    if (end == std::string::npos) end = pointer.size();
    const std::string key = pointer.substr(start, end - start);
    std::vector<const json*> next;
    for (const json* node : nodes)
      for (const json* n : alternatives(*node)) {
        if (key == "*" && n->contains("items")) next.push_back(&(*n)["items"]);
        if (key == "*" && n->value("additionalProperties", json()).is_object()) next.push_back(&(*n)["additionalProperties"]);
        if (key == "*" && !n->contains("items") && n->contains("properties"))
          for (const auto& entry : (*n)["properties"]) next.push_back(&entry);
        if (key != "*" && n->contains("properties") && (*n)["properties"].contains(key)) next.push_back(&(*n)["properties"][key]);
      }
    nodes = next;
    start = end + 1;
  }
  return nodes;
}

const json* node_at(const std::string& pointer) {
  const std::vector<const json*> nodes = nodes_at(pointer);
  return nodes.empty() ? nullptr : nodes.front();
}

TEST(ReportFields, EachIsInTheSchemaWithItsKind) {
  std::set<std::string> seen;
  std::vector<report::FieldInfo> fields = report::all_fields();
  for (const auto* more : {&report::supervisor_fields(), &report::part_fields()})
    fields.insert(fields.end(), more->begin(), more->end());
  for (const report::FieldInfo& f : fields) {
    const std::string where = std::string(f.within ? f.within : "") + f.pointer;
    SCOPED_TRACE(where);
    EXPECT_TRUE(seen.insert(where).second) << "listed twice";
    const std::vector<const json*> nodes = nodes_at(where);
    ASSERT_FALSE(nodes.empty()) << "the schema has no such property";
    for (const json* node : nodes) {
      if (f.keyed) {  // an object of the step's keys (the schema names them, or gives any key's shape), each an object
        ASSERT_TRUE(types(*node).count("object"));
        const std::vector<const json*> entries = nodes_at(where + "/*");
        ASSERT_FALSE(entries.empty()) << "the schema gives the entries no shape";
        for (const json* e : entries) EXPECT_TRUE(types(*e).count("object"));
        continue;
      }
      const std::set<std::string> allowed = types(*node);
      EXPECT_TRUE(allowed.count(report::json_type(f.kind))) << "the schema allows none of kind " << report::json_type(f.kind);
      if (f.nullable) {
        EXPECT_TRUE(allowed.count("null")) << "the field may be null, the schema says not";
      }
    }
  }
}

TEST(ReportFields, TheFixedSectionsHaveNoPropertyTheListLacks) {
  for (const std::string section : {"runtime", "pytorch", "execution"}) {
    const json* node = node_at("/" + section);
    ASSERT_NE(node, nullptr);
    for (const json* n : alternatives(*node)) {
      if (!n->contains("properties")) continue;
      for (const auto& [key, _] : (*n)["properties"].items()) {
        EXPECT_NE(report::find_field("/" + section + "/" + key), nullptr) << section << "." << key;
      }
    }
  }
}

// The objects the layers write through their rows alone (report::put), each property of each: a property the
// schema adds there without a row could only be written by key again.
TEST(ReportFields, TheObjectsWrittenThroughRowsHaveARowForEachProperty) {
  std::set<std::string> rows;
  std::vector<report::FieldInfo> fields = report::all_fields();
  fields.insert(fields.end(), report::part_fields().begin(), report::part_fields().end());
  for (const report::FieldInfo& f : fields) rows.insert(std::string(f.within ? f.within : "") + f.pointer);
  auto covered = [&](const std::string& where) {  // a row there, or rows inside it
    const auto next = rows.lower_bound(where);
    return next != rows.end() && (*next == where || next->rfind(where + "/", 0) == 0);
  };
  for (const std::string object :
       {"/python", "/memory", "/memory/steps/*", "/memory/iterations", "/memory/empty_cache", "/memory/oom", "/memory/range",
        "/memory/range/points/*", "/memory/range/limit", "/timing", "/timing/segments", "/timing/segments/cold",
        "/timing/segments/warm", "/timing/segments/warm/prepare_ms", "/timing/segments/warm/compute_ms",
        "/timing/segments/warm/write_ms", "/timing/ceilings/*", "/timing/host_link", "/timing/sustained",
        "/timing/sustained_results", "/timing/memory_integrity", "/app", "/app/embeddings", "/app/embeddings/cpu_reference",
        "/app/embeddings/batch_size_change", "/app/training", "/app/extensions/*", "/app/model", "/app/model/output_list/*",
        "/app/model/device_assert", "/app/model/reference", "/app/stop_resume", "/app/stop_resume/runs/*", "/collective",
        "/collective/join", "/collective/all_reduce", "/collective/broadcast", "/collective/barrier", "/collective/bandwidth",
        "/collective/bandwidth/sizes/*", "/device", "/host", "/host/gpus/*", "/host/nvml", "/host/nvml/gpus/*", "/peer",
        "/peer/copies/*", "/peer/bandwidth", "/peer/bandwidth/pairs/*", "/peer/all_reduce", "/app/across_devices",
        "/app/across_devices/split/*", "/app/across_devices_model", "/app/across_devices_model/split/*",
        "/memory/range/points/*/processes/*", "/memory/range/fixed", "/sharing", "/sharing/measurements/*",
        "/sharing/measurements/*/during"}) {  // "before" is the same $defs/sharing_window as "during"
    const std::vector<const json*> nodes = nodes_at(object);
    ASSERT_FALSE(nodes.empty()) << object;
    for (const json* node : nodes)
      for (const json* n : alternatives(*node)) {
        if (!n->contains("properties")) continue;
        for (const auto& [key, _] : (*n)["properties"].items()) EXPECT_TRUE(covered(object + "/" + key)) << object << "/" << key;
      }
  }
}

TEST(ReportFields, AFactFindsItsFieldOnlyAtItsPointer) {
  EXPECT_STREQ(report::find_field("/pytorch/version")->pointer, "/pytorch/version");
  EXPECT_STREQ(report::find_field("/timing/ceilings/copy")->pointer, "/timing/ceilings");
  EXPECT_EQ(report::find_field("/timing/ceilings"), nullptr);  // a keyed field takes its entries, not itself
  EXPECT_EQ(report::find_field("/timing/ceilings/copy/measured"), nullptr);
  EXPECT_EQ(report::find_field("/pytorch"), nullptr);
  EXPECT_EQ(report::find_field("/pytorch/versions"), nullptr);
  EXPECT_EQ(report::find_field("pytorch/version"), nullptr);
  EXPECT_EQ(report::find_field(""), nullptr);
  EXPECT_EQ(report::find_field("/code"), nullptr);  // the supervisor's: no fact lands there
  EXPECT_EQ(report::find_field("/error/message"), nullptr);
}

TEST(ReportFields, AValueFitsOnlyItsKind) {
  EXPECT_TRUE(report::fits(report::pytorch_version.info, "2.11.0"));
  EXPECT_TRUE(report::fits(report::pytorch_version.info, nullptr));
  EXPECT_FALSE(report::fits(report::pytorch_version.info, 2.11));
  EXPECT_FALSE(report::fits(report::pytorch_loaded.info, nullptr));
  EXPECT_TRUE(report::fits(report::collective_rank.info, 3));
  EXPECT_FALSE(report::fits(report::collective_rank.info, 3.5));
  EXPECT_TRUE(report::fits(report::execution_loss.info, 196));
  EXPECT_TRUE(report::fits(report::pytorch_arch_list.info, json{"sm_90"}));
  EXPECT_FALSE(report::fits(report::pytorch_arch_list.info, json{"sm_90", 90}));
  EXPECT_TRUE(report::fits(report::device.info, {{"name", "H200"}, {"index", 0}}));
  EXPECT_FALSE(report::fits(report::device.info, {{"name", {1, 2}}}));
  EXPECT_FALSE(report::fits(report::memory_range.info, json::array()));
}

TEST(ReportFields, AnEntrysFieldIsReadFromTheEntry) {
  const json layer = {{"id", "L3"}, {"status", "failed"}, {"tests", {{{"name", "Product"}, {"stage", nullptr}}}}};
  EXPECT_EQ(report::read(layer, report::layer_id), "L3");
  EXPECT_EQ(report::read(layer, report::layer_tests)[0]["name"], "Product");
  EXPECT_EQ(report::read(report::read(layer, report::layer_tests)[0], report::test_stage), std::nullopt);
  EXPECT_EQ(report::read(layer, report::layer_skip_kind), std::nullopt);
}

TEST(ReportFields, ReadGivesTheValueOrNothing) {
  const json r = {{"pytorch", {{"version", "2.11.0"}, {"loaded", true}, {"visible_device_count", "8"}}},
                  {"memory", {{"range", {{"axis", "batch"}}}, {"steps", nullptr}}},
                  {"timing", {{"ceilings", {{"copy", {{"measured", 4.3}}}}}}},
                  {"device", "H200"}};
  EXPECT_EQ(report::read(r, report::pytorch_version), "2.11.0");
  EXPECT_EQ(report::read(r, report::pytorch_loaded), true);
  EXPECT_EQ(report::read(r, report::pytorch_visible_device_count), std::nullopt);  // of another type
  EXPECT_EQ(report::read(r, report::pytorch_cuda_compiled), std::nullopt);         // absent
  EXPECT_EQ(report::read(r, report::memory_range)["axis"], "batch");
  EXPECT_TRUE(report::read(r, report::memory_steps).is_null());
  EXPECT_TRUE(report::read(r, report::device).is_null());  // a string where an object belongs
  EXPECT_EQ(report::read(r, report::timing_ceilings)["copy"]["measured"], 4.3);
  EXPECT_EQ(report::read(json::array(), report::pytorch_version), std::nullopt);
  EXPECT_EQ(report::read(json("text"), report::memory_growth_per_iteration_bytes), std::nullopt);
}

TEST(ReportFields, APartIsReadFromItsObject) {
  const json r = {{"timing", {{"ceilings", {{"copy", {{"measured", 4.3}, {"reference", nullptr}, {"unit", "TB/s"}}}}}}},
                  {"memory", {{"oom", {{"phase", "load"}, {"requested_bytes", -5}, {"allocated_bytes", 1024}}}}},
                  {"requested", {{"device", "cuda"}, {"device_index", 2}}}};
  const json& copy = report::read(r, report::timing_ceilings)["copy"];
  EXPECT_EQ(report::read(copy, report::ceiling_measured), 4.3);
  EXPECT_EQ(report::read(copy, report::ceiling_reference), std::nullopt);
  EXPECT_TRUE(report::json_at(copy, report::ceiling_reference).is_null());
  EXPECT_EQ(report::read(copy, report::ceiling_unit), "TB/s");
  const json& oom = report::read(r, report::memory_oom);
  EXPECT_EQ(report::read(oom, report::oom_phase), "load");
  EXPECT_EQ(report::read(oom, report::oom_requested_bytes), std::nullopt);  // a count is never negative
  EXPECT_EQ(report::read(oom, report::oom_allocated_bytes), 1024u);
  EXPECT_EQ(report::read(report::read(r, report::requested), report::requested_device_index), 2);
  EXPECT_EQ(report::read(r, report::requested_device_index), std::nullopt);  // a part is read from its object
}

TEST(ReportFields, PutSetsAFieldMakingItsWay) {
  json r;
  report::put(&r, report::memory_growth_tolerance_bytes, 8.0);
  report::put(&r, report::device_index, std::nullopt);
  EXPECT_EQ(r, json({{"memory", {{"iterations", {{"tolerance_bytes", 8.0}}}}}, {"device_index", nullptr}}));
}

}  // namespace
}  // namespace kd
