// Why LibTorch could not be loaded: not there (3) or there but broken (4), from the dynamic loader's own messages;
// the suite's own gaps (its probe not built) are 19.
#include "fixtures/probe_loader.h"

#include <fstream>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace kd {
namespace {

struct LoaderText {
  const char* dlerror;
  Code code;
};
void PrintTo(const LoaderText& t, std::ostream* os) { *os << t.dlerror; }

class ClassifyLoadError : public testing::TestWithParam<LoaderText> {};

TEST_P(ClassifyLoadError, GivesTheCodeTheUserShouldSee) {
  EXPECT_EQ(name(classify_load_error(GetParam().dlerror)), name(GetParam().code)) << GetParam().dlerror;
}

INSTANTIATE_TEST_SUITE_P(
    ProbeLoader, ClassifyLoadError,
    testing::Values(
        // The probe itself, or LibTorch's own libraries, are not there: TORCH_MISSING.
        LoaderText{"/x/libkd_probe.so: cannot open shared object file: No such file or directory", Code::TorchMissing},
        LoaderText{"libc10.so: cannot open shared object file: No such file or directory", Code::TorchMissing},
        LoaderText{"libtorch_cuda.so: cannot open shared object file: No such file or directory", Code::TorchMissing},
        LoaderText{"libtorch_cpu.so: cannot open shared object file: No such file or directory", Code::TorchMissing},
        // LibTorch is there but does not load: TORCH_IMPORT_FAILED.
        LoaderText{"libcudart.so.13: cannot open shared object file: No such file or directory",
                   Code::TorchImportFailed},
        LoaderText{"/x/libc10.so: file too short", Code::TorchImportFailed},
        LoaderText{"/x/libkd_probe.so: undefined symbol: _ZN3c105ErrorC2E", Code::TorchImportFailed},
        LoaderText{"/x/libtorch_cpu.so: invalid ELF header", Code::TorchImportFailed},
        LoaderText{"invalid ELF header", Code::TorchImportFailed},
        LoaderText{"/x/libc10.so: wrong ELF class: ELFCLASS32", Code::TorchImportFailed},
        // The file is there but unreadable: present, so not "missing".
        LoaderText{"/x/libtorch_cpu.so: cannot open shared object file: Permission denied",
                   Code::TorchImportFailed}));

// A build that found no LibTorch has no probe: the machine has no LibTorch the suite could use.
TEST(ProbeLoader, AbsentProbeOfABuildWithoutLibTorchIsTorchMissing) {
  test::TempDir dir;
  const ProbeLoad r = load_probe(dir.file("libkd_probe.so"), false);
  EXPECT_EQ(r.probe, nullptr);
  EXPECT_EQ(name(r.code), name(Code::TorchMissing));
  EXPECT_NE(r.message.find("cannot open shared object file"), std::string::npos) << r.message;
}

// A build that found LibTorch but whose probe is not there: the suite's gap, with the command that builds it.
TEST(ProbeLoader, AbsentProbeOfABuildWithLibTorchIsSuiteIncompleteWithTheBuildCommand) {
  test::TempDir dir;
  const ProbeLoad r = load_probe(dir.file("libkd_probe.so"), true);
  EXPECT_EQ(r.probe, nullptr);
  EXPECT_EQ(name(r.code), name(Code::SuiteIncomplete));
  EXPECT_NE(r.message.find("libkd_probe.so) is not built, although this build found LibTorch"), std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("; build it with: cmake --build "), std::string::npos) << r.message;
  const std::string command_end = "--target kd_probe";
  EXPECT_EQ(r.message.substr(r.message.size() - command_end.size()), command_end) << r.message;
}

// A LibTorch the build found but could not build against is there: never TORCH_MISSING or TORCH_IMPORT_FAILED; the
// build's own reason is the message, and the command configures again (what it could not do depends on what it found).
TEST(ProbeLoader, ProbeTheBuildCouldNotMakeIsSuiteIncompleteWithTheBuildsReason) {
  test::TempDir dir;
  std::ofstream(dir.file("libkd_probe.unbuilt")) << "LibTorch 2.11.0 is a CUDA build; building against it needs the CUDA "
                                                    "runtime headers\n";
  for (const bool found : {true, false}) {
    const ProbeLoad r = load_probe(dir.file("libkd_probe.so"), found);
    EXPECT_EQ(r.probe, nullptr);
    EXPECT_EQ(name(r.code), name(Code::SuiteIncomplete));
    EXPECT_NE(r.message.find("although LibTorch was found: LibTorch 2.11.0 is a CUDA build"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find(" && cmake --build "), std::string::npos) << r.message;
  }
}

TEST(ProbeLoader, EmptyProbeFileIsTorchImportFailed) {
  test::TempDir dir;
  const std::string path = dir.file("libkd_probe.so");
  std::ofstream(path).close();
  const ProbeLoad r = load_probe(path);
  EXPECT_EQ(r.probe, nullptr);
  EXPECT_EQ(name(r.code), name(Code::TorchImportFailed));
  EXPECT_NE(r.message.find("file too short"), std::string::npos) << r.message;
}

TEST(ProbeLoader, TextFileAsProbeIsTorchImportFailed) {
  test::TempDir dir;
  const std::string path = dir.file("libkd_probe.so");
  std::ofstream(path) << "this is not a shared library, it is a text file long enough to be read as one\n";
  const ProbeLoad r = load_probe(path);
  EXPECT_EQ(r.probe, nullptr);
  EXPECT_EQ(name(r.code), name(Code::TorchImportFailed));
  EXPECT_NE(r.message.find("invalid ELF header"), std::string::npos) << r.message;
}

TEST(ProbeLoader, DefaultProbeSitsBesideTheExecutable) {
  const std::string path = default_probe_path();
  ASSERT_GT(path.size(), std::string("/libkd_probe.so").size());
  EXPECT_EQ(path.substr(path.rfind('/')), "/libkd_probe.so");
  EXPECT_EQ(path[0], '/');
}

}  // namespace
}  // namespace kd
