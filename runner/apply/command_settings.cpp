#include "apply/command_settings.h"

#include "common/strings.h"

namespace pgslow::apply {

namespace {

std::string file_now(const std::map<std::string, std::string>* files_now, const std::string& name) {
  if (files_now == nullptr) return {};
  auto it = files_now->find(to_lower(name));
  return it == files_now->end() ? std::string() : it->second;
}

// The original as the command should set it. A value from a configuration file the command
// does not write (postgresql.conf when pgslow's value lives in the command's include file) is
// the file's again once the command removes its entry; so is the built-in default. Only an
// original that lived in the command's own file is set again (in the server's base unit, which
// every configuration file reads the same way).
std::optional<std::string> original_value(const OriginalParameter& p,
                                          const std::map<std::string, std::string>* files_now) {
  if (p.source != "configuration file") return std::nullopt;
  const std::string now = file_now(files_now, p.name);
  if (!now.empty() && !p.sourcefile.empty() && now != p.sourcefile) return std::nullopt;
  return p.setting;
}

bool needs_restart(const OriginalParameter& p, const knobs::ServerSettings* running) {
  if (p.context != "postmaster") return false;
  const knobs::ServerSetting* now = running ? running->find(p.name) : nullptr;
  return now == nullptr || now->setting != p.setting;
}

// Whether the parameter is back at its original already, from its original file.
bool is_original(const OriginalParameter& p, const knobs::ServerSettings& running,
                 const std::map<std::string, std::string>& files_now) {
  const knobs::ServerSetting* now = running.find(p.name);
  return now && now->setting == p.setting && now->source == p.source &&
         file_now(&files_now, p.name) == p.sourcefile;
}

}  // namespace

std::map<std::string, std::string> source_files(pg::Connection& conn) {
  std::map<std::string, std::string> out;
  pg::Result r =
      conn.exec("SELECT lower(name), coalesce(sourcefile, '') FROM pg_catalog.pg_settings");
  for (int i = 0; i < r.rows(); ++i) out[std::string(r.get(i, 0))] = std::string(r.get(i, 1));
  return out;
}

server::ParameterChange stage_parameters(
    const Journal& journal,
    const std::vector<std::pair<const knobs::ServerSetting*, const knobs::SettingVerdict*>>& knobs,
    const knobs::ServerSettings& current, const std::map<std::string, std::string>& files_now) {
  server::ParameterChange change;
  for (const OriginalParameter& p : journal.touched) {
    bool in_stage = false;
    for (const auto& [before, verdict] : knobs)
      in_stage = in_stage || to_lower(before->name) == to_lower(p.name);
    if (in_stage || is_original(p, current, files_now)) continue;
    change.settings[p.name] = original_value(p, &files_now);
    change.restart_needed = change.restart_needed || needs_restart(p, &current);
  }
  for (const auto& [before, verdict] : knobs) {
    change.settings[before->name] = verdict->setting.value;
    if (verdict->verdict == knobs::Verdict::kRestart &&
        !knobs::effective_value_matches(*before, *verdict))
      change.restart_needed = true;
  }
  return change;
}

server::ParameterChange original_parameters(const Journal& journal,
                                            const knobs::ServerSettings* running,
                                            const std::map<std::string, std::string>* files_now) {
  server::ParameterChange change;
  change.restore = true;
  change.restart_needed = running == nullptr;
  for (const OriginalParameter& p : journal.touched) {
    if (running && files_now && is_original(p, *running, *files_now)) continue;
    change.settings[p.name] = original_value(p, files_now);
    change.restart_needed = change.restart_needed || needs_restart(p, running);
  }
  return change;
}

}  // namespace pgslow::apply
