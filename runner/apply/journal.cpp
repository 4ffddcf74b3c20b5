#include "apply/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <utility>

#include "apply/bytes.h"
#include "apply/interrupt.h"
#include "common/errors.h"
#include "common/paths.h"
#include "common/safe_fs.h"
#include "common/strings.h"

namespace pgslow::apply {

namespace fs = std::filesystem;
using nlohmann::json;

std::string to_string(Operation op) {
  return op == Operation::kRun ? "run" : "apply";
}

std::string to_string(JournalState state) {
  switch (state) {
    case JournalState::kChanging:
      return "changing";
    case JournalState::kKept:
      return "kept";
    case JournalState::kRestoring:
      return "restoring";
  }
  return "changing";
}

const OriginalParameter* Journal::find_touched(const std::string& name) const {
  for (const OriginalParameter& p : touched) {
    if (iequals(p.name, name)) return &p;
  }
  return nullptr;
}

OriginalParameter* Journal::find_touched(const std::string& name) {
  return const_cast<OriginalParameter*>(std::as_const(*this).find_touched(name));
}

std::string Journal::settings_summary() const {
  if (hidden) return "a hidden mystery (`pgslow mystery reveal` names it and restores)";
  std::string out;
  for (const JournalSetting& s : settings) {
    if (!out.empty()) out += ", ";
    out += s.name + "=" + s.value;
  }
  return out.empty() ? "(no settings)" : out;
}

std::string utc_now_iso8601() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {

constexpr const char* kFormatName = "pgslow-journal";

json optional_string(const std::optional<std::string>& s) {
  return s ? json(*s) : json(nullptr);
}

std::string octal(unsigned mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode);
  return buf;
}

[[noreturn]] void damaged(const std::string& origin, const std::string& what) {
  throw RuntimeError("the journal " + origin + " is damaged: " + what +
                     ". It holds the original configuration of the server; fix or inspect it "
                     "by hand (docs/journal.md), and delete it only when the server is known to "
                     "be back to its original configuration");
}

Operation parse_operation(const std::string& s, const std::string& origin) {
  if (s == "run") return Operation::kRun;
  if (s == "apply") return Operation::kApply;
  damaged(origin, "unknown operation \"" + s + "\"");
}

JournalState parse_state(const std::string& s, const std::string& origin) {
  if (s == "changing") return JournalState::kChanging;
  if (s == "kept") return JournalState::kKept;
  if (s == "restoring") return JournalState::kRestoring;
  damaged(origin, "unknown state \"" + s + "\"");
}

}  // namespace

namespace {
constexpr const char* kSealedKey = "sealed";
}  // namespace

std::string journal_to_json(const Journal& j) {
  if (j.hidden) {
    Journal open = j;
    open.hidden = false;
    json out;
    out["format"] = kFormatName;
    out["version"] = j.version;
    out["note"] =
        "a workshop mystery: the contents are sealed so that they do not give the answer away";
    out[kSealedKey] = seal(journal_to_json(open));
    return out.dump(2) + "\n";
  }
  json out;
  out["format"] = kFormatName;
  out["version"] = j.version;
  out["created_at"] = j.created_at;
  out["updated_at"] = j.updated_at;
  out["owner"] = {{"pid", j.owner.pid},
                  {"start_time", j.owner.start_time},
                  {"boot_id", j.owner.boot_id},
                  {"command", j.command}};
  out["operation"] = to_string(j.operation);
  out["state"] = to_string(j.state);
  json server = {{"kind", j.server.kind},
                 {"description", j.server.description},
                 {"conninfo", j.server.conninfo},
                 {"target", j.server.target}};
  server["data_dir"] = j.server.data_dir ? json(j.server.data_dir->string()) : json(nullptr);
  out["server"] = server;
  json settings = json::array();
  for (const JournalSetting& s : j.settings)
    settings.push_back({{"name", s.name}, {"value", s.value}});
  out["applied"] = {{"stage", j.stage}, {"presets", j.presets}, {"settings", settings}};

  json original;
  if (j.auto_conf) {
    const OriginalFile& f = *j.auto_conf;
    original["auto_conf"] = {{"path", f.path.string()},
                             {"existed", f.existed},
                             {"sha256", f.sha256},
                             {"size", f.bytes.size()},
                             {"mode", octal(f.mode)},
                             {"uid", f.uid},
                             {"gid", f.gid},
                             {"base64", base64_encode(f.bytes)}};
  } else {
    original["auto_conf"] = nullptr;
  }
  json touched = json::array();
  for (const OriginalParameter& p : j.touched) {
    touched.push_back({{"name", p.name},
                       {"setting", p.setting},
                       {"unit", p.unit},
                       {"source", p.source},
                       {"context", p.context},
                       {"sourcefile", p.sourcefile},
                       {"auto_conf_known", p.auto_conf_known},
                       {"auto_conf_value", optional_string(p.auto_conf_value)},
                       {"pgslow_values", p.pgslow_values}});
  }
  original["touched"] = touched;
  original["pending_restart_before"] = j.pending_restart_before;
  original["settings_before"] = j.settings_before;
  out["original"] = original;
  return out.dump(2) + "\n";
}

