#pragma once
// The laptop's side of `lesson --room URL`: one HTTP/1.1 exchange with the instructor's
// dashboard, every byte of the answer counted. The room's address may lead anywhere, and the
// participant's pgslow often runs as root: an answer that never ends (a body, a header line, or
// headers without end, which cpp-httplib's client reads whole) must not fill its memory.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace pgslow::workshop {

// The most of a dashboard's answer pgslow reads, status line and headers included: a full
// room's /state is tens of KB.
inline constexpr std::size_t kMaxRoomAnswer = std::size_t{4} << 20;

struct RoomAnswer {
  int status = 0;
  std::string body;
};

// Sends `method` `path` to `url` ("http://HOST[:PORT]") and reads its answer: at most
// kMaxRoomAnswer bytes, within 5 s to connect, 10 s for each read and 30 s in all. Throws
// RuntimeError saying what went wrong (no answer, too long, not HTTP), without the URL.
RoomAnswer room_exchange(const std::string& url, const std::string& method, const std::string& path,
                         const std::vector<std::pair<std::string, std::string>>& headers = {},
                         const std::string& body = "",
                         const std::string& content_type = "text/plain");

}  // namespace pgslow::workshop
