#pragma once
// A room of laptops (docs/workshop.md, "A room of laptops"): each participant's pgslow sends
// its lesson's measured result to the instructor's dashboard (`pgslow lesson NAME --room URL`),
// which shows the room's results side by side.

#include <string>

#include "report/workshop.h"
#include "results/model.h"
#include "workshop/dashboard.h"
#include "workshop/room_http.h"

namespace pgslow::workshop {

// What a laptop sends: the reveal's effect, the machine and the envelope of the run. Nothing
// else: no conninfo, no paths, no settings beyond the stage's knobs (named by the stage).
RoomResult room_result(const std::string& name, const report::Reveal& reveal,
                       const results::Run& run);

// Every answer of the dashboard is read at most kMaxRoomAnswer bytes (workshop/room_http.h).

// Before a lesson measures anything: `url` is an http:// address and a dashboard answers
// there (GET /state). Throws InputError naming the URL and what went wrong.
void check_room(const std::string& url);

// Joins the dashboard at `url` ("http://HOST:PORT") and posts the result with the token it was
// given. Throws RuntimeError naming the URL and what the dashboard answered.
void send_to_room(const std::string& url, const RoomResult& result);

}  // namespace pgslow::workshop
