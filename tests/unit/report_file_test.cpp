// --output FILE creates a new file with the whole report, or fails leaving the folder
// exactly as it was: an existing file or symlink untouched, no temporary file left.
#include "reporters/report_file.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace kd {
namespace {

namespace fs = std::filesystem;
using Names = std::set<std::string>;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void put(const std::string& path, const std::string& content) { std::ofstream(path, std::ios::binary) << content; }

// Runs fn in a child process, for a limit or an identity this process must not take on: its exit code.
int in_child(const std::function<int()>& fn) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(fn());
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

class ReportFile : public testing::Test {
 protected:
  // Fails the test unless writing is refused, with a message, and the folder is unchanged.
  void expect_refused(const std::string& path, const std::string& reason) {
    const Names before = dir.entries();
    const std::optional<std::string> error = write_new_file(path, "{\"code\": \"GPU_CHECK_PASSED\"}\n");
    ASSERT_TRUE(error.has_value()) << path << " was written";
    EXPECT_NE(error->find(reason), std::string::npos) << *error;
    EXPECT_EQ(dir.entries(), before) << "the folder changed (a stray temporary file?)";
  }
  test::TempDir dir;
};

TEST_F(ReportFile, CreatesTheFileWithExactlyTheContent) {
  const std::string content = "{\n  \"code\": \"GPU_CHECK_PASSED\",\n  \"exit_code\": 0\n}\n";
  const std::string path = dir.file("report.json");
  EXPECT_EQ(check_new_file(path), std::nullopt);
  EXPECT_EQ(write_new_file(path, content), std::nullopt);
  EXPECT_EQ(read(path), content);
  EXPECT_EQ(dir.entries(), Names{"report.json"});
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

// Issue 17: a name over the file system's limit passed the pre-check and failed only after the run.
TEST_F(ReportFile, ANameOverTheFileSystemsLimitFailsThePreCheck) {
  const long name_max = ::pathconf(dir.path().c_str(), _PC_NAME_MAX);
  ASSERT_GT(name_max, 20);
  const auto why = check_new_file(dir.file(std::string(static_cast<size_t>(name_max), 'r')));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("longer than this file system allows"), std::string::npos) << *why;
  EXPECT_TRUE(check_new_file(dir.file(std::string(static_cast<size_t>(name_max) - 10, 'r'))).has_value());
  EXPECT_EQ(check_new_file(dir.file(std::string(static_cast<size_t>(name_max) - 11, 'r'))), std::nullopt);
  EXPECT_EQ(write_new_file(dir.file(std::string(static_cast<size_t>(name_max) - 11, 'r')), "{}"), std::nullopt);
  EXPECT_TRUE(check_new_file(std::string(PATH_MAX, 'p')).has_value());
}

TEST_F(ReportFile, WritesAnEmptyReport) {
  EXPECT_EQ(write_new_file(dir.file("empty.json"), ""), std::nullopt);
  EXPECT_EQ(read(dir.file("empty.json")), "");
}

TEST_F(ReportFile, ExistingFileIsLeftUntouched) {
  const std::string path = dir.file("report.json");
  put(path, "the user's own data");
  EXPECT_TRUE(check_new_file(path).has_value());
  expect_refused(path, "already exists");
  EXPECT_EQ(read(path), "the user's own data");
}

TEST_F(ReportFile, SymlinkAndItsTargetAreLeftUntouched) {
  put(dir.file("target.txt"), "keep me");
  const std::string link = dir.file("report.json");
  ASSERT_EQ(::symlink(dir.file("target.txt").c_str(), link.c_str()), 0);
  expect_refused(link, "symbolic link");
  EXPECT_EQ(fs::read_symlink(link).string(), dir.file("target.txt"));
  EXPECT_EQ(read(dir.file("target.txt")), "keep me");
}

TEST_F(ReportFile, DanglingSymlinkIsNotFollowed) {
  const std::string link = dir.file("report.json");
  ASSERT_EQ(::symlink("nowhere.json", link.c_str()), 0);
  expect_refused(link, "symbolic link");
  EXPECT_EQ(fs::read_symlink(link).string(), "nowhere.json");
  EXPECT_FALSE(fs::exists(dir.file("nowhere.json"))) << "the link's target was created";
}

TEST_F(ReportFile, MissingFolderIsAnError) { expect_refused(dir.file("no/such/report.json"), "does not exist"); }

TEST_F(ReportFile, ExistingFolderIsNotAFile) {
  fs::create_directory(dir.file("sub"));
  expect_refused(dir.file("sub"), "already exists");
  expect_refused(dir.file("sub") + "/", "already exists");
}

// A file size limit fails write() with EFBIG once SIGXFSZ is ignored, as the supervisor does:
// the temporary file goes too. In a child process, which alone gets the limit.
TEST_F(ReportFile, FileSizeLimitLeavesNoPartialFile) {
  const int status = in_child([&] {
    const rlimit limit{1024, 1024};
    ::signal(SIGXFSZ, SIG_IGN);
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 2;
    const auto error = write_new_file(dir.file("report.json"), std::string(4096, 'x'));
    return !error ? 3 : error->find("File too large") != std::string::npos ? 0 : 4;
  });
  EXPECT_EQ(status, 0) << "2: no limit, 3: written, 4: another error";
  EXPECT_EQ(dir.entries(), Names{});
}

TEST_F(ReportFile, ReadOnlyFolderIsAnError) {
  const std::string folder = dir.file("ro");
  fs::create_directory(folder);
  ASSERT_EQ(::chmod(folder.c_str(), 0555), 0);
  if (::geteuid() != 0) {
    expect_refused(folder + "/report.json", "not writable");
  } else {  // root writes into a 0555 folder: ask as nobody, in a child process
    ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
    const int status = in_child([&] {
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) return 2;
      const auto error = write_new_file(folder + "/report.json", "{}\n");
      return !error ? 3 : error->find("not writable") != std::string::npos ? 0 : 4;
    });
    EXPECT_EQ(status, 0) << "2: no setuid, 3: written, 4: another error";
  }
  EXPECT_TRUE(fs::is_empty(folder));
}

}  // namespace
}  // namespace kd
