#include "checkpoint/pending_save.hpp"

#include <utility>

#include "world/world.hpp"

namespace tessera::dcp {
namespace {

constexpr const char* kPendingKey = "checkpoint.pending_save";

}  // namespace

PendingSave::PendingSave(SavePlan plan, std::string path, SaveOptions options, bool shared)
    : plan_(std::move(plan)), path_(std::move(path)), options_(options), shared_(shared) {
  writer_ = std::async(std::launch::async, [this] { shared_ ? write_shared() : write_alone(); });
}

PendingSave::~PendingSave() {
  if (writer_.valid()) writer_.wait();
}

void PendingSave::write_alone() {
  try {
    WorldSync sync = WorldSync::alone();
    agree_on_generation(plan_, path_, sync);
    const WrittenFile written = write_own_file(plan_, path_, options_, crash_);
    commit_everywhere(plan_, path_, written, sync, crash_);
    promise_.set_value(written.stats);
  } catch (...) {
    promise_.set_exception(std::current_exception());
  }
}

void PendingSave::write_shared() { written_ = write_own_file(plan_, path_, options_, crash_); }

void PendingSave::finish(const World& world) {
  std::lock_guard lock(finish_mutex_);
  if (finished_) return;
  finished_ = true;
  writer_.wait();
  if (!shared_) return;  // the writer committed and set the result
  try {
    WorldSync sync(world);
    commit_everywhere(plan_, path_, written_, sync, crash_);
    promise_.set_value(written_.stats);
  } catch (...) {
    promise_.set_exception(std::current_exception());
  }
}

void finish_pending_save(const World& world) {
  const std::shared_ptr<void> kept = world.state()->keep(kPendingKey, nullptr);
  if (kept) static_cast<PendingSave*>(kept.get())->finish(world);
}

void keep_pending_save(const World& world, std::shared_ptr<PendingSave> pending) {
  world.state()->keep(kPendingKey, std::move(pending));
}

void finish_save(const World& world, const std::shared_ptr<PendingSave>& pending) {
  world::WorldState& state = *world.state();
  if (state.kept(kPendingKey) == pending) state.keep(kPendingKey, nullptr);
  pending->finish(world);
}

}  // namespace tessera::dcp
