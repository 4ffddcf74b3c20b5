#include "workshop/lesson.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/errors.h"
#include "common/paths.h"
#include "common/printable.h"
#include "common/safe_fs.h"
#include "common/strings.h"
#include "common/yaml.h"
#include "knobs/evidence_keys.h"
#include "scenario/library.h"

namespace pgslow::workshop {

namespace fs = std::filesystem;

namespace {

fs::path lessons_dir() {
  return data_root() / "scenarios" / "workshop" / "lessons";
}

void parse_predict(yaml::Reader& r, const YAML::Node& node, Lesson& lesson) {
  if (!node.IsDefined() || !r.is_sequence(node, "predict")) return;
  for (const YAML::Node& item : node) {
    yaml::Fields f = r.fields(item, "a predict question", {"id", "ask", "choices", "answer"});
    PredictQuestion q;
    q.where = r.where(item);
    q.id = r.string(f.get("id"), "id", true, item).value_or("");
    q.ask = r.string(f.get("ask"), "ask", true, item).value_or("");
    if (f.has("choices")) {
      q.choices = r.string_list(f.get("choices"), "choices").value_or(std::vector<std::string>{});
      if (q.choices.size() < 2) r.error(f.get("choices"), "choices: give at least two");
    }
    if (auto a = r.string(f.get("answer"), "answer")) {
      if (q.choices.empty()) {
        r.error(f.get("answer"), "answer: only a question with choices has a right answer",
                "an effect question is scored against the measurement");
      } else {
        auto it = std::find_if(q.choices.begin(), q.choices.end(),
                               [&](const std::string& c) { return iequals(c, *a); });
        if (it == q.choices.end()) {
          r.error(f.get("answer"),
                  fmt::format("answer \"{}\" is not one of the choices", yaml::printable(*a)),
                  "write it exactly as in choices");
        } else {
          q.answer = static_cast<std::size_t>(it - q.choices.begin());
        }
      }
    }
    for (const PredictQuestion& other : lesson.predict) {
      if (!q.id.empty() && other.id == q.id)
        r.error(f.get("id"), fmt::format("id \"{}\" is used twice", q.id));
    }
    lesson.predict.push_back(std::move(q));
  }
}

void parse_cliff(yaml::Reader& r, const YAML::Node& node, const std::string& file, Lesson& lesson) {
  yaml::Fields f =
      r.fields(node, "cliff",
               {"knob", "from", "to", "resolution", "settings", "workload", "measure", "server"});
  CliffLesson c;
  experiment::CliffExperiment& e = c.search;
  e.duration_s = 4;
  c.where = r.where(node);
  e.options.knob = to_lower(r.string(f.get("knob"), "cliff.knob", true, node).value_or(""));
  e.options.from = r.string(f.get("from"), "cliff.from", true, node).value_or("");
  e.options.to = r.string(f.get("to"), "cliff.to", true, node).value_or("");
  if (auto v = r.number(f.get("resolution"), "cliff.resolution")) {
    if (!(*v > 1))
      r.error(f.get("resolution"), "cliff.resolution must be above 1", "e.g. 2 or 1.25");
    e.options.search.resolution = *v;
  }
  if (f.has("settings")) {
    yaml::Fields set = r.fields(f.get("settings"), "cliff.settings");
    for (const auto& [name, value] : set.entries()) {
      if (auto v = r.string(value, name))
        e.options.settings.push_back({to_lower(name), *v, r.where(set.key_node(name))});
    }
  }
  if (f.has("workload")) {
    yaml::Fields w =
        r.fields(f.get("workload"), "cliff.workload", {"name", "scale", "clients", "scripts"});
    e.workload = r.string(w.get("name"), "cliff.workload.name").value_or(e.workload);
    if (auto v = r.integer(w.get("scale"), "cliff.workload.scale")) e.scale = static_cast<int>(*v);
    if (auto v = r.integer(w.get("clients"), "cliff.workload.clients"))
      e.clients = static_cast<int>(*v);
    for (const std::string& script : r.string_list(w.get("scripts"), "cliff.workload.scripts")
                                         .value_or(std::vector<std::string>{})) {
      // FILE[@WEIGHT], the file beside the lesson unless absolute.
      const auto at = script.rfind('@');
      const fs::path path(at == std::string::npos ? script : script.substr(0, at));
      const std::string weight = at == std::string::npos ? "" : script.substr(at);
      e.scripts.push_back((path.is_absolute() ? path : fs::path(file).parent_path() / path)
                              .lexically_normal()
                              .string() +
                          weight);
    }
  }
  if (f.has("measure")) {
    yaml::Fields m = r.fields(f.get("measure"), "cliff.measure", {"warmup", "duration", "repeats"});
    if (auto v = r.duration(m.get("warmup"), "cliff.measure.warmup")) e.warmup_s = *v;
    if (auto v = r.duration(m.get("duration"), "cliff.measure.duration")) e.duration_s = *v;
    if (auto v = r.integer(m.get("repeats"), "cliff.measure.repeats")) {
      if (*v < 3) r.error(m.get("repeats"), "cliff.measure.repeats must be at least 3");
      e.options.search.repeats = static_cast<int>(*v);
    }
  }
  if (f.has("server")) {
    yaml::Fields m = r.fields(f.get("server"), "cliff.server", {"memory", "cpus", "cpuset"});
    c.memory = r.string(m.get("memory"), "cliff.server.memory").value_or("");
    c.cpus = r.string(m.get("cpus"), "cliff.server.cpus").value_or("");
    c.cpuset = r.string(m.get("cpuset"), "cliff.server.cpuset").value_or("");
  }
  lesson.cliff = std::move(c);
}

void parse_diagnose(yaml::Reader& r, const YAML::Node& node, Lesson& lesson) {
  if (!node.IsDefined() || !r.is_sequence(node, "diagnose")) return;
  for (const YAML::Node& item : node) {
    yaml::Fields f = r.fields(item, "a diagnose question", {"ask", "evidence", "answer"});
    DiagnoseQuestion q;
    q.where = r.where(item);
    q.ask = r.string(f.get("ask"), "ask", true, item).value_or("");
    q.evidence = r.string_list(f.get("evidence"), "evidence").value_or(std::vector<std::string>{});
    q.answer = r.string(f.get("answer"), "answer", true, item).value_or("");
    lesson.diagnose.push_back(std::move(q));
  }
}

}  // namespace

Lesson parse_lesson(std::string_view text, const std::string& file,
                    std::vector<ConfigError>& problems) {
  Lesson lesson;
  lesson.file = file;
  yaml::Reader r(file);
  std::optional<YAML::Node> root = r.load_string(text);
  if (root) {
    yaml::Fields f = r.fields(*root, "a lesson",
                              {"lesson", "title", "minutes", "scenario", "compare", "cliff",
                               "explain", "predict", "reveal", "diagnose"});
    lesson.name = r.string(f.get("lesson"), "lesson", true, *root).value_or("");
    // The name becomes the results folder results/lesson-<name>-<time>.
    if (std::string why = unsafe_file_name_reason(lesson.name); f.has("lesson") && !why.empty()) {
      r.error(f.get("lesson"),
              fmt::format("the lesson name \"{}\" {}", printable(lesson.name), why),
              "use letters, digits, '-', '_' and '.', e.g. lesson: cache-basics");
      lesson.name.clear();
    }
    lesson.title = r.string(f.get("title"), "title", true, *root).value_or("");
    if (auto m = r.integer(f.get("minutes"), "minutes")) {
      if (*m < 1 || *m > 120) r.error(f.get("minutes"), "minutes must be from 1 to 120");
      lesson.minutes = static_cast<int>(*m);
    }
    if (f.has("cliff")) {
      parse_cliff(r, f.get("cliff"), file, lesson);
      for (const char* key : {"scenario", "compare"}) {
        if (f.has(key))
          r.error(f.get(key), fmt::format("a cliff lesson has no {}", key),
                  "its `cliff:` names the knob, the range, the workload and the machine");
      }
    }
    if (lesson.cliff) {
      // A cliff lesson: what is searched is in `cliff:`.
    } else if (auto s = r.string(f.get("scenario"), "scenario", true, *root)) {
      lesson.scenario_where = r.where(f.get("scenario"));
      // A file beside the lesson, or a scenario of the library by name, as `run` finds it.
      try {
        lesson.scenario = scenario::resolve_scenario(*s, fs::path(file).parent_path());
      } catch (const InputError& e) {
        r.error(f.get("scenario"), e.what());
      }
    }
    if (lesson.cliff) {
      // no compared stages: the reveal shows the cliff
    } else if (f.has("compare")) {
      yaml::Fields c = r.fields(f.get("compare"), "compare", {"stage", "against"});
      lesson.compare_where = r.where(f.get("compare"));
      lesson.stage = r.string(c.get("stage"), "compare.stage", true, f.get("compare")).value_or("");
      lesson.reference = r.string(c.get("against"), "compare.against").value_or("baseline");
    } else {
      r.error(*root,
              "a lesson needs `compare: {stage: NAME}`: the stage whose effect the reveal shows");
    }
    if (f.has("explain")) {
      yaml::Fields e = r.fields(f.get("explain"), "explain", {"knobs", "text"});
      lesson.knobs =
          r.string_list(e.get("knobs"), "explain.knobs").value_or(std::vector<std::string>{});
      lesson.knobs_where = r.where(e.get("knobs"));
      lesson.explain = r.string(e.get("text"), "explain.text", true, f.get("explain")).value_or("");
    }
    parse_predict(r, f.get("predict"), lesson);
    if (lesson.predict.empty()) r.error(*root, "a lesson needs at least one `predict` question");
    if (f.has("reveal")) {
      yaml::Fields v = r.fields(f.get("reveal"), "reveal", {"evidence", "latency", "gap"});
      lesson.reveal_evidence =
          r.string_list(v.get("evidence"), "reveal.evidence").value_or(std::vector<std::string>{});
      lesson.reveal_where = r.where(v.get("evidence"));
      lesson.show_latency = r.boolean(v.get("latency"), "reveal.latency").value_or(true);
      lesson.gap = r.string(v.get("gap"), "reveal.gap").value_or("");
    }
    parse_diagnose(r, f.get("diagnose"), lesson);
  }
  for (ConfigError& p : r.take_problems()) problems.push_back(std::move(p));
  return lesson;
}

Lesson load_lesson(const fs::path& path) {
  yaml::Reader r(path.string());
  r.load_file(path);  // the file checks (missing, too large, binary) before reading it
  r.throw_if_errors();
  std::vector<ConfigError> problems;
  Lesson lesson = parse_lesson(read_trusted_file(path, "the lesson"), path.string(), problems);
  if (has_errors(problems)) throw InputError(std::move(problems));
  return lesson;
}

std::vector<ConfigError> check_lesson(const Lesson& lesson, const scenario::Plan* plan,
                                      const knobs::Catalog& catalog) {
  std::vector<ConfigError> problems;
  auto add = [&](const SourceLocation& where, std::string message, std::string hint = {}) {
    ConfigError e;
    e.where = where;
    e.message = std::move(message);
    e.hint = std::move(hint);
    problems.push_back(std::move(e));
  };
  std::vector<std::string> stages;
  if (plan != nullptr) {
    for (const auto& s : plan->stages) stages.push_back(s.name);
  }
  for (const std::string* name : {&lesson.stage, &lesson.reference}) {
    if (plan != nullptr && std::none_of(stages.begin(), stages.end(),
                                        [&](const std::string& s) { return iequals(s, *name); })) {
      add(lesson.compare_where, fmt::format("compare: the scenario has no stage \"{}\"", *name),
          "its stages are: " + join(stages, ", "));
    }
  }
  if (lesson.cliff) {
    for (const knobs::Setting& s : lesson.cliff->search.options.settings) {
      if (catalog.find(s.name) == nullptr) {
        auto m = closest_match(s.name, catalog.knob_names());
        add(s.where, fmt::format("cliff.settings: \"{}\" is not in the knob catalog", s.name),
            m ? fmt::format("did you mean {}?", *m) : "");
      }
    }
  }
  for (const std::string& k : lesson.knobs) {
    if (catalog.find(k) == nullptr) {
      auto s = closest_match(k, catalog.knob_names());
      add(lesson.knobs_where, fmt::format("explain.knobs: \"{}\" is not in the knob catalog", k),
          s ? fmt::format("did you mean {}?", *s) : "");
    }
  }
  std::vector<std::string> keys = knobs::evidence_key_names();
  auto check_keys = [&](const std::vector<std::string>& list, const SourceLocation& where) {
    for (const std::string& k : list) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
        auto s = closest_match(k, keys);
        add(where, fmt::format("\"{}\" is not an evidence key (docs/evidence.md)", k),
            s ? fmt::format("did you mean {}?", *s) : "");
      }
    }
  };
  check_keys(lesson.reveal_evidence, lesson.reveal_where);
  for (const DiagnoseQuestion& q : lesson.diagnose) check_keys(q.evidence, q.where);
  return problems;
}

