// The command line as a user types it: defaults, both spellings of a value, and a
// usage error that names the offending option for every bad value.
#include "contract/options.h"
#include "contract/run_plan.h"

#include <algorithm>

#include <gtest/gtest.h>

#include <fmt/format.h>


namespace kd {
namespace {

const std::vector<std::string> kLayers = {"L1", "L2", "L3", "L4"};

std::string shown(const std::vector<std::string>& args) { return fmt::format("{}", fmt::join(args, " ")); }

Options parse_ok(const std::vector<std::string>& args, const std::vector<std::string>& layers = kLayers) {
  const ParseResult r = parse_command_line(args, layers);
  if (const auto* e = std::get_if<UsageError>(&r)) ADD_FAILURE() << shown(args) << ": usage error: " << e->message;
  if (std::holds_alternative<HelpRequested>(r)) ADD_FAILURE() << shown(args) << ": help requested";
  const auto* o = std::get_if<Options>(&r);
  return o ? *o : Options{};
}

// What a worker started on o's run plan reads (the supervisor's own fields stay behind).
Plan through_plan(const Options& o, int event_fd, const std::string& run_id = "") {
  Role role;
  role.event_fd = event_fd;
  role.run_id = run_id;
  auto back = plan_from_document(plan_document({role, o}));
  if (const auto* why = std::get_if<std::string>(&back)) ADD_FAILURE() << "the plan does not read back: " << *why;
  const auto* w = std::get_if<Plan>(&back);
  return w ? *w : Plan{};
}

std::string usage_error(const std::vector<std::string>& args, const std::vector<std::string>& layers = kLayers) {
  const ParseResult r = parse_command_line(args, layers);
  const auto* e = std::get_if<UsageError>(&r);
  EXPECT_NE(e, nullptr) << shown(args) << " was accepted";
  return e ? e->message : "";
}

TEST(Cli, DefaultsCheckGpuZeroWithThirtySeconds) {
  const Options o = parse_ok({});
  EXPECT_EQ(o.device, "cuda");
  EXPECT_FALSE(o.cpu_mode());
  EXPECT_EQ(o.device_index, 0);
  EXPECT_DOUBLE_EQ(o.timeout_s, 30);
  EXPECT_FALSE(o.output.has_value());
  EXPECT_FALSE(o.summary_md.has_value());
  EXPECT_TRUE(o.layers.empty());
  EXPECT_TRUE(o.gtest_args.empty());
  EXPECT_EQ(o.fault, "");
  EXPECT_FALSE(o.in_process);
  EXPECT_FALSE(o.plan.has_value());
}

TEST(Cli, SpaceAndEqualsSpellingsGiveTheSameOptions) {
  const Options spaced = parse_ok({"--device", "cuda", "--device-index", "3", "--timeout", "12.5", "--output",
                                   "r.json", "--summary-md", "s.md", "--layers", "L3,L1", "--inject-fault", "hang",
                                   "--in-process"});
  const Options joined = parse_ok({"--device=cuda", "--device-index=3", "--timeout=12.5", "--output=r.json",
                                   "--summary-md=s.md", "--layers=L3,L1", "--inject-fault=hang", "--in-process"});
  for (const Options* o : {&spaced, &joined}) {
    EXPECT_EQ(o->device, "cuda");
    EXPECT_EQ(o->device_index, 3);
    EXPECT_DOUBLE_EQ(o->timeout_s, 12.5);
    EXPECT_EQ(o->output, "r.json");
    EXPECT_EQ(o->summary_md, "s.md");
    EXPECT_EQ(o->layers, (std::vector<std::string>{"L3", "L1"}));
    EXPECT_EQ(o->fault, "hang");
    EXPECT_TRUE(o->in_process);
  }
}

TEST(Cli, RangeLimitsAreAccepted) {
  EXPECT_DOUBLE_EQ(parse_ok({"--timeout", "5"}).timeout_s, 5);
  EXPECT_DOUBLE_EQ(parse_ok({"--timeout", "120"}).timeout_s, 120);
  EXPECT_EQ(parse_ok({"--device-index", "1023"}).device_index, 1023);
}

TEST(Cli, RepeatedLayerIsListedOnce) {
  EXPECT_EQ(parse_ok({"--layers", "L2,L2,L1"}).layers, (std::vector<std::string>{"L2", "L1"}));
}

struct BadCase {
  std::vector<std::string> args;
  std::vector<std::string> message_names;  // what the message must mention
};
void PrintTo(const BadCase& c, std::ostream* os) { *os << shown(c.args); }

class CliBadValue : public testing::TestWithParam<BadCase> {};

TEST_P(CliBadValue, IsAUsageErrorNamingTheOption) {
  const std::string message = usage_error(GetParam().args);
  for (const auto& want : GetParam().message_names)
    EXPECT_NE(message.find(want), std::string::npos) << "message '" << message << "' does not mention " << want;
}

INSTANTIATE_TEST_SUITE_P(
    Cli, CliBadValue,
    testing::Values(BadCase{{"--device", "gpu"}, {"--device", "'gpu'"}},
                    BadCase{{"--device=rocm"}, {"--device", "'rocm'"}},
                    BadCase{{"--device-index", "-1"}, {"--device-index", "'-1'"}},
                    BadCase{{"--device-index=-1"}, {"--device-index", "'-1'"}},
                    BadCase{{"--device-index", "one"}, {"--device-index", "'one'"}},
                    BadCase{{"--device-index", "1024"}, {"--device-index", "'1024'"}},
                    BadCase{{"--device-index", "1.5"}, {"--device-index", "'1.5'"}},
                    BadCase{{"--timeout", "4.9"}, {"--timeout", "'4.9'"}},
                    BadCase{{"--timeout", "121"}, {"--timeout", "'121'"}},
                    BadCase{{"--timeout=abc"}, {"--timeout", "'abc'"}},
                    BadCase{{"--timeout", "nan"}, {"--timeout", "'nan'"}},
                    BadCase{{"--timeout"}, {"--timeout"}},
                    BadCase{{"--output"}, {"--output"}},
                    BadCase{{"--output="}, {"--output"}},
                    BadCase{{"--summary-md"}, {"--summary-md"}},
                    BadCase{{"--summary-md="}, {"--summary-md"}},
                    BadCase{{"--summary-md", "--in-process"}, {"--summary-md"}},
                    BadCase{{"--output", "r", "--summary-md", "r"}, {"--output", "--summary-md", "same file"}},
                    BadCase{{"--frobnicate"}, {"'--frobnicate'"}},
                    BadCase{{"extra"}, {"'extra'"}},
                    BadCase{{"--layers", "L9"}, {"--layers", "'L9'", "L1, L2, L3, L4"}},
                    BadCase{{"--full", "--layers", "L1"}, {"--full", "--layers"}},
                    BadCase{{"--full=yes"}, {"--full"}},
                    BadCase{{"--model", "m.pt"}, {"--model", "--input"}},
                    BadCase{{"--input", "s.json"}, {"--model", "--input"}},
                    BadCase{{"--model", "m.pt", "--input", "s.json", "--layers", "L1,L3"}, {"--model", "L4"}},
                    BadCase{{"--model="}, {"--model"}},
                    BadCase{{"--extension"}, {"--extension"}},
                    BadCase{{"--extension="}, {"--extension"}},
                    BadCase{{"--extension", "a.so", "--extension=a.so"}, {"--extension", "twice"}},
                    BadCase{{"--extension", "a.so", "--layers", "L1,L3"}, {"--extension", "L4"}},
                    BadCase{{"--bundle"}, {"--bundle"}},
                    BadCase{{"--layers", "L1,"}, {"--layers"}},
                    BadCase{{"--layers", "L1", "--gtest_filter=L1_*"}, {"--layers", "--gtest_filter"}},
                    BadCase{{"--gtest_filter=L1_*", "--layers=L1"}, {"--layers", "--gtest_filter"}},
                    BadCase{{"--inject-fault", "melt"}, {"--inject-fault", "'melt'", "wrong-product"}},
                    BadCase{{"--in-process=yes"}, {"--in-process"}},
                    BadCase{{"--host-check=yes"}, {"--host-check"}},
                    BadCase{{"--python"}, {"--python"}},
                    BadCase{{"--python="}, {"--python"}},
                    BadCase{{"--min-bandwidth-fraction", "1.1"}, {"--min-bandwidth-fraction", "'1.1'", "0 to 1"}},
                    BadCase{{"--min-bandwidth-fraction=-0.1"}, {"--min-bandwidth-fraction", "'-0.1'"}},
                    BadCase{{"--min-matmul-fraction", "half"}, {"--min-matmul-fraction", "'half'"}},
                    BadCase{{"--min-matmul-fraction", "nan"}, {"--min-matmul-fraction", "'nan'"}},
                    BadCase{{"--min-matmul-fraction"}, {"--min-matmul-fraction"}},
                    BadCase{{"--memory-fraction", "0"}, {"--memory-fraction", "'0'", "above 0"}},
                    BadCase{{"--memory-fraction=1.01"}, {"--memory-fraction", "'1.01'"}},
                    BadCase{{"--memory-fraction", "1e-4"}, {"--memory-fraction", "'1e-4'"}},
                    BadCase{{"--memory-fraction"}, {"--memory-fraction"}},
                    BadCase{{"--memory-fraction", "0.5", "--device", "cpu"}, {"--memory-fraction", "--device cpu"}},
                    BadCase{{"--memory-fraction", "0.5", "--memory-fraction=0.4"}, {"--memory-fraction", "more than once"}},
                    // Empty values, in both spellings.
                    BadCase{{"--device", ""}, {"--device", "''"}},
                    BadCase{{"--device-index="}, {"--device-index", "''"}},
                    BadCase{{"--timeout", ""}, {"--timeout", "''"}},
                    BadCase{{"--layers="}, {"--layers", "''"}},
                    BadCase{{"--inject-fault", ""}, {"--inject-fault", "''"}},
                    BadCase{{"--output", ""}, {"--output"}},
                    BadCase{{"--gtest_filter="}, {"--gtest_filter", "value"}},
                    // Numbers only as plain decimals: no sign, exponent, hex, spaces or unit.
                    BadCase{{"--timeout", "+10"}, {"--timeout", "'+10'"}},
                    BadCase{{"--timeout", "1e1"}, {"--timeout", "'1e1'"}},
                    BadCase{{"--timeout", "0x10"}, {"--timeout", "'0x10'"}},
                    BadCase{{"--timeout", " 10"}, {"--timeout", "' 10'"}},
                    BadCase{{"--timeout", "10s"}, {"--timeout", "'10s'"}},
                    BadCase{{"--timeout", "10."}, {"--timeout", "'10.'"}},
                    BadCase{{"--timeout", ".5"}, {"--timeout", "'.5'"}},
                    BadCase{{"--timeout", "inf"}, {"--timeout", "'inf'"}},
                    BadCase{{"--device-index", "+1"}, {"--device-index", "'+1'"}},
                    BadCase{{"--device-index", "\xd9\xa1"}, {"--device-index"}},  // a non-ASCII digit
                    BadCase{{"--device-index", "99999999999999999999"}, {"--device-index"}},
                    // Duplicates: an error naming the option, not a silent last-wins.
                    BadCase{{"--device", "cpu", "--device", "cuda"}, {"--device", "more than once"}},
                    BadCase{{"--device=cpu", "--device", "cpu"}, {"--device", "more than once"}},
                    BadCase{{"--device-index", "0", "--device-index=1"}, {"--device-index", "more than once"}},
                    BadCase{{"--timeout", "10", "--timeout", "20"}, {"--timeout", "more than once"}},
                    BadCase{{"--output", "a.json", "--output", "b.json"}, {"--output", "more than once"}},
                    BadCase{{"--layers", "L1", "--layers", "L2"}, {"--layers", "more than once"}},
                    BadCase{{"--inject-fault", "hang", "--inject-fault=abort"}, {"--inject-fault", "more than once"}},
                    BadCase{{"--in-process", "--in-process"}, {"--in-process", "more than once"}},
                    BadCase{{"--gtest_filter=L1_*", "--gtest_filter=L2_*"}, {"--gtest_filter", "more than once"}},
                    BadCase{{"--gtest_print_time=0", "--gtest_print_time=1"}, {"--gtest_print_time", "more than once"}},
                    // The order is the contract: flags that change the order or number of runs are refused,
                    // and so is any GoogleTest flag this tool does not know (not a worker failure later).
                    BadCase{{"--gtest_shuffle"}, {"--gtest_shuffle", "order"}},
                    BadCase{{"--gtest_repeat=-1"}, {"--gtest_repeat", "order"}},
                    BadCase{{"--gtest_random_seed=4"}, {"--gtest_random_seed", "order"}},
                    BadCase{{"--gtest_break_on_failure"}, {"--gtest_break_on_failure", "order"}},
                    BadCase{{"--gtest_flagfile=f.txt"}, {"--gtest_flagfile", "order"}},
                    BadCase{{"--gtest_also_run_disabled_tests"}, {"--gtest_also_run_disabled_tests"}},
                    BadCase{{"--gtest_foo"}, {"unknown GoogleTest flag", "--gtest_foo"}},
                    BadCase{{"--gtest_filter"}, {"--gtest_filter", "needs a value"}},
                    BadCase{{"--gtest_list_tests=1"}, {"--gtest_list_tests", "no value"}},
                    BadCase{{"--gtest_output=xml"}, {"--gtest_output", "xml:FILE"}},
                    BadCase{{"--gtest_output=xml:out/"}, {"--gtest_output", "new file"}},
                    BadCase{{"--gtest_output=yaml:a.yaml"}, {"--gtest_output", "xml:FILE"}},
                    // A test-only fault that cannot act in the run would end in a pass with a warning.
                    BadCase{{"--inject-fault", "range-leak", "--device", "cpu", "--gtest_filter=L5_*"}, {"range-leak", "--device cpu"}},
                    BadCase{{"--inject-fault", "leak"}, {"--inject-fault leak", "L5"}}));

TEST(Cli, PerformanceFloorsDefaultAndAcceptZeroToOne) {
  const Options d = parse_ok({});
  EXPECT_EQ(d.min_bandwidth_fraction, 0.6);
  EXPECT_EQ(d.min_matmul_fraction, 0.5);
  const Options o = parse_ok({"--min-bandwidth-fraction", "0", "--min-matmul-fraction=1"});
  EXPECT_EQ(o.min_bandwidth_fraction, 0.0);
  EXPECT_EQ(o.min_matmul_fraction, 1.0);
  EXPECT_EQ(parse_ok({"--min-matmul-fraction", "0.75"}).min_matmul_fraction, 0.75);
}

TEST(Cli, HostCheckAndPythonAreRecorded) {
  const Options o = parse_ok({"--host-check", "--python", "/usr/bin/python3"});
  EXPECT_TRUE(o.host_check);
  EXPECT_EQ(o.python, "/usr/bin/python3");
  EXPECT_FALSE(parse_ok({}).host_check);
  EXPECT_FALSE(parse_ok({}).python.has_value());
}

TEST(Cli, AValueThatLooksLikeAnOptionIsNotCountedAsOne) {
  EXPECT_EQ(parse_ok({"--output=--device", "--device", "cpu"}).output, "--device");
}

TEST(Cli, GtestFlagsArePassedThroughAsGiven) {
  const Options o = parse_ok({"--gtest_filter=L3_TinyOp.*", "--device", "cpu", "--gtest_list_tests",
                              "--gtest_fail_fast"});
  EXPECT_EQ(o.gtest_args,
            (std::vector<std::string>{"--gtest_filter=L3_TinyOp.*", "--gtest_list_tests", "--gtest_fail_fast"}));
  EXPECT_TRUE(o.has_gtest_flag("filter"));
  EXPECT_TRUE(o.has_gtest_flag("list_tests"));
  EXPECT_FALSE(o.has_gtest_flag("repeat"));
  EXPECT_FALSE(o.has_gtest_flag("filt"));
  EXPECT_EQ(o.gtest_value("filter"), "L3_TinyOp.*");
  EXPECT_EQ(o.gtest_value("repeat"), "");
}

// Issue 17: "--output -h" printed help; "--device cpu --device-index 3" dropped the index silently.
TEST(Cli, AValueIsNeverARequestForHelp) {
  EXPECT_EQ(parse_ok({"--output", "-h"}).output, "-h");
  EXPECT_TRUE(std::holds_alternative<HelpRequested>(parse_command_line({"--output", "--help"}, kLayers)));  // never a value
  EXPECT_TRUE(std::holds_alternative<HelpRequested>(parse_command_line({"--in-process", "-h"}, kLayers)));
}

TEST(Cli, ACpuRunRefusesADeviceIndex) {
  EXPECT_EQ(usage_error({"--device", "cpu", "--device-index", "3"}),
            "--device-index 3 has no meaning with --device cpu: give one of them");
  EXPECT_TRUE(parse_ok({"--device", "cpu", "--device-index", "0"}).cpu_mode());  // what the worker is given
}

// Issue "First contact": what the terminal shows, and the report on stdout.
TEST(Cli, VerboseQuietColourVersionAndTheReportOnStdout) {
  EXPECT_TRUE(parse_ok({"-v"}).verbose);
  EXPECT_TRUE(parse_ok({"--verbose"}).verbose);
  EXPECT_TRUE(parse_ok({"-q"}).quiet);
  EXPECT_TRUE(parse_ok({"--quiet"}).quiet);
  EXPECT_TRUE(parse_ok({"--version"}).version);
  EXPECT_EQ(parse_ok({}).color, "auto");
  EXPECT_EQ(parse_ok({"--color", "never"}).color, "never");
  EXPECT_EQ(parse_ok({"--color=always"}).color, "always");
  EXPECT_TRUE(parse_ok({"--output", "-"}).report_to_stdout());
  EXPECT_FALSE(parse_ok({"--output", "r.json"}).report_to_stdout());
  EXPECT_EQ(usage_error({"-v", "-q"}), "--verbose and --quiet contradict each other: give one of them");
  EXPECT_EQ(usage_error({"--color", "sometimes"}), "--color must be 'auto', 'always' or 'never', not 'sometimes'");
  EXPECT_EQ(usage_error({"--quiet=1"}), "--quiet takes no value");
  EXPECT_EQ(usage_error({"--summary-md", "-"}), "--summary-md needs a file name: '-' (stdout) is --output's");
  EXPECT_EQ(usage_error({"-x"}), "unknown argument '-x'");  // main() adds the pointer to --help, once
  // The worker keeps GoogleTest's printer only when asked; it never needs --quiet or --color (the supervisor prints).
  EXPECT_TRUE(through_plan(parse_ok({"-v"}), 7).options.verbose);
  EXPECT_FALSE(through_plan(parse_ok({"-q"}), 7).options.verbose);
}

TEST(Cli, HelpWinsWhereverItStands) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"-h"}, {"--help"}, {"--device", "cpu", "--help"},
                                                                   {"--device", "gpu", "--help"}, {"--help", "--help"}})
    EXPECT_TRUE(std::holds_alternative<HelpRequested>(parse_command_line(args, kLayers))) << shown(args);
}

