#include "checkpoint/save_steps.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "checkpoint/commit.hpp"
#include "checkpoint/data_file.hpp"
#include "tessera/errors.hpp"

namespace tessera::dcp {
namespace {

void make_checkpoint_directory(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec || !std::filesystem::is_directory(path))
    throw Error(fmt::format("checkpoint save: cannot make directory '{}': {}", path,
                            ec ? ec.message() : "a file of that name exists"));
}

// The first process: collects the other processes' chunks from their files' headers, then
// commits the metadata and removes the files it no longer names.
void commit_save(SavePlan& plan, const std::string& path, CrashPoints& crash) {
  Metadata& metadata = plan.metadata;
  const int64_t generation = metadata.generation;
  for (int p = 0; p < plan.num_processes; ++p) metadata.files.push_back(data_file_name(generation, p));
  for (int p = 1; p < plan.num_processes; ++p) {
    const std::string other = data_file_name(generation, p);
    for (auto& [key, chunk] : read_data_file_chunks(path + "/" + other, other)) {
      const auto entry = metadata.entries.find(key);
      if (entry == metadata.entries.end())
        throw Error(
            fmt::format("process {} saved entry '{}', which process 0 does not have; every process must "
                        "save the same keys",
                        p, key));
      entry->second.chunks.push_back(std::move(chunk));
    }
  }
  commit_metadata(path, metadata, crash);
  remove_unnamed_files(path, metadata, crash);
}

}  // namespace

void check_save_options(const SaveOptions& options) {
  if (options.checksum_block_bytes <= 0 || options.checksum_block_bytes % 4 != 0)
    throw Error(fmt::format("checkpoint save: checksum_block_bytes is {}; expected a positive multiple of 4",
                            options.checksum_block_bytes));
}

void agree_on_generation(SavePlan& plan, const std::string& path, WorldSync& sync) {
  std::string failure;
  if (plan.process_index == 0) try {
      make_checkpoint_directory(path);
    } catch (const std::exception& e) {
      failure = e.what();
    }
  sync.require_all_ok(failure, "making the checkpoint directory");
  // Every process looks before any writes (the exchange orders it), and all take the largest.
  plan.metadata.generation = sync.max_over_processes(next_generation(path));
}

WrittenFile write_own_file(SavePlan& plan, const std::string& path, const SaveOptions& options,
                           CrashPoints& crash) {
  const std::string file = data_file_name(plan.metadata.generation, plan.process_index);
  WrittenFile written;
  try {
    written.stats.bytes_written =
        write_data_file(plan, path + "/" + file, file, options.checksum_block_bytes, crash);
    written.stats.files.push_back(file);
    written.stats.chunks_written = static_cast<int64_t>(plan.chunks.size());
  } catch (const std::exception& e) {
    written.failure = e.what();
  }
  return written;
}

void commit_everywhere(SavePlan& plan, const std::string& path, const WrittenFile& written, WorldSync& sync,
                       CrashPoints& crash) {
  sync.require_all_ok(written.failure, "writing the checkpoint's data files");
  std::string failure;
  if (plan.process_index == 0) try {
      commit_save(plan, path, crash);
    } catch (const std::exception& e) {
      failure = e.what();
    }
  sync.require_all_ok(failure, "committing the checkpoint");
}

}  // namespace tessera::dcp
