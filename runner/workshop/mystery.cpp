#include "workshop/mystery.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "apply/bytes.h"
#include "apply/journal.h"
#include "common/errors.h"
#include "common/paths.h"
#include "common/strings.h"
#include "report/json.h"
#include "report/registry.h"
#include "report/workshop.h"
#include "results/stats.h"

namespace pgslow::workshop {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct Culprit {
  std::string label;
  std::string preset;                                         // a preset's settings, or
  std::vector<std::pair<std::string, std::string>> settings;  // these
  std::vector<std::string> key;
};

// Difficulty 1 and 2: a whole preset. Each was checked to show its symptom within seconds on a
// small tpcb-like data set (docs/workshop.md, "Mystery mode").
const std::vector<Culprit>& preset_culprits() {
  static const std::vector<Culprit> k = {
      {"the tiny-cache preset", "tiny-cache", {}, {"shared_buffers"}},
      {"the planner-sabotage preset",
       "planner-sabotage",
       {},
       {"random_page_cost", "cpu_index_tuple_cost"}},
      {"the index-ban preset", "index-ban", {}, {"enable_indexscan", "enable_bitmapscan"}},
      {"the wal-hell preset", "wal-hell", {}, {"commit_delay"}},
      {"the checkpoint-storm preset", "checkpoint-storm", {}, {"max_wal_size"}},
  };
  return k;
}

// Difficulty 3: two of these at once (never the cache with the planner: the published run's
// sequential scans of big tables failed with a 2MB cache).
const std::vector<Culprit>& single_culprits() {
  static const std::vector<Culprit> k = {
      {"a 2MB buffer cache", "", {{"shared_buffers", "2MB"}}, {"shared_buffers"}},
      {"a 10 ms commit delay",
       "",
       {{"commit_delay", "10000"}, {"commit_siblings", "0"}},
       {"commit_delay"}},
      {"a 32MB WAL budget",
       "",
       {{"max_wal_size", "32MB"}, {"min_wal_size", "32MB"}},
       {"max_wal_size"}},
      {"index scans switched off",
       "",
       {{"enable_indexscan", "off"}, {"enable_bitmapscan", "off"}},
       {"enable_indexscan", "enable_bitmapscan"}},
      {"index access priced at 1e300",
       "",
       {{"random_page_cost", "1e300"}, {"cpu_index_tuple_cost", "1e300"}},
       {"random_page_cost", "cpu_index_tuple_cost"}},
  };
  return k;
}

// Harmless for a short tpcb-like run: they differ from the defaults and change nothing the
// clues show.
const std::vector<std::pair<std::string, std::string>>& decoys() {
  static const std::vector<std::pair<std::string, std::string>> k = {
      {"default_statistics_target", "150"},  {"track_functions", "all"},
      {"log_min_duration_statement", "10s"}, {"vacuum_cost_limit", "400"},
      {"effective_cache_size", "2GB"},       {"hash_mem_multiplier", "3"},
      {"maintenance_work_mem", "256MB"},     {"temp_buffers", "16MB"},
      {"autovacuum_naptime", "2min"},        {"track_io_timing", "on"},
  };
  return k;
}

std::vector<knobs::Setting> settings_of(const Culprit& c, const knobs::Catalog& catalog) {
  std::vector<knobs::Setting> out;
  if (!c.preset.empty()) {
    if (const knobs::Preset* p = catalog.find_preset(c.preset)) out = catalog.expand(*p);
  }
  for (const auto& [n, v] : c.settings) out.push_back({n, v, {}});
  return out;
}

bool known(const Culprit& c, const knobs::Catalog& catalog) {
  if (!c.preset.empty() && catalog.find_preset(c.preset) == nullptr) return false;
  return std::all_of(c.key.begin(), c.key.end(),
                     [&](const std::string& k) { return catalog.find(k) != nullptr; });
}

bool names(const std::vector<knobs::Setting>& settings, const std::string& name) {
  return std::any_of(settings.begin(), settings.end(),
                     [&](const knobs::Setting& s) { return iequals(s.name, name); });
}

json settings_json(const std::vector<knobs::Setting>& settings) {
  json a = json::array();
  for (const auto& s : settings) a.push_back({{"name", s.name}, {"value", s.value}});
  return a;
}

std::vector<knobs::Setting> settings_from(const json& a) {
  std::vector<knobs::Setting> out;
  for (const auto& s : a)
    out.push_back({s.at("name").get<std::string>(), s.at("value").get<std::string>(), {}});
  return out;
}

bool word_char(char c, bool hyphen) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || (hyphen && c == '-');
}

