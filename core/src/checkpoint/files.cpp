#include "checkpoint/files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "tessera/errors.hpp"

namespace tessera::dcp {
namespace {

[[noreturn]] void fail_file_op(const char* what, const std::string& path) {
  throw Error(fmt::format("checkpoint: cannot {} '{}': {}", what, path, std::strerror(errno)));
}

}  // namespace

File::File(const std::string& path, Mode mode) : path_(path) {
  fd_ = mode == Mode::read ? ::open(path.c_str(), O_RDONLY | O_CLOEXEC)
                           : ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail_file_op(mode == Mode::read ? "open" : "create", path);
  if (mode == Mode::read) direct_fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
}

File::~File() {
  if (fd_ >= 0) ::close(fd_);
  if (direct_fd_ >= 0) ::close(direct_fd_);
}

void File::write_all(const void* data, size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    // Linux writes at most about 2 GiB per call.
    const ssize_t n = ::write(fd_, p, std::min<size_t>(size, size_t{1} << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_file_op("write", path_);
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
}

size_t File::read_direct_at(void* data, size_t size, int64_t offset) const {
  if (direct_fd_ < 0) return read_at(data, size, offset);
  auto* p = static_cast<char*>(data);
  size_t got = 0;
  while (got < size) {
    const ssize_t n = ::pread(direct_fd_, p + got, std::min<size_t>(size - got, size_t{1} << 30),
                              offset + static_cast<int64_t>(got));
    if (n < 0) {
      if (errno == EINTR) continue;
      // A file system that opens with O_DIRECT but refuses the read: through the page cache.
      if (errno == EINVAL && got == 0) return read_at(data, size, offset);
      fail_file_op("read", path_);
    }
    if (n == 0) break;  // end of file
    got += static_cast<size_t>(n);
    // A short read ends at the end of the file, which need not be aligned: nothing follows it.
    if (got % kDirectAlign != 0) break;
  }
  return got;
}

size_t File::read_at(void* data, size_t size, int64_t offset) const {
  auto* p = static_cast<char*>(data);
  size_t got = 0;
  while (got < size) {
    const ssize_t n = ::pread(fd_, p + got, std::min<size_t>(size - got, size_t{1} << 30),
                              offset + static_cast<int64_t>(got));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_file_op("read", path_);
    }
    if (n == 0) break;  // end of file
    got += static_cast<size_t>(n);
  }
  return got;
}

int64_t File::size() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) fail_file_op("stat", path_);
  return st.st_size;
}

void File::will_read(int64_t offset, int64_t size) const {
  ::posix_fadvise(fd_, offset, size, POSIX_FADV_WILLNEED);  // advice only: a failure changes nothing
}

void File::sync() {
  if (::fsync(fd_) != 0) fail_file_op("fsync", path_);
}

namespace {
constexpr size_t kDirectAlign = File::kDirectAlign;
constexpr size_t kWriterBuffer = size_t{16} << 20;
}  // namespace

SequentialWriter::SequentialWriter(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, 0644);
  direct_ = fd_ >= 0;
  if (!direct_) fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail_file_op("create", path);
  buffer_ = static_cast<std::byte*>(std::aligned_alloc(kDirectAlign, kWriterBuffer));
  if (buffer_ == nullptr)
    throw Error(fmt::format("checkpoint: no memory for the write buffer of '{}'", path));
}

SequentialWriter::~SequentialWriter() {
  if (fd_ >= 0) ::close(fd_);
  std::free(buffer_);
}

void SequentialWriter::flush_full_blocks() {
  // Whole aligned blocks go out; a tail shorter than a block waits for more bytes (or close()).
  const size_t out = direct_ ? filled_ / kDirectAlign * kDirectAlign : filled_;
  size_t done = 0;
  while (done < out) {
    const ssize_t n = ::pwrite(fd_, buffer_ + done, out - done, written_ + static_cast<int64_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_file_op("write", path_);
    }
    done += static_cast<size_t>(n);
  }
  std::memmove(buffer_, buffer_ + out, filled_ - out);
  filled_ -= out;
  written_ += static_cast<int64_t>(out);
}

void SequentialWriter::append(const void* data, size_t size) {
  const auto* p = static_cast<const std::byte*>(data);
  while (size > 0) {
    const size_t take = std::min(size, kWriterBuffer - filled_);
    std::memcpy(buffer_ + filled_, p, take);
    filled_ += take;
    p += take;
    size -= take;
    if (filled_ == kWriterBuffer) flush_full_blocks();
  }
}

void SequentialWriter::close() {
  flush_full_blocks();
  const int64_t length = written_ + static_cast<int64_t>(filled_);
  if (filled_ > 0) {
    // The last partial block, padded to a whole one; the file is cut back to its length below.
    const size_t padded = (filled_ + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
    std::memset(buffer_ + filled_, 0, padded - filled_);
    filled_ = padded;
    flush_full_blocks();
  }
  if (::ftruncate(fd_, length) != 0) fail_file_op("set the length of", path_);
  if (::fsync(fd_) != 0) fail_file_op("fsync", path_);
}

void sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail_file_op("open directory", dir);
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  errno = saved;
  if (rc != 0) fail_file_op("fsync directory", dir);
}

void replace_file(const std::string& dir, const std::string& temporary, const std::string& target,
                  const std::string& text) {
  {
    File file(temporary, File::Mode::create);
    file.write_all(text.data(), text.size());
    file.sync();
  }
  if (::rename(temporary.c_str(), target.c_str()) != 0) fail_file_op("rename over", target);
  sync_directory(dir);
}

std::string read_text_file(const std::string& path) {
  const File file(path, File::Mode::read);
  std::string text(static_cast<size_t>(file.size()), '\0');
  text.resize(file.read_at(text.data(), text.size(), 0));
  return text;
}

std::vector<std::string> list_files(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.is_regular_file()) names.push_back(entry.path().filename().string());
  if (ec) throw Error(fmt::format("checkpoint: cannot list directory '{}': {}", dir, ec.message()));
  return names;
}

}  // namespace tessera::dcp