TEST(Cli, UsageTextListsEveryOptionAndExitCode) {
  const std::string text = usage_text();
  for (const char* want : {"--device cuda|cpu", "--device-index N", "--timeout S", "--output FILE", "--layers",
                           "--inject-fault", "--help", "5 to 120", "default 30", "12 report not written", "--full", "--model FILE",
                           "--input SPEC.json", "--extension FILE", "--bundle DIR", "13 model", "14 application", "--summary-md FILE",
                           "--min-bandwidth-fraction F", "--min-matmul-fraction F", "16 performance", "--verbose",
                           "--quiet", "--color WHEN", "--version", "Examples:", "docs/command-line.md",
                           "--rendezvous HOST:PORT", "--world-size N", "--rank R", "--min-bus-bandwidth G",
                           "17 a rank unreachable"})
    EXPECT_NE(text.find(want), std::string::npos) << want;
}

void expect_worker_sees_the_same(const Options& user) {
  const Plan plan = through_plan(user, 7, "0123456789abcdef");
  const Options& worker = plan.options;
  EXPECT_EQ(plan.role.kind, ProcessRole::Worker);
  EXPECT_EQ(plan.role.event_fd, 7);
  EXPECT_EQ(plan.role.run_id, "0123456789abcdef");
  EXPECT_EQ(worker.device, user.device);
  EXPECT_EQ(worker.device_index, user.device_index);
  EXPECT_EQ(worker.layers, user.layers);
  EXPECT_EQ(worker.fault, user.fault);
  EXPECT_EQ(worker.gtest_args, user.gtest_args);
  EXPECT_EQ(worker.python, user.python);
  EXPECT_EQ(worker.model, user.model);
  EXPECT_EQ(worker.input, user.input);
  EXPECT_EQ(worker.extensions, user.extensions);
  EXPECT_EQ(worker.min_bandwidth_fraction, user.min_bandwidth_fraction);
  EXPECT_EQ(worker.min_matmul_fraction, user.min_matmul_fraction);
  EXPECT_EQ(worker.memory_fraction, user.memory_fraction);
  EXPECT_EQ(worker.timeout_s, user.timeout_s);
  EXPECT_EQ(worker.range_axis, user.range_axis);
  EXPECT_EQ(worker.range_budget_s, user.range_budget_s);
  EXPECT_EQ(worker.range_memory_fraction, user.range_memory_fraction);
  EXPECT_EQ(worker.rendezvous, user.rendezvous);
  EXPECT_EQ(worker.world_size, user.world_size);
  EXPECT_EQ(worker.rank, user.rank);
  EXPECT_EQ(worker.min_bus_bandwidth, user.min_bus_bandwidth);
  EXPECT_EQ(worker.full, user.full);
  EXPECT_EQ(worker.device_index_given, user.device_index_given);
}