Journal journal_from_json(const std::string& text, const std::string& origin) {
  json in;
  try {
    in = json::parse(text);
  } catch (const json::exception& e) {
    damaged(origin, std::string("not valid JSON (") + e.what() + ")");
  }
  if (!in.is_object() || in.value("format", "") != kFormatName)
    damaged(origin, "not a pgslow journal (no \"format\": \"pgslow-journal\")");
  if (in.contains(kSealedKey)) {
    if (!in[kSealedKey].is_string()) damaged(origin, "\"sealed\" is not a string");
    std::string inner;
    try {
      inner = unseal(in[kSealedKey].get<std::string>());
    } catch (const RuntimeError& e) {
      damaged(origin, std::string("the sealed contents cannot be read (") + e.what() + ")");
    }
    Journal j = journal_from_json(inner, origin);
    j.hidden = true;
    return j;
  }
  Journal j;
  try {
    j.version = in.at("version").get<int>();
    if (j.version != Journal::kFormatVersion)
      damaged(origin, "format version " + std::to_string(j.version) + ", this pgslow reads " +
                          std::to_string(Journal::kFormatVersion));
    j.created_at = in.value("created_at", "");
    j.updated_at = in.value("updated_at", "");
    const json& owner = in.at("owner");
    j.owner.pid = owner.at("pid").get<int>();
    j.owner.start_time = owner.value("start_time", std::uint64_t{0});
    j.owner.boot_id = owner.value("boot_id", "");
    j.command = owner.value("command", "");
    j.operation = parse_operation(in.at("operation").get<std::string>(), origin);
    j.state = parse_state(in.at("state").get<std::string>(), origin);

    const json& server = in.at("server");
    j.server.kind = server.at("kind").get<std::string>();
    j.server.description = server.value("description", "");
    j.server.conninfo = server.value("conninfo", "");
    if (server.contains("data_dir") && server.at("data_dir").is_string())
      j.server.data_dir = fs::path(server.at("data_dir").get<std::string>());
    if (server.contains("target"))
      j.server.target = server.at("target").get<std::map<std::string, std::string>>();

    const json& applied = in.at("applied");
    j.stage = applied.value("stage", "");
    j.presets = applied.value("presets", std::vector<std::string>{});
    for (const json& s : applied.at("settings"))
      j.settings.push_back({s.at("name").get<std::string>(), s.at("value").get<std::string>()});

    const json& original = in.at("original");
    if (original.contains("auto_conf") && original.at("auto_conf").is_object()) {
      const json& f = original.at("auto_conf");
      OriginalFile file;
      file.path = f.at("path").get<std::string>();
      file.existed = f.at("existed").get<bool>();
      file.bytes = base64_decode(f.at("base64").get<std::string>());
      file.sha256 = f.at("sha256").get<std::string>();
      file.mode = static_cast<unsigned>(std::stoul(f.at("mode").get<std::string>(), nullptr, 8));
      file.uid = f.at("uid").get<unsigned>();
      file.gid = f.at("gid").get<unsigned>();
      if (sha256_hex(file.bytes) != file.sha256)
        damaged(origin, "the saved postgresql.auto.conf does not match its sha256");
      j.auto_conf = std::move(file);
    }
    for (const json& p : original.at("touched")) {
      OriginalParameter param;
      param.name = p.at("name").get<std::string>();
      param.setting = p.value("setting", "");
      param.unit = p.value("unit", "");
      param.source = p.value("source", "");
      param.context = p.value("context", "");
      param.sourcefile = p.value("sourcefile", "");
      param.auto_conf_known = p.value("auto_conf_known", false);
      if (p.contains("auto_conf_value") && p.at("auto_conf_value").is_string())
        param.auto_conf_value = p.at("auto_conf_value").get<std::string>();
      param.pgslow_values = p.value("pgslow_values", std::vector<std::string>{});
      j.touched.push_back(std::move(param));
    }
    j.pending_restart_before = original.value("pending_restart_before", std::vector<std::string>{});
    j.settings_before = original.value("settings_before", std::map<std::string, std::string>{});
  } catch (const json::exception& e) {
    damaged(origin, std::string("missing or wrong field (") + e.what() + ")");
  } catch (const std::invalid_argument&) {
    damaged(origin, "a number field is not a number");
  }
  const server::TargetKindOps* kind = server::find_target_kind(j.server.kind);
  if (!kind) damaged(origin, "an unknown target kind " + j.server.kind);
  if (!j.auto_conf && !j.server.data_dir && kind->local)
    damaged(origin, "a local server without its original postgresql.auto.conf");
  // The file restore writes is the data directory's, never a path of its own: matching the
  // data directory with the target the user gives then covers the file too.
  if (j.auto_conf &&
      (!j.server.data_dir || j.auto_conf->path != *j.server.data_dir / "postgresql.auto.conf"))
    damaged(origin, "the saved postgresql.auto.conf is not the one of the server's data directory");
  return j;
}

