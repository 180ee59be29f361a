#include "mcp/schema.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace agentty::mcp {

namespace {

using json = nlohmann::json;

bool has_type(const json& value, const std::string& type) {
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_boolean();
  if (type == "null") return value.is_null();
  if (type == "integer") {
    // 1e19 is an integer too (then out of bounds, which says what to give);
    // a cast to long long of a double past its range is undefined.
    if (value.is_number_integer()) return true;
    if (!value.is_number_float()) return false;
    const double number = value.get<double>();
    return std::isfinite(number) && std::trunc(number) == number;
  }
  if (type == "number") return value.is_number();
  return false;
}

std::string describe(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

}  // namespace

std::string name_for_message(const std::string& name) {
  const bool plain =
      !name.empty() && name.size() <= 60 &&
      std::none_of(name.begin(), name.end(), [](unsigned char c) { return c < 0x20 || c >= 0x7f; });
  return plain ? name : describe(json(name));
}

namespace {

std::string name_of(const std::string& path) {
  return path.empty() ? "arguments" : path;
}

std::optional<std::string> check_type(const json& schema, const json& value,
                                      const std::string& path) {
  auto type = schema.find("type");
  if (type == schema.end()) return std::nullopt;
  std::vector<std::string> types;
  if (type->is_array()) {
    for (const auto& t : *type) types.push_back(t.get<std::string>());
  } else {
    types.push_back(type->get<std::string>());
  }
  for (const auto& t : types)
    if (has_type(value, t)) return std::nullopt;
  std::string wanted;
  for (const auto& t : types) wanted += (wanted.empty() ? "" : " or ") + t;
  return name_of(path) + ": must be " +
         (wanted == "integer" || wanted == "array" || wanted == "object" ? "an " : "a ") + wanted +
         " (got " + describe(value) + ")";
}

// The argument's own description after the problem: what the value means
// (since_seq's "1 = from the start", a key with no name: its bytes in input)
// is what a caller needs to pick an allowed one.
std::string with_description(const json& schema, std::string problem) {
  if (auto description = schema.find("description"); description != schema.end())
    problem += ". " + description->get<std::string>();
  return problem;
}

std::optional<std::string> check_enum(const json& schema, const json& value,
                                      const std::string& path) {
  auto values = schema.find("enum");
  if (values == schema.end()) return std::nullopt;
  for (const auto& allowed : *values)
    if (allowed == value) return std::nullopt;
  std::string list;
  for (const auto& allowed : *values) list += (list.empty() ? "" : ", ") + allowed.dump();
  return with_description(schema, name_of(path) + ": " + describe(value) +
                                      " is not one of the allowed values: " + list);
}

std::optional<std::string> check_bounds(const json& schema, const json& value,
                                        const std::string& path) {
  if (value.is_number()) {
    if (auto m = schema.find("minimum");
        m != schema.end() && value.get<double>() < m->get<double>())
      return with_description(schema, name_of(path) + ": must be at least " + m->dump() + " (got " +
                                          value.dump() + ")");
    if (auto m = schema.find("maximum");
        m != schema.end() && value.get<double>() > m->get<double>())
      return with_description(
          schema, name_of(path) + ": must be at most " + m->dump() + " (got " + value.dump() + ")");
  }
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    // Arguments, paths, variables and names cannot hold one: the OS would
    // silently cut the string there. Only raw data (stdin, typed input) may.
    if (text.find('\0') != std::string::npos && !schema.contains("contentMediaType"))
      return name_of(path) +
             ": contains a NUL byte (\\u0000), which cannot be passed on (it would " +
             "cut the text there); remove it" +
             (path == "pattern" ? " (write \\x00 to match a NUL byte)" : "") + ".";
    auto length = text.size();
    if (auto m = schema.find("minLength"); m != schema.end() && length < m->get<std::size_t>())
      return name_of(path) + (m->get<int>() == 1
                                  ? ": must not be empty"
                                  : ": must be at least " + m->dump() + " characters");
    if (auto m = schema.find("maxLength"); m != schema.end() && length > m->get<std::size_t>())
      return name_of(path) + ": must be at most " + m->dump() + " bytes (got " +
             std::to_string(length) + ")";
  }
  if (value.is_array()) {
    if (auto m = schema.find("minItems"); m != schema.end() && value.size() < m->get<std::size_t>())
      return name_of(path) + ": must have at least " + m->dump() + " item(s)";
    if (auto m = schema.find("maxItems"); m != schema.end() && value.size() > m->get<std::size_t>())
      return name_of(path) + ": must have at most " + m->dump() + " items";
    if (schema.value("uniqueItems", false)) {
      std::set<std::string> seen;
      for (const auto& item : value)
        if (!seen.insert(item.dump()).second)
          return name_of(path) + ": " + describe(item) + " is listed twice";
    }
  }
  return std::nullopt;
}

// A wrong type or an empty value says what to give: the property's own
// description (e.g. execution_id given as the numeric process_id, an empty
// side_effects list). Bounds already name the fix; enums add their own.
std::string with_description(std::string problem, const json& property, const std::string& path) {
  auto description = property.find("description");
  if (description == property.end()) return problem;
  for (const char* kind :
       {": must be a ", ": must be an ", ": must have at least ", ": must not be empty"}) {
    if (problem.rfind(path + kind, 0) == 0) return problem + ". " + description->get<std::string>();
  }
  return problem;
}

// An argument the tool does not take, named with the accepted ones: checked
// before what is missing, since a misnamed argument (action for op) is most
// often why a required one is missing.
std::optional<std::string> check_unknown(const json& schema, const json& value,
                                         const json& properties, const std::string& path) {
  auto additional = schema.find("additionalProperties");
  if (additional == schema.end() || !additional->is_boolean() || additional->get<bool>())
    return std::nullopt;
  for (const auto& [key, item] : value.items()) {
    if (properties.contains(key)) continue;
    std::string known;
    for (const auto& [k, _] : properties.items()) known += (known.empty() ? "" : ", ") + k;
    return (path.empty() ? name_for_message(key) : path + "." + name_for_message(key)) +
           ": unknown argument; the accepted ones are: " + known;
  }
  return std::nullopt;
}

std::optional<std::string> check_object(const json& schema, const json& value,
                                        const std::string& path) {
  if (!value.is_object()) return std::nullopt;
  const json empty = json::object();
  const json& properties = schema.contains("properties") ? schema["properties"] : empty;
  if (auto problem = check_unknown(schema, value, properties, path)) return problem;
  if (auto required = schema.find("required"); required != schema.end()) {
    for (const auto& name : *required) {
      if (!value.contains(name.get<std::string>())) {
        std::string full =
            path.empty() ? name.get<std::string>() : path + "." + name.get<std::string>();
        // The property's own description says what to give (e.g. ["NONE"]).
        auto property = properties.find(name.get<std::string>());
        if (property != properties.end() && property->contains("description"))
          return full + ": is required. " + (*property)["description"].get<std::string>();
        return full + ": is required";
      }
    }
  }
  auto additional = schema.find("additionalProperties");
  for (const auto& [key, item] : value.items()) {
    std::string full = path.empty() ? key : path + "." + key;
    if (auto p = properties.find(key); p != properties.end()) {
      if (auto problem = validate(*p, item, full)) return with_description(*problem, *p, full);
    } else if (additional != schema.end() && additional->is_object()) {
      if (auto problem = validate(*additional, item, full)) return problem;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> validate(const json& schema, const json& value,
                                    const std::string& path) {
  if (auto problem = check_type(schema, value, path)) return problem;
  if (auto problem = check_enum(schema, value, path)) return problem;
  if (auto problem = check_bounds(schema, value, path)) return problem;
  if (value.is_array() && schema.contains("items")) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (auto problem = validate(schema["items"], value[i], path + "[" + std::to_string(i) + "]"))
        return problem;
    }
  }
  return check_object(schema, value, path);
}

}  // namespace agentty::mcp