TEST(Cli, AppMeansTheFixedCheckThenL4AndFullMeansEveryLayer) {
  EXPECT_EQ(parse_ok({"--layers", "app"}).layers, (std::vector<std::string>{"L1", "L2", "L3", "L4"}));
  EXPECT_EQ(parse_ok({"--layers", "L2,app"}).layers, (std::vector<std::string>{"L2", "L1", "L3", "L4"}));
  EXPECT_EQ(parse_ok({"--full"}).layers, kLayers);
  const ParseResult r = parse_command_line({"--layers", "app"}, {"L1", "L2", "L3"});
  ASSERT_TRUE(std::holds_alternative<UsageError>(r));  // a build without L4
  EXPECT_NE(std::get<UsageError>(r).message.find("'L4'"), std::string::npos);
}

TEST(Cli, ModelImpliesTheAppLayersAndBundleStaysWithTheSupervisor) {
  const Options o = parse_ok({"--model", "m.pt", "--input=s.json", "--bundle", "out"});
  EXPECT_EQ(o.model, "m.pt");
  EXPECT_EQ(o.input, "s.json");
  EXPECT_EQ(o.bundle, "out");
  EXPECT_EQ(o.layers, (std::vector<std::string>{"L1", "L2", "L3", "L4"}));
  EXPECT_EQ(parse_ok({"--model", "m.pt", "--input", "s.json", "--layers", "L4"}).layers, (std::vector<std::string>{"L4"}));
  EXPECT_FALSE(through_plan(o, 3).options.bundle.has_value());  // the supervisor writes the bundle
  expect_worker_sees_the_same(o);
}

