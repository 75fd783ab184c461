#include "comm/algorithm.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <cstddef>

#include "comm/checker.hpp"
#include "comm/schedule_recorder.hpp"
#include "plugin/guarded_call.hpp"
#include "plugin/validation.hpp"
#include "log/log.hpp"
#include "tessera/errors.hpp"

namespace tessera::comm {
namespace {

std::atomic<uint64_t> generation{0};

}  // namespace

uint64_t algorithms_generation() { return generation.load(std::memory_order_acquire); }
void note_algorithms_changed() { generation.fetch_add(1, std::memory_order_acq_rel); }

CollectiveAlgorithm::CollectiveAlgorithm(const tessera_collective_algorithm* table,
                                         std::shared_ptr<const plugin::LoadedPlugin> owner)
    : table_(table), owner_(std::move(owner)), name_(table->name) {
  // Made while its plugin loads, before the registry lists it: a choice cached from here on is
  // stale (see algorithms_generation).
  note_algorithms_changed();
}

bool CollectiveAlgorithm::has_estimate() const {
  // An SDK 1.2 table ends before `estimate`: the field is absent, not NULL.
  return table_->struct_size >= offsetof(tessera_collective_algorithm, estimate) + sizeof(table_->estimate) &&
         table_->estimate != nullptr;
}

std::optional<double> CollectiveAlgorithm::estimate(const tessera_collective_request& request) const {
  if (!has_estimate()) return std::nullopt;
  tessera_error error{};
  error.struct_size = sizeof(error);
  tessera_status status = TESSERA_INTERNAL;
  double seconds = std::nan("");
  const auto call_estimate = [&] { status = table_->estimate(table_->context, &request, &seconds, &error); };
  if (std::string escaped = plugin::exception_escaping("estimate", call_estimate); !escaped.empty()) {
    warn_unusable_estimate(fmt::format("failed to estimate {}: {}", describe_request(request), escaped));
    return std::nullopt;
  }
  if (status != TESSERA_OK) {
    observe::logger().debug("{} declined to estimate {} (status {}: {}); costing its schedule instead",
                            origin(), describe_request(request), static_cast<int>(status),
                            plugin::error_text(error));
    return std::nullopt;
  }
  if (!std::isfinite(seconds) || seconds < 0) {
    warn_unusable_estimate(
        fmt::format("estimated {} at {} seconds; an estimate must be a finite number of "
                    "seconds >= 0",
                    describe_request(request), seconds));
    return std::nullopt;
  }
  return seconds;
}

void CollectiveAlgorithm::warn_unusable_estimate(const std::string& problem) const {
  // Every request after the first would say the same of the same plugin: once is enough to find it.
  if (estimate_warned_.exchange(true, std::memory_order_relaxed)) {
    observe::logger().debug("{} {}; costing its schedule with the host's model instead", origin(), problem);
    return;
  }
  observe::logger().warn(
      "{} {}; the host costs its schedule with its own model instead (\"auto\" goes on; this "
      "warning is given once per algorithm)",
      origin(), problem);
}

std::string CollectiveAlgorithm::origin() const {
  return fmt::format("collective algorithm '{}' of plugin '{}' ({})", name_, owner_->info().name,
                     owner_->info().file.string());
}

std::string CollectiveAlgorithm::check(const tessera_collective_request& request) const {
  if (!offers(request.collective))
    return fmt::format("'{}' does not implement {}", name_, collective_name(request.collective));
  tessera_error error{};
  error.struct_size = sizeof(error);
  tessera_status status = TESSERA_INTERNAL;
  const auto call_check = [&] { status = table_->check(table_->context, &request, &error); };
  if (std::string escaped = plugin::exception_escaping("check", call_check); !escaped.empty())
    throw Error(fmt::format("{} failed for {}: {}", origin(), describe_request(request), escaped));
  if (status == TESSERA_OK) return {};
  error.message[sizeof(error.message) - 1] = '\0';
  return error.message[0] != '\0' ? error.message : "rejected the request without a reason";
}

Schedule CollectiveAlgorithm::build(const tessera_collective_request& request, bool keep_empty_steps) const {
  if (std::string problem = request_problem(request); !problem.empty())
    throw Error(fmt::format("{} cannot be asked for {}: {}", origin(), describe_request(request), problem));
  ScheduleRecorder recorder(name_, request, keep_empty_steps);
  tessera_error error{};
  error.struct_size = sizeof(error);
  tessera_status status = TESSERA_INTERNAL;
  const auto call_build = [&] {
    status = table_->build(table_->context, &request, recorder.builder(), &error);
  };
  if (std::string escaped = plugin::exception_escaping("build", call_build); !escaped.empty())
    throw Error(fmt::format("{} could not build {}: {}", origin(), describe_request(request), escaped));
  if (status != TESSERA_OK)
    throw Error(fmt::format("{} could not build {}: status {}: {}", origin(), describe_request(request),
                            plugin::status_text(status), plugin::error_text(error)));
  std::string problem = recorder.problem();
  Schedule schedule = recorder.take();
  // A plugin's schedule is trusted only once the checker has run it symbolically.
  if (problem.empty()) problem = verify(schedule);
  if (!problem.empty())
    throw Error(
        fmt::format("{} built a wrong schedule for {}: {}", origin(), describe_request(request), problem));
  return schedule;
}

}  // namespace tessera::comm
