// A --model file's format from its content: zip archives told apart by their entries, Zip64 and
// comments read, truncated or foreign files named as such. The archives are written here, stored
// (uncompressed) as PyTorch writes them; the real files are in the e2e tests (tests/data).
#include "fixtures/model_format.h"
#include "fixtures/pickle_storages.h"

#include <algorithm>
#include <fstream>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace kd::app {
namespace {

using namespace std::string_literals;

void put(std::string* b, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// A stored zip archive of these entries (each holding its own name as content). zip64: the end
// record's fields say 0xffff.../"see the Zip64 record", as writers do for large archives.
// symlinks: entries made on Unix with a symbolic link's mode (as `zip --symlinks` writes them).
using Files = std::vector<std::pair<std::string, std::string>>;  // name, content

std::string zip_files(const Files& files, bool zip64 = false, const std::string& comment = "",
                      const std::vector<std::string>& symlinks = {}) {
  std::string b, dir;
  for (const auto& [n, content] : files) {
    const uint64_t at = b.size();
    put(&b, 0x04034b50, 4), put(&b, 20, 2), put(&b, 0, 2), put(&b, 0, 2), put(&b, 0, 4), put(&b, 0, 4);
    put(&b, content.size(), 4), put(&b, content.size(), 4), put(&b, n.size(), 2), put(&b, 0, 2);
    b += n + content;
    const bool link = std::find(symlinks.begin(), symlinks.end(), n) != symlinks.end();
    put(&dir, 0x02014b50, 4), put(&dir, link ? 0x0314 : 20, 2), put(&dir, 20, 2), put(&dir, 0, 2), put(&dir, 0, 2), put(&dir, 0, 4);
    put(&dir, 0, 4), put(&dir, content.size(), 4), put(&dir, content.size(), 4), put(&dir, n.size(), 2), put(&dir, 0, 2);
    put(&dir, 0, 2), put(&dir, 0, 2), put(&dir, 0, 2), put(&dir, link ? 0120777u << 16 : 0, 4), put(&dir, at, 4);
    dir += n;
  }
  const size_t count = files.size();
  const uint64_t dir_at = b.size();
  b += dir;
  if (zip64) {
    const uint64_t end64_at = b.size();
    put(&b, 0x06064b50, 4), put(&b, 44, 8), put(&b, 45, 2), put(&b, 45, 2), put(&b, 0, 4), put(&b, 0, 4);
    put(&b, count, 8), put(&b, count, 8), put(&b, dir.size(), 8), put(&b, dir_at, 8);
    put(&b, 0x07064b50, 4), put(&b, 0, 4), put(&b, end64_at, 8), put(&b, 1, 4);
  }
  put(&b, 0x06054b50, 4), put(&b, 0, 2), put(&b, 0, 2);
  put(&b, zip64 ? 0xffff : count, 2), put(&b, zip64 ? 0xffff : count, 2);
  put(&b, zip64 ? 0xffffffff : dir.size(), 4), put(&b, zip64 ? 0xffffffff : dir_at, 4);
  put(&b, comment.size(), 2);
  return b + comment;
}

std::string zip(const std::vector<std::string>& names, bool zip64 = false, const std::string& comment = "",
                const std::vector<std::string>& symlinks = {}) {
  Files files;
  for (const auto& n : names) files.emplace_back(n, n);  // each entry holds its own name
  return zip_files(files, zip64, comment, symlinks);
}

// The offset of entry i's record in the central directory of an archive zip_files wrote.
size_t directory_entry(const std::string& b, int i) {
  size_t at = b.find("PK\x01\x02");
  for (; i > 0; --i) at = b.find("PK\x01\x02", at + 1);
  return at;
}
void patch(std::string* b, size_t at, uint64_t v, int bytes) {
  std::string field;
  put(&field, v, bytes);
  b->replace(at, static_cast<size_t>(bytes), field);
}

ReadAt reader(const std::string& bytes) {
  return [bytes](uint64_t offset, size_t n) { return offset >= bytes.size() ? std::string() : bytes.substr(offset, n); };
}
ModelFile inspect(const std::string& bytes) { return inspect_model(reader(bytes), bytes.size()); }

const std::vector<std::string> kTorchScript = {"tiny_model/data.pkl", "tiny_model/code/__torch__.py",
                                               "tiny_model/constants.pkl", "tiny_model/version"};
const std::vector<std::string> kPackage = {"tiny/data/aotinductor/model/c1.wrapper.so",
                                           "tiny/data/aotinductor/model/c1.wrapper_metadata.json",
                                           "tiny/archive_format", "tiny/archive_version"};

TEST(ModelFormat, ReadsTheEntriesOfAZipArchive) {
  const std::string b = zip(kTorchScript);
  EXPECT_EQ(zip_entries(reader(b), b.size()), kTorchScript);
  const std::string b64 = zip(kTorchScript, true, "a comment");
  EXPECT_EQ(zip_entries(reader(b64), b64.size()), kTorchScript);
}

TEST(ModelFormat, TellsTorchScriptFromAnAotiPackageByTheirEntries) {
  EXPECT_EQ(inspect(zip(kTorchScript)).format, ModelFormat::TorchScript);
  EXPECT_EQ(inspect(zip(kPackage)).format, ModelFormat::AotiPackage);
  EXPECT_EQ(inspect(zip(kPackage, true)).format, ModelFormat::AotiPackage);
  EXPECT_EQ(inspect(zip({"data/aotinductor/model/x.so"})).format, ModelFormat::AotiPackage);  // no archive name in front
  EXPECT_EQ(inspect(zip({"mydata/aotinductor/x.so"})).format, ModelFormat::Unknown);          // a part, not a substring
  std::string flat(16, '\0');
  flat.replace(4, 4, "PTMF");  // TorchScript's flatbuffer format carries its identifier at byte 4
  EXPECT_EQ(inspect(flat).format, ModelFormat::TorchScript);
}

TEST(ModelFormat, NamesWhatAnUnknownFileIs) {
  EXPECT_EQ(inspect("not a model\n").why, "not a zip archive (no complete central directory: a truncated or corrupt file?)");
  EXPECT_EQ(inspect("").format, ModelFormat::Unknown);
  const std::string package = zip(kPackage);
  EXPECT_EQ(inspect(package.substr(0, package.size() / 2)).format, ModelFormat::Unknown);  // truncated
  EXPECT_EQ(inspect(package.substr(0, package.size() - 1)).format, ModelFormat::Unknown);  // the end record cut
  EXPECT_NE(inspect(zip({"tiny/archive_format", "tiny/models/tiny.json"})).why.find("torch.export archive"), std::string::npos);
  EXPECT_NE(inspect(zip({"readme.txt"})).why.find("neither data.pkl"), std::string::npos);
}

TEST(ModelFormat, ADirectoryOutsideTheFileIsNotAnArchive) {
  std::string b = zip(kTorchScript);
  const size_t end = b.size() - 22;
  b[end + 19] = '\x7f';  // the directory's offset now points far past the end record
  EXPECT_FALSE(zip_entries(reader(b), b.size()));
  EXPECT_EQ(inspect(b).format, ModelFormat::Unknown);
}

// Found by fuzz_model_format: a file shorter than the flatbuffer mark, and a Zip64 locator pointing past the file.
TEST(ModelFormat, NeverAsksForMoreThanTheFileHolds) {
  // 50 bytes: a Zip64 locator, then an end record whose fields all say "see the Zip64 record".
  const std::string found("PK\x06\x07\x00\x20\x00\x00\x43\x07\x00\x00\x00\x00\x00\x08\x01\x00\x00\x00"
                          "PK\x05\x06\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x05\x00\x00\x00\x00\x06\x00"
                          "\x00\x00", 46);
  for (const std::string& bytes : {std::string(), std::string("PK"), std::string("P\0\0\0", 4) + found}) {
    const ReadAt strict = [&bytes](uint64_t offset, size_t n) {
      EXPECT_LE(n, bytes.size());
      return offset >= bytes.size() ? std::string() : bytes.substr(offset, n);
    };
    EXPECT_EQ(inspect_model(strict, bytes.size()).format, ModelFormat::Unknown);
  }
}

// Issue 17: LibTorch's package loader extracts every entry; one with '../' wrote outside its folder.
TEST(ModelFormat, RefusesEntriesThatWouldLandOutsideTheExtractionFolder) {
  auto unsafe = [](std::vector<std::string> extra, std::vector<std::string> links = {}) {
    std::vector<std::string> names = kPackage;
    names.insert(names.end(), extra.begin(), extra.end());
    return inspect(zip(names, false, "", links)).unsafe;
  };
  EXPECT_EQ(unsafe({}), "");
  EXPECT_EQ(unsafe({"tiny/data/..hidden/x", "tiny/a..b"}), "");  // '..' inside a name is no component
  EXPECT_EQ(unsafe({"tiny/../../evil.txt"}), "entry 'tiny/../../evil.txt' has a '..' component");
  EXPECT_EQ(unsafe({".."}), "entry '..' has a '..' component");
  EXPECT_EQ(unsafe({"tiny\\..\\evil"}), "entry 'tiny\\..\\evil' has a '..' component");
  EXPECT_EQ(unsafe({"/etc/evil"}), "entry '/etc/evil' has an absolute path");
  EXPECT_EQ(unsafe({"C:/evil"}), "entry 'C:/evil' has an absolute path");
  EXPECT_EQ(unsafe({"tiny/data/link"}, {"tiny/data/link"}), "entry 'tiny/data/link' is a symbolic link");
  // Still recognised as what it is, so that the report names the format it refused.
  EXPECT_EQ(inspect(zip({kPackage[0], "tiny/../x"})).format, ModelFormat::AotiPackage);
}

// Issue 17: a record shorter than the directory says was read past its end by LibTorch.
TEST(ModelFormat, RecordsMustBeWhereAndAsLargeAsTheDirectorySays) {
  EXPECT_EQ(inspect(zip(kTorchScript)).corrupt, "");
  EXPECT_EQ(inspect(zip(kPackage, true, "a comment")).corrupt, "");
  const std::string good = zip(kTorchScript);
  const size_t last = directory_entry(good, 3), first = directory_entry(good, 0);
  std::string longer = good;  // the last record claims more bytes than lie before the directory
  patch(&longer, last + 20, 500, 4), patch(&longer, last + 24, 500, 4);
  EXPECT_EQ(inspect(longer).corrupt, "entry 'tiny_model/version' is truncated: the directory gives it 500 bytes, "
                                     "the archive holds at most 18");
  std::string overlapping = good;  // the first record runs into the second
  patch(&overlapping, first + 20, 40, 4), patch(&overlapping, first + 24, 40, 4);
  EXPECT_EQ(inspect(overlapping).corrupt, "entry 'tiny_model/code/__torch__.py' overlaps the record before it");
  std::string moved = good;  // the directory places a record where there is none
  patch(&moved, first + 42, 3, 4);
  EXPECT_EQ(inspect(moved).corrupt, "entry 'tiny_model/data.pkl' has no record where the directory places it");
  std::string past = good;
  patch(&past, first + 42, 0x7fffffff, 4);
  EXPECT_EQ(inspect(past).corrupt, "entry 'tiny_model/data.pkl' has no record: the directory places it past the archive's data");
  std::string inconsistent = good;  // stored, yet two sizes
  patch(&inconsistent, first + 24, 7, 4);
  EXPECT_EQ(inspect(inconsistent).corrupt, "entry 'tiny_model/data.pkl' is stored with 19 bytes but says it has 7");
  EXPECT_EQ(inspect(longer).format, ModelFormat::TorchScript);  // still named for the report
}

// data.pkl as torch.jit.save writes it: two float storages, the second through the memo (BINGET).
const std::string kPickle =
    "\x80\x02(X\x07\x00\x00\x00storageq\x00" "ctorch\nFloatStorage\nq\x01X\x01\x00\x00\x00" "0"
    "X\x03\x00\x00\x00" "cpuq\x02K\x18tQ(h\x00h\x01X\x01\x00\x00\x00" "1h\x02K\x03tQ\x86."s;

TEST(ModelFormat, ReadsTheStoragesThatDataPklNames) {
  const auto storages = pickled_storages(kPickle);
  ASSERT_TRUE(storages);
  ASSERT_EQ(storages->size(), 2u);
  EXPECT_EQ((*storages)[0].key, "0");
  EXPECT_EQ((*storages)[0].type, "FloatStorage");
  EXPECT_EQ((*storages)[0].bytes, 96u);
  EXPECT_EQ((*storages)[1].key, "1");
  EXPECT_EQ((*storages)[1].numel, 3u);
  EXPECT_FALSE(pickled_storages("not a pickle"));
  EXPECT_FALSE(pickled_storages(kPickle.substr(0, kPickle.size() - 1)));  // no STOP
}

TEST(ModelFormat, ATensorRecordShorterThanItsStorageIsCorrupt) {
  auto with_data = [](size_t bytes0) {
    return inspect(zip_files({{"m/data.pkl", kPickle}, {"m/data/0", std::string(bytes0, 'x')}, {"m/data/1", std::string(12, 'y')},
                              {"m/version", "3\n"}}));
  };
  EXPECT_EQ(with_data(96).corrupt, "");
  EXPECT_EQ(with_data(40).corrupt, "entry 'm/data/0' holds 40 bytes, its tensor storage (24 x FloatStorage) needs 96");
  EXPECT_EQ(inspect(zip_files({{"m/data.pkl", kPickle}, {"m/data/0", std::string(96, 'x')}})).corrupt,
            "tensor storage '1' has no record 'm/data/1'");
}

TEST(ModelFormat, ReadsARealFile) {
  test::TempDir dir;
  std::ofstream(dir.file("model.bin"), std::ios::binary) << zip(kPackage);  // the name says nothing
  EXPECT_EQ(inspect_model_file(dir.file("model.bin")).format, ModelFormat::AotiPackage);
  EXPECT_EQ(inspect_model_file(dir.file("none")).why, "cannot be read");
}

TEST(ModelFormat, TheDeviceMismatchNamesBothDevices) {
  EXPECT_EQ(device_mismatch("cpu", "cuda:0"),
            "compiled for another device: this AOTInductor package was compiled for cpu and this run asked for cuda:0 "
            "(compile the package for cuda, or run with --device cpu)");
}

}  // namespace
}  // namespace kd::app