TEST(Cli, ExtensionsRepeatInOrderAndImplyTheAppLayers) {
  const Options o = parse_ok({"--extension", "libfused.so", "--extension=/opt/x/libother.so"});
  EXPECT_EQ(o.extensions, (std::vector<std::string>{"libfused.so", "/opt/x/libother.so"}));
  EXPECT_EQ(o.layers, (std::vector<std::string>{"L1", "L2", "L3", "L4"}));
  expect_worker_sees_the_same(o);
  expect_worker_sees_the_same(parse_ok({"--extension=--odd.so", "--model", "m.pt", "--input", "s.json"}));
}

TEST(Cli, TheRunIdReachesTheWorkerInItsPlanOnly) {
  expect_worker_sees_the_same(parse_ok({}));
  EXPECT_EQ(usage_error({"--kd-run-id", "0123456789abcdef"}), "unknown argument '--kd-run-id'");  // a plan field only
}

TEST(Cli, APlanComesAloneAsAnAbsolutePath) {
  EXPECT_EQ(parse_ok({"--kd-plan=/tmp/kd-run-1-x/plan-1.json"}).plan, "/tmp/kd-run-1-x/plan-1.json");
  EXPECT_NE(usage_error({"--kd-plan", "rel/plan.json"}).find("internal"), std::string::npos);
  EXPECT_EQ(usage_error({"--kd-plan=/p.json", "--device", "cpu"}), "--kd-plan is internal: it comes alone");
  for (const char* gone : {"--kd-batch-job", "--kd-worker-fd", "--kd-range-job", "--kd-shard-job", "--kd-devices", "--kd-full"})
    EXPECT_EQ(usage_error({gone, "1"}), fmt::format("unknown argument '{}'", gone));  // plan fields, never typed
}

