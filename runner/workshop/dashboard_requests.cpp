#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/clock.h"
#include "common/errors.h"
#include "common/format.h"
#include "common/strings.h"
#include "evidence/evidence.h"
#include "evidence/wait_sampler.h"
#include "pg/connection.h"
#include "results/stats.h"
#include "results/waits.h"
#include "workshop/dashboard_server.h"
#include "workshop/dashboard_state.h"

// What the room asks of the dashboard: the door every request passes, the page and /state,
// /join, /predict and a laptop's /result, and the room's results as JSON.

namespace pgslow::workshop {

namespace {

HttpResponse refuse(int status, const std::string& why) {
  HttpResponse res;
  res.status = status;
  res.body = why + "\n";
  return res;
}

// The header of a browser's token (a custom header: a page elsewhere cannot send it without
// asking first, and the dashboard answers no such question).
constexpr const char* kTokenHeader = "x-pgslow-token";

}  // namespace

std::string room_result_body(const RoomResult& r) {
  return json{{"name", r.name},           {"lesson", r.lesson},    {"stage", r.stage},
              {"reference", r.reference}, {"ratio", r.ratio},      {"low", r.low},
              {"high", r.high},           {"text", r.text},        {"transactions", r.transactions},
              {"machine", r.machine},     {"envelope", r.envelope}}
      .dump();
}

std::optional<RoomResult> read_room_result(const std::string& body, std::size_t max_field,
                                           std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<RoomResult> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return fail("a result is a JSON object");
  RoomResult r;
  const std::map<std::string, std::string*> texts = {
      {"name", &r.name},           {"lesson", &r.lesson}, {"stage", &r.stage},
      {"reference", &r.reference}, {"text", &r.text},     {"machine", &r.machine},
      {"envelope", &r.envelope}};
  const std::map<std::string, double*> numbers = {
      {"ratio", &r.ratio}, {"low", &r.low}, {"high", &r.high}};
  for (const auto& [key, value] : j.items()) {
    if (auto t = texts.find(key); t != texts.end()) {
      if (!value.is_string()) return fail(fmt::format("\"{}\" must be text", key));
      std::optional<std::string> clean = room_text(value.get<std::string>(), max_field);
      if (!clean) return fail(fmt::format("\"{}\" must be UTF-8 text", key));
      *t->second = *clean;
    } else if (auto n = numbers.find(key); n != numbers.end()) {
      if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0)
        return fail(fmt::format("\"{}\" must be a number of at least 0", key));
      *n->second = value.get<double>();
    } else if (key == "transactions") {
      if (!value.is_number_unsigned()) return fail("\"transactions\" must be a count");
      r.transactions = value.get<std::uint64_t>();
    } else {
      return fail(
          fmt::format("\"{}\" is not part of a result (a laptop sends its effect, "
                      "its machine and its envelope only)",
                      room_text(key, 40).value_or("?")));
    }
  }
  if (r.name.empty() || r.lesson.empty()) return fail("a result needs a name and a lesson");
  if (!(r.ratio > 0)) return fail("\"ratio\" must be above 0");
  if (r.low > 0 && !(r.low <= r.ratio && r.ratio <= r.high))
    return fail("the interval must hold the ratio (low <= ratio <= high)");
  return r;
}

bool room_intervals_overlap(const std::vector<RoomResult>& results, const std::string& lesson) {
  double highest_low = 0;
  double lowest_high = std::numeric_limits<double>::infinity();
  for (const RoomResult& r : results) {
    if (r.lesson != lesson || !(r.low > 0)) continue;
    highest_low = std::max(highest_low, r.low);
    lowest_high = std::min(lowest_high, r.high);
  }
  return highest_low <= lowest_high;
}

// The door: every request passes it before its handler, and before its body is read.
std::optional<HttpResponse> Dashboard::Impl::door(const HttpRequest& req) {
  const bool post = req.method != "GET" && req.method != "HEAD";
  const std::string host_header = req.header("host");
  if (loopback && !is_loopback_host(host_header))
    return refuse(403, "this dashboard answers only to 127.0.0.1 and localhost");
  if (!(post ? *writes : *reads).allow(req.remote_addr, now_us())) {
    HttpResponse r = refuse(429, "too many requests from your address: slow down");
    r.headers["Retry-After"] = "1";
    return r;
  }
  if (!post) return std::nullopt;
  if (auto why = foreign_origin(req.header("origin"), req.header("sec-fetch-site"), host_header))
    return refuse(403, *why);
  return std::nullopt;
}

HttpResponse Dashboard::Impl::serve_state() const {
  HttpResponse res;
  res.content_type = "application/json";
  std::lock_guard lock(mu);
  // The shared snapshot is sent as it is: no copy, no lock while the bytes go out.
  res.shared_body = current();
  return res;
}

