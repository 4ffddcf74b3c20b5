#include "workshop/room.h"

#include <fmt/format.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/strings.h"
#include "results/summary.h"

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

bool http_url(const std::string& url) {
  return url.starts_with("http://") || url.starts_with("https://");
}

httplib::Client room_client(const std::string& url) {
  httplib::Client client(url);
  client.set_connection_timeout(5);
  client.set_read_timeout(10);
  client.set_write_timeout(10);
  return client;
}

std::string answer(const httplib::Result& res) {
  if (!res) return fmt::format("no answer ({})", httplib::to_string(res.error()));
  return fmt::format("{} {}", res->status, printable(trim(res->body)));
}

}  // namespace

void check_room(const std::string& url) {
  if (!http_url(url)) {
    throw InputError(
        fmt::format("--room {}: the dashboard's address is http://HOST:PORT, as the instructor's "
                    "dashboard prints it",
                    printable(url)));
  }
  httplib::Client client = room_client(url);
  const httplib::Result state = client.Get("/state");
  if (!state || state->status != 200) {
    throw InputError(fmt::format(
        "--room {}: no dashboard answers there ({}); check the address with the instructor",
        printable(url), answer(state)));
  }
}

void send_to_room(const std::string& url, const RoomResult& result) {
  auto fail = [&](const std::string& what) {
    throw RuntimeError(fmt::format("--room {}: {}", printable(url), what));
  };
  if (!http_url(url))
    fail("the dashboard's address is http://HOST:PORT, as the instructor's dashboard prints it");
  httplib::Client client = room_client(url);
  const httplib::Result joined = client.Post("/join", "", "text/plain");
  if (!joined || joined->status != 200) fail("could not join the room: " + answer(joined));
  const auto token = nlohmann::json::parse(joined->body, nullptr, false);
  if (!token.is_object() || !token.contains("token") || !token["token"].is_string())
    fail("the room answered /join without a token");
  const httplib::Headers headers = {{"X-Pgslow-Token", token["token"].get<std::string>()}};
  const httplib::Result posted =
      client.Post("/result", headers, room_result_body(result), "application/json");
  if (!posted || posted->status != 200) fail("the room refused the result: " + answer(posted));
}

}  // namespace pgslow::workshop