TEST(Cli, TheRunPlanCarriesTheSameOptions) {
  expect_worker_sees_the_same(parse_ok({}));
  expect_worker_sees_the_same(parse_ok({"--device=cpu", "--layers", "L3,L1",
                                        "--inject-fault", "wrong-product", "--gtest_fail_fast", "--gtest_print_time=0"}));
  expect_worker_sees_the_same(parse_ok({"--device-index=5", "--gtest_filter=L2_*:L3_*", "--timeout", "60"}));
  expect_worker_sees_the_same(parse_ok({"--python", "python3", "--host-check"}));
  expect_worker_sees_the_same(parse_ok({"--python=--odd-name"}));  // found by fuzz_cli: a value like an option
  expect_worker_sees_the_same(parse_ok({"--range-axis", "length", "--range-budget", "2.5", "--range-memory-fraction=0.25"}));
  // Small values print as "1e-06" by default, which the worker's parse would refuse (a usage error in the worker).
  expect_worker_sees_the_same(parse_ok({"--range-memory-fraction", "0.000001", "--min-matmul-fraction", "0.000000001",
                                        "--min-bandwidth-fraction", "0.123456789", "--timeout", "119.999999999"}));
  expect_worker_sees_the_same(parse_ok({"--model", "m.pt", "--input", "s.json", "--device", "cpu"}));
  expect_worker_sees_the_same(parse_ok({"--min-bandwidth-fraction", "0.7", "--min-matmul-fraction", "0.123456789"}));
  expect_worker_sees_the_same(parse_ok({"--memory-fraction", "0.000123457", "--inject-fault", "leak", "--gtest_filter=L5_*"}));
}

