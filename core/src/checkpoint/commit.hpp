// The checkpoint directory's life cycle: the generation a new save takes, the data file names it
// uses, the metadata's atomic replacement (the commit point) and the removal of what the metadata
// no longer names.
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint/crash_points.hpp"
#include "checkpoint/metadata.hpp"

namespace tessera::dcp {

inline constexpr const char* kMetadataFile = ".metadata";

// "__<generation>_<process>.distcp": new names for every save, so that a save never writes a file
// the committed metadata names.
std::string data_file_name(int64_t generation, int process);
// One more than the committed metadata's generation; when there is none (or it cannot be read),
// one more than any generation in the data file names present. The processes of a save each
// compute it before any of them writes, and take the largest.
int64_t next_generation(const std::string& dir);
// Writes the metadata under a temporary name, fsyncs it, renames it to `.metadata`, fsyncs the
// directory.
void commit_metadata(const std::string& dir, const Metadata& metadata, CrashPoints& crash);
// Removes data files and temporary metadata that `metadata` does not name (left by the previous
// checkpoint, or by a save that was killed).
void remove_unnamed_files(const std::string& dir, const Metadata& metadata, CrashPoints& crash);

}  // namespace tessera::dcp
