#include "comm/algorithm.hpp"

#include <fmt/format.h>

#include "comm/schedule_recorder.hpp"
#include "tessera/errors.hpp"

namespace tessera::comm {

CollectiveAlgorithm::CollectiveAlgorithm(const tessera_collective_algorithm* table,
                                         std::shared_ptr<const plugin::LoadedPlugin> owner)
    : table_(table), owner_(std::move(owner)), name_(table->name) {}

std::string CollectiveAlgorithm::check(const tessera_collective_request& request) const {
  if (!offers(request.collective)) return fmt::format("'{}' does not implement {}", name_, collective_name(request.collective));
  tessera_error error{};
  error.struct_size = sizeof(error);
  if (table_->check(table_->context, &request, &error) == TESSERA_OK) return {};
  error.message[sizeof(error.message) - 1] = '\0';
  return error.message[0] != '\0' ? error.message : "rejected the request without a reason";
}

Schedule CollectiveAlgorithm::build(const tessera_collective_request& request) const {
  ScheduleRecorder recorder(name_, request);
  tessera_error error{};
  error.struct_size = sizeof(error);
  if (table_->build(table_->context, &request, recorder.builder(), &error) != TESSERA_OK) {
    error.message[sizeof(error.message) - 1] = '\0';
    throw Error(fmt::format("algorithm '{}' could not build {} (group size {}, count {}): {}", name_,
                            collective_name(request.collective), request.group_size, request.count, error.message));
  }
  return recorder.take();
}

}  // namespace tessera::comm
