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
  // O_DIRECT needs offsets, sizes and addresses aligned to the device's block; this covers them.
  static constexpr size_t kDirectAlign = 4096;
  // The same past the page cache (O_DIRECT: the disk's bytes land in `data` with no copy through
  // the cache) where the file system takes it, else through it. `data`, `size` and `offset` must
  // be multiples of kDirectAlign.
  size_t read_direct_at(void* data, size_t size, int64_t offset) const;
  int64_t size() const;
  // Asks the kernel to start reading a range now (posix_fadvise WILLNEED): reads announced
  // together reach the disk together instead of one after another.
  void will_read(int64_t offset, int64_t size) const;
  void sync();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  int direct_fd_ = -1;  // read mode: the file opened with O_DIRECT, or -1 where that is refused
};

// A new file written front to back through an aligned buffer with O_DIRECT where the file system
// takes it: the bytes skip the page cache, whose copy is the slow part of a buffered write of a
// large file (the disk then runs at its sequential speed). Elsewhere (tmpfs refuses O_DIRECT) it
// writes through the page cache. close() pads the last block for O_DIRECT, cuts the file back to
// its length and fsyncs it.
class SequentialWriter {
 public:
  explicit SequentialWriter(const std::string& path);
  ~SequentialWriter();
  SequentialWriter(const SequentialWriter&) = delete;
  SequentialWriter& operator=(const SequentialWriter&) = delete;

  void append(const void* data, size_t size);
  void close();  // flush, set the length, fsync

 private:
  void flush_full_blocks();
  std::string path_;
  int fd_ = -1;
  bool direct_ = false;
  std::byte* buffer_ = nullptr;
  size_t filled_ = 0;
  int64_t written_ = 0;  // bytes already in the file
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