const std::vector<std::string> kWithL8 = {"L1", "L2", "L3", "L4", "L8"};

Options parse_l8(const std::vector<std::string>& args) { return parse_ok(args, kWithL8); }
std::string l8_error(const std::vector<std::string>& args) { return usage_error(args, kWithL8); }

TEST(Cli, CollectiveOptionsGoTogetherAndReachTheWorker) {
  const Options o = parse_l8({"--layers", "L8", "--rendezvous", "node1:29500", "--world-size", "4", "--rank=3",
                              "--min-bus-bandwidth", "12.5", "--device", "cpu"});
  EXPECT_EQ(o.rendezvous, "node1:29500");
  EXPECT_EQ(o.world_size, 4);
  EXPECT_EQ(o.rank, 3);
  EXPECT_EQ(o.min_bus_bandwidth, 12.5);
  const Options w = through_plan(o, 7).options;
  EXPECT_EQ(w.rendezvous, o.rendezvous);
  EXPECT_EQ(w.world_size, 4);
  EXPECT_EQ(w.rank, 3);
  EXPECT_EQ(w.min_bus_bandwidth, 12.5);
  EXPECT_EQ(parse_l8({"--layers", "L8", "--rendezvous", "[::1]:2", "--world-size", "1", "--rank", "0"}).rendezvous, "[::1]:2");
  EXPECT_EQ(l8_error({"--layers", "L8", "--rendezvous", "node1:29500"}),
            "--rendezvous, --world-size and --rank go together: rank 0's HOST:PORT, the number of ranks, and this "
            "process's rank");
  EXPECT_EQ(l8_error({"--layers", "L8", "--rendezvous", "n:1", "--world-size", "2", "--rank", "2"}),
            "--rank 2 is not a rank of --world-size 2: ranks go from 0 to 1");
  EXPECT_EQ(l8_error({"--rendezvous", "n:1", "--world-size", "2", "--rank", "0"}),
            "--rendezvous acts in the collective layer: add --layers L8 (or --full)");
  EXPECT_EQ(l8_error({"--min-bus-bandwidth", "3"}), "--min-bus-bandwidth acts in the collective layer: add --layers L8 (or --full)");
  EXPECT_EQ(l8_error({"--inject-fault", "collective-wrong"}),
            "--inject-fault collective-wrong acts in the collective layer: add --layers L8");
  EXPECT_NE(l8_error({"--layers", "L8", "--rendezvous", "node1"}).find("HOST:PORT"), std::string::npos);
  EXPECT_NE(l8_error({"--layers", "L8", "--world-size", "0"}).find("from 1 to 65536"), std::string::npos);
  EXPECT_NE(l8_error({"--layers", "L8", "--min-bus-bandwidth", "-1"}).find("GB/s"), std::string::npos);
}