// Replaces whole-word, case-insensitive occurrences of `term`.
void replace_word(std::string& text, const std::string& term, const std::string& with) {
  if (term.empty()) return;
  const bool hyphen = term.find('-') != std::string::npos;
  const std::string lower_term = to_lower(term);
  std::string lower = to_lower(text);
  std::size_t pos = 0;
  while ((pos = lower.find(lower_term, pos)) != std::string::npos) {
    const std::size_t end = pos + term.size();
    const bool starts = pos == 0 || !word_char(text[pos - 1], hyphen);
    const bool ends = end >= text.size() || !word_char(text[end], hyphen);
    if (starts && ends) {
      text.replace(pos, term.size(), with);
      lower.replace(pos, term.size(), with);
      pos += with.size();
    } else {
      pos = end;
    }
  }
}

// Server log lines a DBA reads first; settings changes, start and stop lines are left out
// (they would name the answer and say nothing about the symptom).
bool clue_line(const std::string& line) {
  static const std::vector<std::string> kNoise = {"parameter \"",
                                                  "received SIGHUP",
                                                  "configuration file",
                                                  "database system",
                                                  "listening on",
                                                  "starting PostgreSQL",
                                                  "shutting down",
                                                  "shut down",
                                                  "ready to accept",
                                                  "redirecting log",
                                                  "checkpoint starting: shutdown",
                                                  "background worker",
                                                  "aborting any active"};
  for (const auto& n : kNoise) {
    if (line.find(n) != std::string::npos) return false;
  }
  return !trim(line).empty();
}

}  // namespace

MysteryAnswer choose_mystery(int difficulty, std::uint64_t seed, const knobs::Catalog& catalog) {
  if (difficulty < 1 || difficulty > 3)
    throw InputError(fmt::format("--difficulty {}: choose 1, 2 or 3", difficulty));
  std::mt19937_64 rng(seed);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  MysteryAnswer a;
  if (difficulty <= 2) {
    std::vector<Culprit> pool;
    for (const auto& c : preset_culprits()) {
      if (known(c, catalog)) pool.push_back(c);
    }
    if (pool.empty()) throw RuntimeError("the knob catalog has none of the mystery presets");
    const Culprit& c = pool[pick(pool.size())];
    a.label = c.label;
    a.culprits = settings_of(c, catalog);
    a.key = c.key;
  } else {
    std::vector<Culprit> pool;
    for (const auto& c : single_culprits()) {
      if (known(c, catalog)) pool.push_back(c);
    }
    const std::size_t first = pick(pool.size());
    std::size_t second = pick(pool.size() - 1);
    if (second >= first) ++second;
    auto is = [&](std::size_t i, const std::string& k) { return pool[i].key.front() == k; };
    if ((is(first, "shared_buffers") && is(second, "random_page_cost")) ||
        (is(first, "random_page_cost") && is(second, "shared_buffers"))) {
      second = (second + 1) % pool.size();
      if (second == first) second = (second + 1) % pool.size();
    }
    for (std::size_t i : {first, second}) {
      a.label += (a.label.empty() ? "" : " and ") + pool[i].label;
      for (const auto& s : settings_of(pool[i], catalog)) a.culprits.push_back(s);
      for (const auto& k : pool[i].key) a.key.push_back(k);
    }
  }
  const std::size_t n_decoys = difficulty == 1 ? 0 : difficulty == 2 ? 2 : 3;
  std::vector<std::pair<std::string, std::string>> pool;
  for (const auto& d : decoys()) {
    if (catalog.find(d.first) != nullptr && !names(a.culprits, d.first)) pool.push_back(d);
  }
  for (std::size_t i = 0; i < n_decoys && !pool.empty(); ++i) {
    const std::size_t k = pick(pool.size());
    a.decoys.push_back({pool[k].first, pool[k].second, {}});
    pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(k));
  }
  return a;
}

