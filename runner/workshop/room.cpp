#include "workshop/room.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "common/errors.h"
#include "common/strings.h"
#include "results/summary.h"
#include "workshop/room_http.h"

namespace pgslow::workshop {

RoomResult room_result(const std::string& name, const report::Reveal& reveal,
                       const results::Run& run) {
  RoomResult r;
  r.name = name;
  r.lesson = reveal.lesson;
  r.stage = reveal.stage;
  r.reference = reveal.reference_stage;
  r.ratio = reveal.effect.ratio;
  if (reveal.effect.interval.known) {
    r.low = reveal.effect.interval.low;
    r.high = reveal.effect.interval.high;
  }
  r.text = report::describe_effect(reveal.effect);
  r.transactions = reveal.effect.transactions;
  r.machine = results::describe_machine(run.machine);
  r.envelope = run.envelope;
  return r;
}

namespace {

// The dashboard's answer, or what went wrong, as the messages below print it.
struct Answer {
  std::optional<RoomAnswer> answer;
  std::string problem;
};

Answer ask(const std::string& url, const std::string& method, const std::string& path,
           const std::vector<std::pair<std::string, std::string>>& headers = {},
           const std::string& body = "", const std::string& content_type = "text/plain") {
  try {
    return Answer{room_exchange(url, method, path, headers, body, content_type), ""};
  } catch (const RuntimeError& e) {
    return Answer{std::nullopt, e.what()};
  }
}

bool ok(const Answer& a) {
  return a.answer && a.answer->status == 200;
}

std::string answer(const Answer& a) {
  if (!a.answer) return a.problem;
  return fmt::format("{} {}", a.answer->status, printable(trim(a.answer->body)));
}

}  // namespace

void check_room(const std::string& url) {
  if (!url.starts_with("http://")) {
    throw InputError(
        fmt::format("--room {}: the dashboard's address is http://HOST:PORT, as the instructor's "
                    "dashboard prints it",
                    printable(url)));
  }
  const Answer state = ask(url, "GET", "/state");
  if (!ok(state)) {
    throw InputError(fmt::format(
        "--room {}: no dashboard answers there ({}); check the address with the instructor",
        printable(url), answer(state)));
  }
}

void send_to_room(const std::string& url, const RoomResult& result) {
  auto fail = [&](const std::string& what) {
    throw RuntimeError(fmt::format("--room {}: {}", printable(url), what));
  };
  if (!url.starts_with("http://"))
    fail("the dashboard's address is http://HOST:PORT, as the instructor's dashboard prints it");
  const Answer joined = ask(url, "POST", "/join");
  if (!ok(joined)) fail("could not join the room: " + answer(joined));
  const auto token = nlohmann::json::parse(joined.answer->body, nullptr, false);
  if (!token.is_object() || !token.contains("token") || !token["token"].is_string())
    fail("the room answered /join without a token");
  const Answer posted =
      ask(url, "POST", "/result", {{"X-Pgslow-Token", token["token"].get<std::string>()}},
          room_result_body(result), "application/json");
  if (!ok(posted)) fail("the room refused the result: " + answer(posted));
}

}  // namespace pgslow::workshop