TEST(Cli, ADeviceIndexListChecksThoseGpusOnly) {
  const Options o = parse_ok({"--device-index", "2,0,3"});
  EXPECT_TRUE(o.all_devices);
  EXPECT_EQ(o.device_list, (std::vector<int>{2, 0, 3}));  // in the order given
  EXPECT_EQ(usage_error({"--device-index", "0,0"}), "--device-index 0,0 names GPU 0 twice: give each GPU once");
  EXPECT_EQ(usage_error({"--device-index", "0,x"}), "--device-index 0,x: 'x' is not a GPU index from 0 to 1023");
  EXPECT_EQ(usage_error({"--device-index", "0,"}), "--device-index 0,: '' is not a GPU index from 0 to 1023");
  EXPECT_EQ(usage_error({"--device-index", "0,1", "--device", "cpu"}),
            "--device-index all checks every visible GPU: it cannot go with --device cpu");
  // Each GPU's worker gets one index and the list (for the split and the peer layer), never "all".
  Options each = o;
  each.all_devices = false;
  each.device_index = 3;
  each.device_index_given = true;
  const Options w = through_plan(each, 7).options;
  EXPECT_FALSE(w.all_devices);
  EXPECT_EQ(w.device_index, 3);
  EXPECT_EQ(w.device_list, (std::vector<int>{2, 0, 3}));
}

TEST(Cli, FullRunsL8OnlyAsARankAndTheWorkerKnows) {
  const Options full = parse_l8({"--full"});
  EXPECT_TRUE(full.full);
  EXPECT_TRUE(through_plan(full, 7).options.full);
  EXPECT_FALSE(parse_l8({"--layers", "L8"}).full);
  EXPECT_FALSE(through_plan(parse_l8({"--layers", "L8"}), 7).options.full);
  // The GPU of an L8 rank is its local rank unless --device-index is given: the worker must know which.
  EXPECT_FALSE(through_plan(parse_l8({"--layers", "L8"}), 7).options.device_index_given);
  EXPECT_TRUE(through_plan(parse_l8({"--layers", "L8", "--device-index", "0"}), 7).options.device_index_given);
}