fs::path mystery_path(const fs::path& workdir) {
  return workdir / "mystery.json";
}

void save_mystery(const fs::path& workdir, const MysteryState& s) {
  json inner = {{"difficulty", s.difficulty},
                {"seed", s.seed},
                {"started_at", s.started_at},
                {"guesses", s.guesses},
                {"solved", s.solved},
                {"answer",
                 {{"label", s.answer.label},
                  {"culprits", settings_json(s.answer.culprits)},
                  {"key", s.answer.key},
                  {"decoys", settings_json(s.answer.decoys)}}},
                {"measured", report::to_json(s.measured)}};
  json fixes = json::array();
  for (const report::FixResult& f : s.fixes)
    fixes.push_back(json::parse(report::fix_to_json(f).dump()));
  inner["fixes"] = std::move(fixes);
  json out = {{"format", "pgslow-mystery"},
              {"note", "the answer is sealed: `pgslow mystery reveal` names it"},
              {"sealed", apply::seal(inner.dump())}};
  write_file_durably(mystery_path(workdir), out.dump(2) + "\n");
}

std::optional<MysteryState> load_mystery(const fs::path& workdir) {
  const fs::path path = mystery_path(workdir);
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  try {
    json in =
        json::parse(apply::unseal(json::parse(read_file(path)).at("sealed").get<std::string>()));
    MysteryState s;
    s.difficulty = in.at("difficulty").get<int>();
    s.seed = in.at("seed").get<std::uint64_t>();
    s.started_at = in.at("started_at").get<std::string>();
    s.guesses = in.at("guesses").get<int>();
    s.solved = in.at("solved").get<bool>();
    const json& a = in.at("answer");
    s.answer.label = a.at("label").get<std::string>();
    s.answer.culprits = settings_from(a.at("culprits"));
    s.answer.key = a.at("key").get<std::vector<std::string>>();
    s.answer.decoys = settings_from(a.at("decoys"));
    s.measured = report::read_json(in.at("measured").get<std::string>(), path.string());
    if (auto f = in.find("fixes"); f != in.end()) {  // a mystery started before fixes had none
      for (const json& fix : *f) {
        s.fixes.push_back(
            report::fix_from_json(nlohmann::ordered_json::parse(fix.dump()), path.string()));
      }
    }
    return s;
  } catch (const std::exception& e) {
    throw RuntimeError(
        fmt::format("the mystery file {} is damaged ({}); `pgslow restore` puts the "
                    "configuration back, then delete the file",
                    path.string(), e.what()));
  }
}

void remove_mystery(const fs::path& workdir) {
  std::error_code ec;
  fs::remove(mystery_path(workdir), ec);
}

