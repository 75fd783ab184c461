#include "plugin/parameter_schema.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <set>

namespace tessera {
namespace {

using Type = ParameterInfo::Type;

bool parse_integer(const std::string& text, int64_t& value) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  errno = 0;
  char* end = nullptr;
  const long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || end != text.c_str() + text.size()) return false;
  value = parsed;
  return true;
}

bool parse_real(const std::string& text, double& value) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  errno = 0;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return errno != ERANGE && end == text.c_str() + text.size() && std::isfinite(value);
}

std::string range_text(bool has_min, bool has_max, const std::string& min, const std::string& max) {
  if (has_min && has_max) return fmt::format("{} .. {}", min, max);
  if (has_min) return ">= " + min;
  if (has_max) return "<= " + max;
  return "";
}

}  // namespace

std::string ParameterInfo::type_name() const {
  switch (type) {
    case Type::integer:
      return "integer";
    case Type::real:
      return "real";
    case Type::boolean:
      return "boolean";
    case Type::text:
      return "text";
    case Type::choice:
      return "choice";
  }
  return "unknown";
}

std::string ParameterInfo::allowed() const {
  switch (type) {
    case Type::integer: {
      const std::string range = range_text(integer_min != std::numeric_limits<int64_t>::min(),
                                           integer_max != std::numeric_limits<int64_t>::max(),
                                           std::to_string(integer_min), std::to_string(integer_max));
      return range.empty() ? "any integer" : range;
    }
    case Type::real: {
      const std::string range = range_text(std::isfinite(real_min), std::isfinite(real_max),
                                           fmt::format("{}", real_min), fmt::format("{}", real_max));
      return range.empty() ? "any finite number" : range;
    }
    case Type::boolean:
      return "true or false";
    case Type::text:
      return "any text";
    case Type::choice:
      return fmt::format("one of: {}", fmt::join(choices, ", "));
  }
  return "";
}

std::string ParameterInfo::check(const std::string& value) const {
  const auto expected = [&](const std::string& what) {
    return fmt::format("must be {}, got '{}'", what, value);
  };
  switch (type) {
    case Type::integer: {
      int64_t parsed = 0;
      if (!parse_integer(value, parsed) || parsed < integer_min || parsed > integer_max) {
        const std::string range = allowed();
        return expected(range == "any integer" ? "an integer" : "an integer " + range);
      }
      return {};
    }
    case Type::real: {
      double parsed = 0;
      if (!parse_real(value, parsed) || parsed < real_min || parsed > real_max) {
        const std::string range = allowed();
        return expected(range == "any finite number" ? "a finite number" : "a finite number " + range);
      }
      return {};
    }
    case Type::boolean:
      return value == "true" || value == "false" || value == "1" || value == "0"
                 ? ""
                 : expected("true, false, 1 or 0");
    case Type::text:
      return {};
    case Type::choice:
      for (const std::string& choice : choices)
        if (choice == value) return {};
      return expected(allowed());
  }
  return {};
}