namespace {
// A journal holds one postgresql.auto.conf (1 MiB at most, 1.4 MiB in base64) and a few
// hundred settings; a workdir a claim names is read too, so never whole whatever it holds.
constexpr std::size_t kMaxJournalBytes = std::size_t{16} << 20;
}  // namespace

fs::path journal_path(const fs::path& workdir) {
  return workdir / "journal.json";
}

std::optional<Journal> load_journal(const fs::path& workdir) {
  require_trusted_workdir(workdir);
  fs::path path = journal_path(workdir);
  int fd = open_trusted_file(path, O_RDONLY);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[8192];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw RuntimeError("cannot read the journal " + path.string() + ": " + std::strerror(err));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxJournalBytes) {
      ::close(fd);
      throw RuntimeError("pgslow refuses the journal " + path.string() + ": it is longer than " +
                         std::to_string(kMaxJournalBytes) +
                         " bytes, far more than a journal holds, so it was not read. Move it "
                         "aside and check the server's configuration by hand (docs/journal.md)");
    }
  }
  ::close(fd);
  return journal_from_json(text, path.string());
}

void save_journal(const fs::path& workdir, Journal& journal) {
  require_trusted_workdir(workdir);
  journal.updated_at = utc_now_iso8601();
  if (journal.created_at.empty()) journal.created_at = journal.updated_at;
  write_file_durably(journal_path(workdir), journal_to_json(journal));
}

void remove_journal(const fs::path& workdir) {
  await_armed_crash();  // test-only: a kill meant for the change lands before it is over
  fs::path path = journal_path(workdir);
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return;
    throw RuntimeError("cannot remove the journal " + path.string() + ": " + std::strerror(errno));
  }
  // The removal itself must survive a power loss, or recovery would redo a finished restore
  // (harmless, but it would also forget a later change made by hand).
  int fd = ::open(workdir.empty() ? "." : workdir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace pgslow::apply