std::vector<Participant> load_answers(const fs::path& path, const Lesson& lesson) {
  yaml::Reader r(path.string());
  std::vector<Participant> out;
  if (std::optional<YAML::Node> root = r.load_file(path)) {
    yaml::Fields f = r.fields(*root, "an answers file", {"participants"});
    const YAML::Node list = f.get("participants");
    if (!list.IsDefined()) r.error(*root, "an answers file needs `participants:`");
    if (list.IsDefined() && r.is_sequence(list, "participants")) {
      for (const YAML::Node& item : list) {
        yaml::Fields p = r.fields(item, "a participant", {"name", "answers"});
        Participant who;
        who.name = r.string(p.get("name"), "name", true, item).value_or("");
        yaml::Fields a = r.fields(p.get("answers"), "answers");
        for (const auto& [id, node] : a.entries()) {
          auto q = std::find_if(lesson.predict.begin(), lesson.predict.end(),
                                [&](const PredictQuestion& x) { return x.id == id; });
          if (q == lesson.predict.end()) {
            std::vector<std::string> ids;
            for (const auto& x : lesson.predict) ids.push_back(x.id);
            r.error(a.key_node(id),
                    fmt::format("lesson {} has no question \"{}\"", lesson.name, id),
                    "its questions are: " + join(ids, ", "));
            continue;
          }
          if (auto v = r.string(node, id)) who.answers[id] = *v;
        }
        out.push_back(std::move(who));
      }
    }
  }
  r.throw_if_errors();
  return out;
}

std::vector<std::string> lesson_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(lessons_dir(), ec)) {
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

fs::path resolve_lesson(const std::string& arg) {
  // As resolve_scenario: a bare name is only ever the library's, never a file of the current
  // folder.
  fs::path p(arg);
  if (names_a_file(arg) && fs::exists(p)) return p;
  for (const fs::path& c : {lessons_dir() / (arg + ".yaml"), lessons_dir() / arg}) {
    if (fs::exists(c)) return c;
  }
  std::vector<std::string> names = lesson_names();
  auto s = closest_match(arg, names);
  throw InputError(fmt::format("no lesson file or named lesson '{}'{}; the lessons are: {}", arg,
                               s ? fmt::format(" (did you mean '{}'?)", *s) : "",
                               join(names, ", ")));
}

}  // namespace pgslow::workshop
