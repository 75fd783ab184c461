#include "api/world_agreement.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "comm/components.hpp"
#include "plugin/registry.hpp"
#include "plugin/transport.hpp"
#include "tessera/errors.hpp"
#include "tessera/sdk/version.h"
#include "tessera/version.hpp"
#include "world/process_link.hpp"

namespace tessera::api {
namespace {

// Every process passes the same number of bytes to the all-gather: the settings as "key=value"
// lines, a value longer than kLongestValue kept as its start and a digest of the whole.
constexpr size_t kAgreementBytes = 2048;
constexpr size_t kLongestValue = 64;

std::string encode(const std::map<std::string, std::string>& settings) {
  std::string text;
  for (const auto& [key, value] : settings) {
    std::string shown = value;
    if (shown.size() > kLongestValue)
      shown = fmt::format("{}...#{:016x}", shown.substr(0, kLongestValue - 20), world::digest(value));
    text += key + "=" + shown + "\n";
  }
  if (text.size() > kAgreementBytes)
    throw Error(
        fmt::format("init_world: the world's settings take {} bytes, more than the {} the processes compare "
                    "(internal error)",
                    text.size(), kAgreementBytes));
  text.resize(kAgreementBytes, '\0');
  return text;
}

std::map<std::string, std::string> decode(const std::string& bytes) {
  std::map<std::string, std::string> settings;
  const std::string text = bytes.substr(0, bytes.find('\0'));
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end - at);
    const size_t equals = line.find('=');
    if (equals != std::string::npos) settings[line.substr(0, equals)] = line.substr(equals + 1);
    at = end == std::string::npos ? text.size() : end + 1;
  }
  return settings;
}

// SDK 1.5's link properties as every process reported them (0: unknown, or no limit).
std::string properties_text(const world::LinkProperties& p) {
  return fmt::format("latency {} s, bandwidth {} B/s, max message {} bytes, device memory {}", p.latency,
                     p.bandwidth, p.max_message_bytes, p.device_memory ? "yes" : "no");
}

// Sent with the settings but not one of them: each process's own index, which must equal its
// place in the all-gather (transport.h: the indices are a permutation of 0 .. count-1).
constexpr const char* kIndexKey = "process index";

// The processes whose reported index is not their place in the all-gather, as text; "" when none.
std::string misplaced_indices(const std::vector<std::map<std::string, std::string>>& each) {
  std::string misplaced;
  for (size_t p = 0; p < each.size(); ++p) {
    const auto found = each[p].find(kIndexKey);
    const std::string reported = found == each[p].end() ? "none" : found->second;
    if (reported != std::to_string(p))
      misplaced += fmt::format("{}process {} of the all-gather reported index {}",
                               misplaced.empty() ? "" : ", ", p, reported);
  }
  return misplaced;
}

}  // namespace

std::map<std::string, std::string> world_settings(const Config& config, const world::ProcessLink& link,
                                                  bool check_collectives) {
  std::string parameters;
  for (const auto& [plugin, values] : config.plugin_parameters)
    for (const auto& [key, value] : values)
      parameters += fmt::format("{}{}.{}={}", parameters.empty() ? "" : ";", plugin, key, value);
  plugin::Registry& registry = plugin::Registry::instance();
  const std::shared_ptr<const plugin::Transport> transport = registry.transport(link.transport_name());
  return {
      {"tessera version", kVersion},
      {"SDK version", fmt::format("{}.{}", TESSERA_SDK_VERSION_MAJOR, TESSERA_SDK_VERSION_MINOR)},
      {"transport", transport == nullptr
                        ? link.transport_name()
                        : fmt::format("{} ({} {})", link.transport_name(), transport->plugin().info().name,
                                      transport->plugin().info().version)},
      {"processes", std::to_string(link.process_count())},
      {"transport properties", properties_text(link.properties())},
      {"ranks_per_process", std::to_string(config.ranks_per_process)},
      {"timeout", fmt::format("{} ms", config.world_timeout_ms)},
      {"check_collectives", check_collectives ? "true" : "false"},
      {"collective rules",
       config.collective_algorithms.empty() ? "(built-in)" : config.collective_algorithms},
      {"collective algorithms", fmt::format("{}", fmt::join(comm::algorithm_names(), ","))},
      {"collective tuner", config.collective_tuner.empty() ? "(none)" : config.collective_tuner},
      {"topology", config.topology.empty() ? "(fully connected)" : config.topology},
      {"default backend", config.default_backend},
      {"plugin parameters", parameters.empty() ? "(none)" : parameters},
  };
}

void require_agreement(world::ProcessLink& link, const std::map<std::string, std::string>& mine) {
  std::map<std::string, std::string> sent = mine;
  sent[kIndexKey] = std::to_string(link.process_index());
  const std::vector<std::string> all =
      link.allgather(encode(sent), "init_world: comparing the processes' settings");
  std::vector<std::map<std::string, std::string>> each;
  for (const std::string& bytes : all) each.push_back(decode(bytes));
  // Two processes claiming one index (or a transport that numbers them otherwise than it gathers)
  // would send each other's messages to the wrong process.
  if (const std::string misplaced = misplaced_indices(each); !misplaced.empty())
    throw Error(fmt::format(
        "init_world: transport '{}' reported process indices that are not a permutation of 0..{} in "
        "process order: {}; each process must report its own index (transport.h: from its "
        "runtime, e.g. MPI_Comm_rank)",
        link.transport_name(), each.size() - 1, misplaced));
  std::string differences;
  for (const auto& [key, value] : mine) {
    bool same = true;
    for (const auto& settings : each)
      same = same && settings.count(key) != 0 && settings.at(key) == each.front().at(key);
    if (same) continue;
    std::string values;
    for (size_t p = 0; p < each.size(); ++p) {
      const auto found = each[p].find(key);
      values += fmt::format("{}process {}: {}", values.empty() ? "" : ", ", p,
                            found == each[p].end() ? "(not reported)" : found->second);
    }
    differences += fmt::format("\n  {}: {}", key, values);
  }
  if (!differences.empty())
    throw Error(
        fmt::format("init_world: the {} processes of this world were started with different settings, which "
                    "must be the same on every process (the configuration file, TESSERA_* variables and "
                    "plugins):{}",
                    each.size(), differences));
}

}  // namespace tessera::api