HttpResponse Dashboard::Impl::join(const HttpRequest& req) {
  std::lock_guard lock(mu);
  if (tokens.size() >= limits.max_tokens)
    return refuse(503, "too many browsers joined this dashboard");
  std::size_t& joined = joins[req.remote_addr];
  if (joined >= limits.joins_per_address()) {
    return refuse(429, fmt::format("{} browsers joined from your address already: that is "
                                   "this address's share of the room (the instructor's "
                                   "--room-per-address)",
                                   joined));
  }
  ++joined;
  const std::string token = new_browser_token();
  tokens.emplace(token, req.remote_addr);
  HttpResponse res;
  res.content_type = "application/json";
  res.body = json{{"token", token}}.dump();
  return res;
}

HttpResponse Dashboard::Impl::predict(const HttpRequest& req) {
  std::string why;
  const std::optional<std::string> name = room_name(req.param("name"), limits.max_field, &why);
  const std::optional<std::string> answer = room_text(req.param("answer"), limits.max_field);
  if (!name) return refuse(400, why);
  if (!answer) return refuse(400, "the prediction must be UTF-8 text");
  const std::string token = req.header(kTokenHeader);
  std::lock_guard lock(mu);
  if (!predictions_open) return refuse(409, "predictions are closed");
  if (name->empty() || answer->empty()) return refuse(400, "a name and a prediction, please");
  const auto joined = tokens.find(token);
  if (joined == tokens.end()) return refuse(401, "this browser has not joined: reload the page");
  return place(room, owners, *joined, RoomPrediction{*name, *answer}, "predictions");
}

// A laptop's result (`lesson --room`): the sender must have joined, like a browser, and
// send nothing but a result, under a name no other token holds.
HttpResponse Dashboard::Impl::result(const HttpRequest& req) {
  std::string why;
  std::optional<RoomResult> r = read_room_result(req.body, limits.max_field, &why);
  if (!r) return refuse(400, why);
  const std::optional<std::string> name = room_name(r->name, limits.max_field, &why);
  if (!name) return refuse(400, why);
  if (name->empty()) return refuse(400, "a result needs a name");
  r->name = *name;
  const std::string token = req.header(kTokenHeader);
  std::lock_guard lock(mu);
  const auto joined = tokens.find(token);
  if (joined == tokens.end()) return refuse(401, "this laptop has not joined: POST /join first");
  return place(laptops, laptop_owners, *joined, std::move(*r), "results");
}

// `item` as the entry of `owner` (its token and the address it joined from) in `items` (the
// caller holds mu). Its own entry is replaced; a name another token holds (compared by
// room_name_key) is refused; a new entry needs a place in the room and in its address's share.
template <typename T>
HttpResponse Dashboard::Impl::place(std::vector<T>& items, std::vector<std::string>& item_owners,
                                    const std::pair<const std::string, std::string>& owner, T item,
                                    const char* what) {
  const auto& [token, address] = owner;
  const std::string key = room_name_key(item.name);
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (item_owners[i] != token && room_name_key(items[i].name) == key) {
      return refuse(409, fmt::format("the name \"{}\" is taken by another browser (names "
                                     "that look alike are one name): choose another",
                                     item.name));
    }
  }
  HttpResponse res;
  const auto own = std::find(item_owners.begin(), item_owners.end(), token);
  if (own != item_owners.end()) {
    items[static_cast<std::size_t>(own - item_owners.begin())] = std::move(item);
    res.body = "updated";
  } else if (items.size() >= limits.room_size) {
    return refuse(409, fmt::format("the room is full ({} {})", limits.room_size, what));
  } else {
    const std::size_t from_address = static_cast<std::size_t>(
        std::count_if(item_owners.begin(), item_owners.end(), [&](const std::string& t) {
          const auto it = tokens.find(t);
          return it != tokens.end() && it->second == address;
        }));
    if (from_address >= limits.per_address) {
      return refuse(429, fmt::format("your address holds {} of the room's {} already, its "
                                     "share (the instructor's --room-per-address {})",
                                     from_address, what, limits.per_address));
    }
    items.push_back(std::move(item));
    item_owners.push_back(token);
    res.body = "thanks";
  }
  dirty = true;
  return res;
}

HttpResponse Dashboard::Impl::handle(const HttpRequest& req) {
  const bool read = req.method == "GET" || req.method == "HEAD";
  if (req.path == "/" || req.path == "/state") {
    if (!read) return refuse(405, "GET only");
    if (req.path == "/state") return serve_state();
    HttpResponse res;
    res.content_type = "text/html; charset=utf-8";
    res.shared_body = page;
    return res;
  }
  if (req.path == "/join" || req.path == "/predict" || req.path == "/result") {
    if (req.method != "POST") return refuse(405, "POST only");
    if (req.path == "/join") return join(req);
    return req.path == "/predict" ? predict(req) : result(req);
  }
  return refuse(404, "no such page");
}

}  // namespace pgslow::workshop
