#include "checkpoint/commit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "checkpoint/files.hpp"
#include "tessera/errors.hpp"

namespace tessera::dcp {
namespace {

constexpr const char* kTemporaryPrefix = ".metadata.tmp";

// The generation in a data file name, or -1 when the name is not one.
int64_t generation_of(const std::string& name) {
  if (name.rfind("__", 0) != 0 || name.size() < 10 || name.substr(name.size() - 7) != ".distcp") return -1;
  const size_t underscore = name.find('_', 2);
  if (underscore == std::string::npos) return -1;
  try {
    return std::stoll(name.substr(2, underscore - 2));
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

std::string data_file_name(int64_t generation, int process) {
  return fmt::format("__{}_{}.distcp", generation, process);
}

int64_t next_generation(const std::string& dir) {
  const std::string path = dir + "/" + kMetadataFile;
  if (std::filesystem::exists(path)) {
    try {
      return parse_metadata(read_text_file(path), path).generation + 1;
    } catch (const Error&) {
      // Unreadable: fall back to the names, which never repeat a generation either.
    }
  }
  int64_t largest = 0;
  for (const std::string& name : list_files(dir)) largest = std::max(largest, generation_of(name));
  return largest + 1;
}

void commit_metadata(const std::string& dir, const Metadata& metadata, CrashPoints& crash) {
  const std::string temporary = fmt::format("{}/{}.{}", dir, kTemporaryPrefix, metadata.generation);
  const std::string text = metadata_json(metadata);
  {
    File file(temporary, File::Mode::create);
    file.write_all(text.data(), text.size());
    crash.reach();
    file.sync();
  }
  crash.reach();
  if (std::rename(temporary.c_str(), (dir + "/" + kMetadataFile).c_str()) != 0)
    throw Error(fmt::format("checkpoint: cannot rename '{}' to '{}/{}'", temporary, dir, kMetadataFile));
  crash.reach();
  sync_directory(dir);
  crash.reach();
}

void remove_unnamed_files(const std::string& dir, const Metadata& metadata, CrashPoints& crash) {
  for (const std::string& name : list_files(dir)) {
    const bool ours = generation_of(name) >= 0 || name.rfind(kTemporaryPrefix, 0) == 0;
    if (!ours || std::find(metadata.files.begin(), metadata.files.end(), name) != metadata.files.end())
      continue;
    std::error_code ec;
    std::filesystem::remove(dir + "/" + name, ec);  // best effort: the next save tries again
    crash.reach();
  }
}

}  // namespace tessera::dcp
