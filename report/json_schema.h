#pragma once
// Writing and reading a struct as JSON from one list of its fields, so a new field is one line
// and both directions agree by construction. A struct takes part by specialising Fields<S>
// (report/json_fields.h) with a tuple of field(...) entries, or custom(...) entries for the
// few keys that are not one member.

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace pgslow::report {

// A report.json that cannot be read: the message names the source, the field path
// ("stages[2].repeats[0].tps") and what was expected.
class ReadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace json_schema {

using Json = nlohmann::ordered_json;

template <typename S>
struct Fields;  // specialised per struct: static constexpr auto list = std::tuple{...};

// One member, written under `name`; `written` (when set) decides whether it appears at all
// (figures that only some runs measure, so reports of others carry no zero).
template <typename S, typename T>
struct Field {
  const char* name;
  T S::*member;
  bool (*written)(const S&) = nullptr;
};

template <typename S, typename T>
constexpr Field<S, T> field(const char* name, T S::*member,
                            std::type_identity_t<bool (*)(const S&)> written = nullptr) {
  return {name, member, written};
}

// Where a value sits in the document, for errors.
struct Place {
  const std::string& source;
  std::string path;

  Place at(const char* name) const {
    return {source, path.empty() ? std::string(name) : path + "." + name};
  }
  Place at(const std::string& name) const { return at(name.c_str()); }
  Place at(std::size_t i) const { return {source, fmt::format("{}[{}]", path, i)}; }
  [[noreturn]] void fail(const char* expected) const {
    throw ReadError(
        fmt::format("{}: {}: expected {}", source, path.empty() ? "(top level)" : path, expected));
  }
};

// Keys that are not one member (a constant, a pair of keys from one member).
template <typename S>
struct Custom {
  void (*write)(const S&, Json& object);
  void (*read)(S&, const Json& object, const Place& place);
};

template <typename S>
constexpr Custom<S> custom(void (*write)(const S&, Json&),
                           void (*read)(S&, const Json&, const Place&)) {
  return {write, read};
}

// The read side of a key written for readers only (derived from other keys, or a result pgslow
// never reads back): custom<S>(write_it, written_only<S>).
template <typename S>
void written_only(S&, const Json&, const Place&) {}

template <typename T>
concept HasFields = requires {
  Fields<T>::list;
};

template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};
template <typename T>
struct IsMap : std::false_type {};
template <typename T>
struct IsMap<std::map<std::string, T>> : std::true_type {};
template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};

template <typename S>
Json write(const S& s);
template <typename S>
void read(S& s, const Json& j, const Place& place);

// Non-finite numbers have no JSON form: written as null, read back as absent (NaN in a series).
inline Json number(double v) {
  return std::isfinite(v) ? Json(v) : Json(nullptr);
}

template <typename T>
Json write_value(const T& v) {
  if constexpr (HasFields<T>) {
    return write(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    return number(v);
  } else if constexpr (IsOptional<T>::value) {
    return v ? write_value(*v) : Json(nullptr);
  } else if constexpr (IsVector<T>::value) {
    Json out = Json::array();
    for (const auto& e : v) out.push_back(write_value(e));
    return out;
  } else if constexpr (IsMap<T>::value) {
    Json out = Json::object();
    for (const auto& [k, e] : v) {
      // A figure not measured has no entry rather than a null.
      if constexpr (std::is_floating_point_v<typename T::mapped_type>) {
        if (!std::isfinite(e)) continue;
      }
      out[k] = write_value(e);
    }
    return out;
  } else {
    return Json(v);
  }
}

// `j` is not null (a null leaves the default, except in a series of numbers: NaN).
template <typename T>
void read_value(T& out, const Json& j, const Place& place) {
  if constexpr (HasFields<T>) {
    read(out, j, place);
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) place.fail("true or false");
    out = j.get<bool>();
  } else if constexpr (std::is_arithmetic_v<T>) {
    if (!j.is_number()) place.fail("a number");
    if constexpr (std::is_unsigned_v<T>) {
      if (j.is_number_integer() && j.get<std::int64_t>() < 0) place.fail("a count >= 0");
    }
    if constexpr (std::is_integral_v<T>) {
      if (!j.is_number_integer()) place.fail("a whole number");
    }
    out = j.get<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!j.is_string()) place.fail("a string");
    out = j.get<std::string>();
  } else if constexpr (IsOptional<T>::value) {
    typename T::value_type v{};
    read_value(v, j, place);
    out = std::move(v);
  } else if constexpr (IsVector<T>::value) {
    if (!j.is_array()) place.fail("an array");
    out.clear();
    for (std::size_t i = 0; i < j.size(); ++i) {
      typename T::value_type v{};
      if (j[i].is_null()) {
        if constexpr (std::is_floating_point_v<typename T::value_type>) v = NAN;
      } else {
        read_value(v, j[i], place.at(i));
      }
      out.push_back(std::move(v));
    }
  } else if constexpr (IsMap<T>::value) {
    if (!j.is_object()) place.fail("an object");
    out.clear();
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.value().is_null()) continue;
      typename T::mapped_type v{};
      read_value(v, it.value(), place.at(it.key()));
      if constexpr (std::is_floating_point_v<typename T::mapped_type>) {
        if (!std::isfinite(v)) continue;
      }
      out[it.key()] = std::move(v);
    }
  } else {
    static_assert(sizeof(T) == 0, "no JSON form for this type: give it Fields<T>");
  }
}

// The key `name` of the object `j` into `out`, when it is there and not null (else `out` keeps
// its default and the result is false).
template <typename T>
bool read_field(T& out, const Json& j, const char* name, const Place& place) {
  const auto it = j.find(name);
  if (it == j.end() || it->is_null()) return false;
  read_value(out, *it, place.at(name));
  return true;
}

template <typename S>
Json write(const S& s) {
  Json out = Json::object();
  std::apply(
      [&](const auto&... entry) {
        (
            [&](const auto& e) {
              if constexpr (requires { e.member; }) {
                if (e.written == nullptr || e.written(s)) out[e.name] = write_value(s.*(e.member));
              } else {
                e.write(s, out);
              }
            }(entry),
            ...);
      },
      Fields<S>::list);
  return out;
}

// Missing and null fields keep their defaults (a report from an older pgslow of the same
// schema).
template <typename S>
void read(S& s, const Json& j, const Place& place) {
  if (!j.is_object()) place.fail("an object");
  std::apply(
      [&](const auto&... entry) {
        (
            [&](const auto& e) {
              if constexpr (requires { e.member; }) {
                read_field(s.*(e.member), j, e.name, place);
              } else {
                e.read(s, j, place);
              }
            }(entry),
            ...);
      },
      Fields<S>::list);
}

}  // namespace json_schema
}  // namespace pgslow::report
