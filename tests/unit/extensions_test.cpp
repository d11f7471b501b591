// --extension: real loader and LibTorch texts -> what the report says about the library (file name only).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "fixtures/extensions.h"
#include "temp_dir.h"
#include "verdict/signatures.h"

namespace kd::ext {
namespace {

const std::string kPath = "/opt/app/build/libfused_ops.so";

std::string cause_of(const std::string& message) {
  const auto h = diagnose(Code::ModelLoadFailed, message, SignatureFacts{});
  return h ? h->cause : "";
}

TEST(Extensions, FileNameDropsTheFolder) {
  EXPECT_EQ(file_name(kPath), "libfused_ops.so");
  EXPECT_EQ(file_name("libx.so"), "libx.so");
}

TEST(Extensions, DemanglesCppSymbolsAndKeepsCOnes) {
  EXPECT_EQ(demangle("_ZN3c106detail14torchCheckFailEPKcS2_jS2_"),
            "c10::detail::torchCheckFail(char const*, char const*, unsigned int, char const*)");
  EXPECT_EQ(demangle("cudaLaunchKernel"), "cudaLaunchKernel");
}

TEST(Extensions, AnUndefinedLibTorchSymbolMeansAnotherLibTorch) {
  const std::string m = load_failure(kPath, kPath + ": undefined symbol: _ZN3c106detail14torchCheckFailEPKcS2_jS2_", 1);
  EXPECT_EQ(m, "extension 'libfused_ops.so' does not load: undefined symbol `c10::detail::torchCheckFail(char const*, "
               "char const*, unsigned int, char const*)` (LibTorch's: built against another LibTorch version)");
  EXPECT_EQ(m.find("/opt"), std::string::npos);
  EXPECT_NE(cause_of(m).find("another LibTorch"), std::string::npos);
}

TEST(Extensions, AStringOfTheOtherAbiMeansTheOtherAbi) {
  // c10::Error::Error(c10::SourceLocation, std::string) in the old ABI, met by a new-ABI LibTorch, and the reverse.
  const std::string old_abi = load_failure(kPath, kPath + ": undefined symbol: _ZN3c105ErrorC1ENS_14SourceLocationESs", 1);
  EXPECT_NE(old_abi.find("the other C++ ABI: _GLIBCXX_USE_CXX11_ABI=0, this LibTorch uses 1"), std::string::npos) << old_abi;
  const std::string new_abi = load_failure(
      kPath, kPath + ": undefined symbol: _ZN3c105ErrorC1ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE", 0);
  EXPECT_NE(new_abi.find("the other C++ ABI: _GLIBCXX_USE_CXX11_ABI=1, this LibTorch uses 0"), std::string::npos) << new_abi;
  EXPECT_NE(new_abi.find("`c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<"), std::string::npos) << new_abi;
  EXPECT_NE(cause_of(old_abi).find("C++ ABI"), std::string::npos);
  // The same new-ABI symbol in a new-ABI LibTorch is simply not there: another version.
  EXPECT_NE(load_failure(kPath, kPath + ": undefined symbol: _ZN3c105ErrorC1ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE", 1)
                .find("LibTorch's"), std::string::npos);
}

TEST(Extensions, AMissingCudaRuntimeMeansAnotherCudaMajorVersion) {
  const std::string m = load_failure(kPath, "libcudart.so.11.0: cannot open shared object file: No such file or directory", 1);
  EXPECT_EQ(m, "extension 'libfused_ops.so' does not load: it needs libcudart.so.11.0, which is not found (CUDA 11's: "
               "built for another CUDA major version)");
  EXPECT_NE(cause_of(m).find("another CUDA version"), std::string::npos);
  const std::string sym = load_failure(kPath, kPath + ": undefined symbol: cudaLaunchKernel, version libcudart.so.12", 1);
  EXPECT_NE(sym.find("`cudaLaunchKernel` (CUDA's: built for another CUDA version)"), std::string::npos) << sym;
  const std::string gpu = load_failure(kPath, "libc10_cuda.so: cannot open shared object file: No such file or directory", 1);
  EXPECT_NE(cause_of(gpu).find("GPU build of LibTorch"), std::string::npos) << gpu;
}

TEST(Extensions, OtherLoaderRefusals) {
  const std::string cxx = load_failure(
      kPath, "/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.32' not found (required by " + kPath + ")", 1);
  EXPECT_EQ(cxx, "extension 'libfused_ops.so' does not load: it needs GLIBCXX_3.4.32, from a newer C++ runtime or C "
                 "library than this system's");
  EXPECT_NE(cause_of(cxx).find("newer compiler"), std::string::npos);
  const std::string elf = load_failure(kPath, kPath + ": invalid ELF header", 1);
  EXPECT_NE(elf.find("not a shared library for this machine"), std::string::npos);
  const std::string other = load_failure(kPath, kPath + ": something new", 1);
  EXPECT_EQ(other, "extension 'libfused_ops.so' does not load: libfused_ops.so: something new");  // the path never shows
}

TEST(Extensions, NothingRegisteredOrARegistrationThatThrows) {
  EXPECT_NE(cause_of(no_operators(kPath)).find("registered no operator"), std::string::npos);
  const std::string twice = registration_failure(kPath, "Only a single TORCH_LIBRARY can be used to register the namespace kd_test");
  EXPECT_EQ(twice.rfind("extension 'libfused_ops.so' fails while registering its operators: Only a single", 0), 0u);
  EXPECT_NE(cause_of(twice).find("defined twice"), std::string::npos);
}

TEST(Extensions, MissingAndUnreadableNameTheFileOnly) {
  test::TempDir dir;
  const auto missing = file_problem(dir.path() + "/libnone.so");
  ASSERT_TRUE(missing);
  EXPECT_EQ(*missing, "extension 'libnone.so' is missing: no such file or directory");
  EXPECT_NE(cause_of(*missing).find("no file"), std::string::npos);
  const auto folder = file_problem(dir.path());
  ASSERT_TRUE(folder);
  EXPECT_NE(folder->find("a folder"), std::string::npos);
  const std::string lib = dir.path() + "/libx.so";
  std::ofstream(lib) << "x";
  EXPECT_FALSE(file_problem(lib));
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: a file without permissions is still readable";
  ::chmod(lib.c_str(), 0);
  const auto denied = file_problem(lib);
  ASSERT_TRUE(denied);
  EXPECT_EQ(*denied, "extension 'libx.so' is unreadable: permission denied");
  EXPECT_NE(cause_of(*denied).find("may not read it"), std::string::npos);
}

TEST(Extensions, AModelCallingAnUnregisteredOperatorNamesIt) {
  // LibTorch's torch::jit::load, first line, when no loaded library registered the operator.
  const auto m = unregistered_operator("Unknown builtin op: kd_test::fused_gelu.");
  ASSERT_TRUE(m);
  EXPECT_EQ(*m, "operator `kd_test::fused_gelu` is not registered: load its extension with --extension");
  EXPECT_NE(cause_of(*m).find("custom operator"), std::string::npos);
  EXPECT_FALSE(unregistered_operator("PytorchStreamReader failed locating file constants.pkl: file not found"));
}

TEST(Extensions, ABuiltInOperatorMissingMeansANewerTorchSavedTheModel) {
  // Debian's LibTorch 1.13 loading a model that torch 2.11 saved (all-MiniLM-L6-v2): no extension would help.
  const auto m = unregistered_operator("Unknown builtin op: aten::scaled_dot_product_attention.");
  ASSERT_TRUE(m);
  EXPECT_EQ(*m, "operator `aten::scaled_dot_product_attention` is not built into this LibTorch: the model was saved "
                "by a newer torch");
  EXPECT_NE(cause_of(*m).find("newer torch"), std::string::npos);
}

}  // namespace
}  // namespace kd::ext
