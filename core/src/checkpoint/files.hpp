// The file operations of checkpoints, each failure an Error naming the file and the system's
// reason: whole writes, reads at an offset that report what they got, fsync of files and
// directories, and the atomic replacement of a file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::dcp {

class File {
 public:
  enum class Mode { read, create };  // create truncates
  File(const std::string& path, Mode mode);
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  void write_all(const void* data, size_t size);
  // Reads `size` bytes at `offset`; returns how many there were (fewer at the end of the file).
  size_t read_at(void* data, size_t size, int64_t offset) const;
  int64_t size() const;
  void sync();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

// fsync of a directory, so that the names created or renamed in it are durable.
void sync_directory(const std::string& dir);
// Writes `text` to `temporary`, fsyncs it, renames it over `target` and fsyncs the directory.
void replace_file(const std::string& dir, const std::string& temporary, const std::string& target,
                  const std::string& text);
std::string read_text_file(const std::string& path);
// The names of the regular files in `dir`.
std::vector<std::string> list_files(const std::string& dir);

}  // namespace tessera::dcp