namespace plugin {

bool has_parameter_schema(const tessera_plugin_info& info) {
  return info.struct_size >= offsetof(tessera_plugin_info, parameters) + sizeof(info.parameters);
}

namespace {

bool valid_name(const char* name) {
  if (name == nullptr || name[0] == '\0') return false;
  for (const char* c = name; *c != '\0'; ++c)
    if (!std::isalnum(static_cast<unsigned char>(*c)) && *c != '_') return false;
  return true;
}

// One declaration into `out`, or the reason it is invalid (without the parameter's position).
std::string read_one(const tessera_parameter& declared, ParameterInfo& out) {
  if (declared.struct_size < offsetof(tessera_parameter, choices) + sizeof(declared.choices))
    return fmt::format("tessera_parameter is {} bytes, the host needs {} (SDK 1.5)", declared.struct_size,
                       offsetof(tessera_parameter, choices) + sizeof(declared.choices));
  if (!valid_name(declared.name)) return "its name is missing or not made of letters, digits and '_'";
  out.name = declared.name;
  switch (declared.type) {
    case TESSERA_PARAMETER_INTEGER:
      out.type = Type::integer;
      break;
    case TESSERA_PARAMETER_REAL:
      out.type = Type::real;
      break;
    case TESSERA_PARAMETER_BOOLEAN:
      out.type = Type::boolean;
      break;
    case TESSERA_PARAMETER_TEXT:
      out.type = Type::text;
      break;
    case TESSERA_PARAMETER_CHOICE:
      out.type = Type::choice;
      break;
    default:
      return fmt::format(
          "its type {} is none of TESSERA_PARAMETER_INTEGER (1), REAL, BOOLEAN, TEXT, CHOICE (5)",
          declared.type);
  }
  if (declared.help == nullptr || declared.help[0] == '\0') return "it has no help text";
  out.help = declared.help;
  out.integer_min = declared.integer_min;
  out.integer_max = declared.integer_max;
  out.real_min = declared.real_min;
  out.real_max = declared.real_max;
  if (out.type == Type::integer && out.integer_min > out.integer_max)
    return fmt::format("its range is empty: integer_min {} > integer_max {}", out.integer_min,
                       out.integer_max);
  if (out.type == Type::real && !(out.real_min <= out.real_max))  // a NaN bound fails too
    return fmt::format("its range is empty or not a range: real_min {} and real_max {}", out.real_min,
                       out.real_max);
  if (out.type == Type::choice) {
    if (declared.num_choices == 0 || declared.choices == nullptr) return "it is a choice without choices";
    if (declared.num_choices > TESSERA_PARAMETERS_MAX)
      return fmt::format("it lists {} choices, more than {}", declared.num_choices, TESSERA_PARAMETERS_MAX);
    std::set<std::string> seen;
    for (size_t i = 0; i < declared.num_choices; ++i) {
      if (declared.choices[i] == nullptr) return fmt::format("its choice #{} is NULL", i);
      if (!seen.insert(declared.choices[i]).second)
        return fmt::format("it lists choice '{}' twice", declared.choices[i]);
      out.choices.emplace_back(declared.choices[i]);
    }
  }
  if (declared.default_value == nullptr) return "it has no default value";
  out.default_value = declared.default_value;
  if (std::string problem = out.check(out.default_value); !problem.empty())
    return "its default is not valid for its own declaration: it " + problem;
  return {};
}

}  // namespace

std::string read_parameter_schema(const tessera_plugin_info& info, std::vector<ParameterInfo>& out) {
  out.clear();
  if (!has_parameter_schema(info) || info.num_parameters == 0) return {};
  if (info.num_parameters > TESSERA_PARAMETERS_MAX)
    return fmt::format("it declares {} parameters, more than TESSERA_PARAMETERS_MAX ({})",
                       info.num_parameters, TESSERA_PARAMETERS_MAX);
  if (info.parameters == nullptr)
    return fmt::format("it declares {} parameters but the parameters pointer is NULL", info.num_parameters);
  if (info.set_parameter == nullptr)
    return fmt::format("it declares {} parameters but has no set_parameter to receive them",
                       info.num_parameters);
  for (size_t i = 0; i < info.num_parameters; ++i) {
    const tessera_parameter* declared = info.parameters[i];
    ParameterInfo parameter;
    std::string problem = declared == nullptr ? "it is NULL" : read_one(*declared, parameter);
    if (problem.empty() && find_parameter(out, parameter.name) != nullptr)
      problem = "its name is declared twice";
    if (!problem.empty())
      return fmt::format("parameter #{}{} is invalid: {}", i,
                         parameter.name.empty() ? "" : fmt::format(" ('{}')", parameter.name), problem);
    out.push_back(std::move(parameter));
  }
  return {};
}

const ParameterInfo* find_parameter(const std::vector<ParameterInfo>& schema, const std::string& key) {
  for (const ParameterInfo& parameter : schema)
    if (parameter.name == key) return &parameter;
  return nullptr;
}

std::string parameter_names(const std::vector<ParameterInfo>& schema) {
  std::string names;
  for (const ParameterInfo& parameter : schema) names += (names.empty() ? "" : ", ") + parameter.name;
  return names;
}

}  // namespace plugin
}  // namespace tessera