std::string redact(const std::string& text, const knobs::Catalog& catalog,
                   const MysteryAnswer& answer) {
  std::vector<std::string> knob_names = catalog.knob_names();
  for (const auto& s : answer.culprits) knob_names.push_back(s.name);
  for (const auto& s : answer.decoys) knob_names.push_back(s.name);
  std::sort(knob_names.begin(), knob_names.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  std::string out = text;
  replace_word(out, answer.label, "[hidden]");
  for (const auto& p : catalog.presets()) {
    if (p.name != "default") replace_word(out, p.name, "[hidden]");  // names no change
  }
  for (const auto& k : knob_names) replace_word(out, k, "[a setting]");
  return out;
}

report::MysteryClues mystery_clues(const MysteryState& s) {
  const auto& stages = s.measured.stages;
  if (stages.size() < 2) throw RuntimeError("the mystery has no measurement to give clues from");
  const results::StageResult& before = stages.front();
  const results::StageResult& now = stages.back();
  report::MysteryClues c;
  c.difficulty = s.difficulty;
  c.effect = report::measure_effect(now, before);
  c.before = report::latency_check(before);
  c.now = report::latency_check(now);
  c.evidence = report::evidence_rows(now, before, {});
  // Where the backends' time went: at difficulty 3 the player samples pg_stat_activity alone.
  if (s.difficulty <= 2) c.waits = report::wait_rows(now, before, 3, "");
  std::vector<std::string> lines;
  bool after_reset_checkpoint = false;
  for (const std::string& l : split(now.log_excerpt, '\n')) {
    // The data reset's own checkpoints (CREATE DATABASE ... STRATEGY FILE_COPY) are pgslow's,
    // not the symptom's: "checkpoint starting: immediate force wait" and the line after it.
    if (l.find("checkpoint starting: immediate") != std::string::npos) {
      after_reset_checkpoint = true;
      continue;
    }
    if (after_reset_checkpoint && l.find("checkpoint complete") != std::string::npos) {
      after_reset_checkpoint = false;
      continue;
    }
    if (clue_line(l)) lines.push_back(l);
  }
  c.log_lines_total = lines.size();
  const std::size_t first = lines.size() > 12 ? lines.size() - 12 : 0;
  c.log_lines.assign(lines.begin() + static_cast<std::ptrdiff_t>(first), lines.end());
  c.decoys = !s.answer.decoys.empty();
  return c;
}

std::string clues_text(const MysteryState& state, const knobs::Catalog& catalog,
                       std::string_view format) {
  return redact(report::rendered(mystery_clues(state), format), catalog, state.answer);
}

namespace {

std::string guess_text(const GuessScore& g, std::size_t keys) {
  const std::size_t names = g.named_culprits + g.named_others;
  const std::string tally = fmt::format(
      "{} of your {} name{} {} part of the cause; {} of the {} knob{} that must be named {} named",
      g.named_culprits, names, names == 1 ? "" : "s", g.named_culprits == 1 ? "is" : "are",
      g.named_keys, keys, keys == 1 ? "" : "s", g.named_keys == 1 ? "is" : "are");
  if (g.solved) {
    return fmt::format("SOLVED: that is the cause ({}).", tally);
  }
  if (g.recall >= 1) {
    return fmt::format(
        "TOO BROAD: {}, but every wrong name costs: a guess solves it only when at least {:.0f}% "
        "of its names are right. Name fewer knobs.",
        tally, kSolvedPrecision * 100);
  }
  if (g.named_culprits > 0) {
    return fmt::format("CLOSE: {}. Not all of the cause is named yet.", tally);
  }
  return "NOT IT: none of the knobs you named is part of the cause. Back to the evidence.";
}

}  // namespace

GuessScore score_guess(const MysteryAnswer& answer, const std::vector<std::string>& guess) {
  GuessScore g;
  std::set<std::string> named;
  for (const auto& k : guess) named.insert(to_lower(k));
  for (const auto& k : named) {
    if (names(answer.culprits, k)) {
      ++g.named_culprits;
    } else {
      ++g.named_others;
    }
  }
  std::set<std::string> keys;
  for (const auto& k : answer.key) keys.insert(to_lower(k));
  for (const auto& k : keys) g.named_keys += named.count(k);
  g.precision = named.empty() ? 0 : static_cast<double>(g.named_culprits) / named.size();
  g.recall = keys.empty() ? 0 : static_cast<double>(g.named_keys) / keys.size();
  g.solved = g.recall >= 1 && g.precision >= kSolvedPrecision - 1e-9;
  g.text = guess_text(g, keys.size());
  return g;
}

report::MysteryReveal mystery_reveal(const MysteryState& s) {
  report::MysteryReveal r;
  r.answer = s.answer.label;
  for (const auto& c : s.answer.culprits) {
    const bool key = std::any_of(s.answer.key.begin(), s.answer.key.end(),
                                 [&](const std::string& k) { return iequals(k, c.name); });
    r.culprits.push_back({c.name, c.value, key});
  }
  for (const auto& d : s.answer.decoys) r.decoys.push_back({d.name, d.value, false});
  if (s.measured.stages.size() >= 2) {
    r.effect = report::measure_effect(s.measured.stages.back(), s.measured.stages.front());
    report::add_axes_in_run(r.effect, s.measured, s.measured.stages.back());
  }
  r.guesses = s.guesses;
  r.solved = s.solved;
  return r;
}

namespace {

// A change did nothing when the fix is not measurably faster with it, or when its whole
// interval recovers less than a tenth of the loss: single runs of a few seconds drift by more
// than their own intervals say, and a tenth is what a room can tell apart.
constexpr double kNegligibleShare = 0.10;
bool negligible(const report::Effect& with_it, const report::Recovered& share) {
  return with_it.verdict != results::Verdict::kFaster ||
         (share.known && share.high < kNegligibleShare);
}

}  // namespace

report::FixResult score_fix(const std::vector<knobs::Setting>& changes,
                            const results::StageResult& healthy, const results::StageResult& broken,
                            const results::StageResult& fix,
                            const std::vector<results::StageResult>& without) {
  report::FixResult r;
  r.ran = true;
  r.fault = report::measure_effect(healthy, broken);
  r.vs_broken = report::measure_effect(fix, broken);
  r.vs_healthy = report::measure_effect(fix, healthy);
  r.recovered = report::recovered_share(r.vs_broken, r.fault);
  for (std::size_t i = 0; i < changes.size(); ++i) {
    report::FixChange c;
    c.knob = changes[i].name;
    c.value = changes[i].value;
    if (changes.size() > 1 && i < without.size()) {
      c.without = report::measure_effect(fix, without[i]);
      c.share = report::recovered_share(c.without, r.fault);
      c.did_nothing = negligible(c.without, c.share);
    } else {
      c.share = r.recovered;
      c.did_nothing = negligible(r.vs_broken, c.share);
    }
    r.changes.push_back(std::move(c));
  }
  return r;
}

ScreenedFix screen_fix(const std::vector<knobs::Setting>& proposed,
                       const std::vector<knobs::Setting>& broken, const knobs::Catalog& catalog,
                       const knobs::ServerSettings& live, bool restarts_planned) {
  ScreenedFix out;
  const auto verdicts = knobs::validate(knobs::overlay(broken, proposed), catalog, live);
  for (const knobs::Setting& p : proposed) {
    auto v = std::find_if(verdicts.begin(), verdicts.end(), [&](const knobs::SettingVerdict& x) {
      return iequals(x.setting.name, p.name);
    });
    const std::string change = p.name + "=" + p.value;
    if (v == verdicts.end() || v->verdict == knobs::Verdict::kError ||
        v->verdict == knobs::Verdict::kSkipped) {
      out.refused.push_back(
          fmt::format("{}: the server refuses it ({})", change,
                      v == verdicts.end() ? "not validated" : printable(v->reason)));
    } else if (v->verdict == knobs::Verdict::kRestart && !restarts_planned) {
      out.refused.push_back(fmt::format(
          "{}: needs a server restart the room did not plan for (--allow-restart runs it)",
          change));
    } else {
      out.accepted.push_back(p);
    }
  }
  return out;
}

scenario::Scenario mystery_scenario(const MysteryAnswer& answer) {
  scenario::Scenario s;
  s.name = "mystery";
  s.description = "a hidden degradation";
  s.workload.name = "tpcb-like";
  s.workload.scale = 2;
  s.workload.clients = 4;
  s.measure.warmup_s = 3;
  s.measure.duration_s = 15;
  s.measure.repeats = 1;
  s.mode = scenario::Mode::kCumulative;
  scenario::StageSpec stage;
  stage.name = "mystery";
  for (const auto& c : answer.culprits) stage.settings.push_back(c);
  for (const auto& d : answer.decoys) stage.settings.push_back(d);
  s.stages.push_back(std::move(stage));
  return s;
}

}  // namespace pgslow::workshop
