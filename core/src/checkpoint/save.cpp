// dcp::save and dcp::async_save: plan on the caller's thread, write this process's data file,
// wait for every process, then the first process writes the metadata (the commit) and removes
// what it no longer names.
#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "checkpoint/commit.hpp"
#include "checkpoint/data_file.hpp"
#include "checkpoint/save_plan.hpp"
#include "checkpoint/world_sync.hpp"
#include "tessera/checkpoint.hpp"
#include "tessera/errors.hpp"

namespace tessera::dcp {
namespace {

void check_save_options(const SaveOptions& options) {
  if (options.checksum_block_bytes <= 0 || options.checksum_block_bytes % 4 != 0)
    throw Error(fmt::format("checkpoint save: checksum_block_bytes is {}; expected a positive multiple of 4",
                            options.checksum_block_bytes));
}

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

// Writes the plan; every process of the world calls it with its own plan.
SaveStats write_plan(SavePlan plan, const std::string& path, const SaveOptions& options, WorldSync& sync) {
  CrashPoints crash;
  std::string failure;
  if (plan.process_index == 0) try {
      make_checkpoint_directory(path);
    } catch (const std::exception& e) {
      failure = e.what();
    }
  sync.require_all_ok(failure, "making the checkpoint directory");
  // Every process looks before any writes (the exchange orders it), and all take the largest.
  const int64_t generation = sync.max_over_processes(next_generation(path));
  plan.metadata.generation = generation;
  const std::string file = data_file_name(generation, plan.process_index);
  SaveStats stats;
  try {
    stats.bytes_written = write_data_file(plan, path + "/" + file, file, options.checksum_block_bytes, crash);
    stats.files.push_back(file);
    stats.chunks_written = static_cast<int64_t>(plan.chunks.size());
  } catch (const std::exception& e) {
    failure = e.what();
  }
  // Nobody commits unless every process wrote its file.
  sync.require_all_ok(failure, "writing the checkpoint's data files");
  if (plan.process_index == 0) try {
      commit_save(plan, path, crash);
    } catch (const std::exception& e) {
      failure = e.what();
    }
  sync.require_all_ok(failure, "committing the checkpoint");
  return stats;
}

}  // namespace

SaveStats save(const StateDict& state, const std::string& path, const SaveOptions& options) {
  check_save_options(options);
  SavePlan plan = plan_save(state, /*stage=*/false);
  WorldSync sync;
  return write_plan(std::move(plan), path, options, sync);
}

std::future<SaveStats> async_save(const StateDict& state, const std::string& path,
                                  const SaveOptions& options) {
  check_save_options(options);
  SavePlan plan = plan_save(state, /*stage=*/true);
  if (plan.num_processes > 1)
    throw Error(
        "checkpoint async_save: the world spans processes, whose save must agree over the world's link from "
        "the "
        "caller's thread; use save");
  return std::async(std::launch::async, [plan = std::move(plan), path, options]() mutable {
    WorldSync sync(/*single_process=*/true);
    return write_plan(std::move(plan), path, options, sync);
  });
}

}  // namespace tessera::dcp