TEST(Cli, MemoryFractionIsOptionalAndTakesTinyDecimals) {
  EXPECT_FALSE(parse_ok({}).memory_fraction.has_value());  // the whole device
  EXPECT_EQ(parse_ok({"--memory-fraction", "1"}).memory_fraction, 1.0);
  EXPECT_EQ(parse_ok({"--memory-fraction=0.000456789"}).memory_fraction, 0.000456789);  // a few MiB of an H200
  EXPECT_EQ(parse_ok({"--inject-fault", "leak", "--gtest_filter=L5_*"}).fault, "leak");
}

TEST(Cli, DeviceIndexAllChecksEveryGpuAndTheWorkerGetsOneIndex) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"--device-index", "all"}, {"--device-index=all"}}) {
    const Options o = parse_ok(args);
    EXPECT_TRUE(o.all_devices) << shown(args);
    EXPECT_EQ(o.device_index, 0);
  }
  EXPECT_FALSE(parse_ok({"--device-index", "3"}).all_devices);
  Options o = parse_ok({"--device-index", "all", "--layers", "L2,L3"});
  o.all_devices = false;  // the supervisor picks each GPU in turn (runner/all_devices.cpp)
  o.device_index = 1;
  expect_worker_sees_the_same(o);
  EXPECT_FALSE(through_plan(o, 3).options.all_devices);
}

TEST(Cli, DeviceIndexAllRefusesWhatCannotBeDoneOncePerGpu) {
  EXPECT_NE(usage_error({"--device", "cpu", "--device-index", "all"}).find("--device cpu"), std::string::npos);
  EXPECT_NE(usage_error({"--device-index", "all", "--in-process"}).find("--in-process"), std::string::npos);
  EXPECT_NE(usage_error({"--device-index", "all", "--gtest_filter=L3_*"}).find("--layers"), std::string::npos);
  EXPECT_NE(usage_error({"--device-index", "all", "--gtest_output=xml:x.xml"}).find("--gtest_"), std::string::npos);
  EXPECT_NE(usage_error({"--device-index", "All"}).find("or 'all'"), std::string::npos);
  EXPECT_NE(usage_error({"--device-index", "all", "--device-index", "0"}).find("more than once"), std::string::npos);
}

// L5's operating range: its options, and a budget that must fit in the run's timeout.
TEST(Cli, RangeOptionsAreCheckedAndTheBudgetMustFitTheTimeout) {
  const std::vector<std::string> known = {"L1", "L2", "L3", "L4", "L5", "L6"};
  auto ok = [&](std::vector<std::string> a) { return std::get<Options>(parse_command_line(a, known)); };
  auto error = [&](std::vector<std::string> a) {
    const ParseResult r = parse_command_line(a, known);
    return std::holds_alternative<UsageError>(r) ? std::get<UsageError>(r).message : std::string("(accepted)");
  };
  const Options d = ok({});
  EXPECT_EQ(d.range_axis, "batch");
  EXPECT_EQ(d.range_budget_s, 20);
  EXPECT_EQ(d.range_memory_fraction, 0.9);
  EXPECT_EQ(ok({"--layers", "L5"}).range_budget_s, 20);  // 20 + 10 fits the default 30 s
  EXPECT_EQ(ok({"--range-axis=length", "--range-budget", "3", "--range-memory-fraction", "0.5"}).range_axis, "length");
  EXPECT_NE(error({"--range-axis", "width"}).find("'batch', 'length', 'concurrency' or 'processes'"), std::string::npos);
  EXPECT_EQ(ok({"--range-axis", "concurrency"}).range_axis, "concurrency");
  EXPECT_EQ(ok({"--range-axis", "processes"}).range_axis, "processes");
  EXPECT_NE(error({"--range-budget", "0.5"}).find("from 1 to 110"), std::string::npos);
  EXPECT_NE(error({"--range-budget", "1e1"}).find("--range-budget"), std::string::npos);
  EXPECT_NE(error({"--range-memory-fraction", "0"}).find("above 0"), std::string::npos);
  EXPECT_NE(error({"--range-memory-fraction", "1.5"}).find("at most 1"), std::string::npos);
  const std::string tight = error({"--layers", "L5", "--timeout", "20"});
  EXPECT_NE(tight.find("--range-budget 20 s does not fit in --timeout 20 s"), std::string::npos) << tight;
  EXPECT_NE(error({"--full", "--range-budget", "25"}).find("does not fit"), std::string::npos);
  EXPECT_EQ(ok({"--layers", "L5", "--timeout", "20", "--range-budget", "10"}).timeout_s, 20);
  EXPECT_EQ(ok({"--timeout", "5"}).range_budget_s, 20);  // without L5 the budget is not used
}

}  // namespace
}  // namespace kd
