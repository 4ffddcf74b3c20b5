#include "workshop/lesson_run.h"

#include <fmt/format.h>

#include <iostream>
#include <sstream>
#include <thread>

#include "common/clock.h"
#include "common/errors.h"
#include "common/strings.h"
#include "report/registry.h"
#include "report/text.h"
#include "report/workshop.h"
#include "workshop/lab.h"
#include "workshop/prediction.h"

namespace pgslow::workshop {

namespace {

std::string read_line(std::istream& in, std::ostream& out, const std::string& prompt) {
  out << prompt << std::flush;
  std::string line;
  if (!std::getline(in, line)) return {};
  return trim(line);
}

void heading(std::ostream& out, const std::string& step, const std::string& what) {
  out << fmt::format("\n== {}{}\n\n", step, what.empty() ? "" : " " + what);
}

std::string wrap(const std::string& text, const std::string& indent = "  ",
                 std::size_t width = 78) {
  std::string out, line;
  for (const std::string& word : split(text, ' ')) {
    if (word.empty()) continue;
    if (!line.empty() && line.size() + 1 + word.size() + indent.size() > width) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += indent + line + "\n";
  return out;
}

const results::StageResult* find_stage(const results::Run& run, const std::string& name) {
  for (const auto& s : run.stages) {
    if (iequals(s.name, name)) return &s;
  }
  return nullptr;
}

void explain(const LessonSetup& s, std::ostream& out) {
  const Lesson& l = s.lesson;
  heading(out, "EXPLAIN", "");
  out << wrap(l.explain) << "\n";
  for (const std::string& name : l.knobs) {
    const knobs::Knob* k = s.catalog.find(name);
    if (k == nullptr) continue;
    out << fmt::format("  {}: now {} on this server (healthy: {}; slow: {})\n", k->name,
                       scenario::current_value(s.live, k->name),
                       k->healthy.empty() ? "-" : k->healthy,
                       k->slow.empty() ? "-" : join(k->slow, ", "));
    out << wrap(k->why, "    ");
    if (!k->watch.empty()) out << fmt::format("    watch: {}\n", join(k->watch, ", "));
    out << "\n";
  }
}

std::vector<Participant> predict(const LessonSetup& s, LessonIo& io) {
  const Lesson& l = s.lesson;
  heading(io.out, "PREDICT", "(write your answers down before the run)");
  for (std::size_t i = 0; i < l.predict.size(); ++i) {
    const PredictQuestion& q = l.predict[i];
    io.out << fmt::format("  {}. {}\n", i + 1, q.ask);
    for (std::size_t c = 0; c < q.choices.size(); ++c)
      io.out << fmt::format("       {}) {}\n", static_cast<char>('a' + c), q.choices[c]);
    if (q.is_effect())
      io.out << "       (in words: \"slower, about 3x\", \"-20%\", \"no change\")\n";
  }
  io.out << "\n";
  if (io.dashboard != nullptr) {
    io.dashboard->set_step("predict", l.title);
    io.dashboard->open_predictions(l.predict.front().ask);
    io.out << fmt::format("  The room can answer question 1 on {}\n", io.dashboard->url());
  }
  std::vector<Participant> people;
  if (io.answers) {
    people = *io.answers;
  } else if (io.in != nullptr) {
    for (;;) {
      Participant p;
      p.name = read_line(*io.in, io.out, "  participant's name (empty when everyone answered): ");
      if (p.name.empty()) break;
      for (std::size_t i = 0; i < l.predict.size(); ++i) {
        const PredictQuestion& q = l.predict[i];
        for (;;) {
          std::string a = read_line(*io.in, io.out, fmt::format("    {}. ", i + 1));
          if (!q.is_effect() && !a.empty() && !match_choice(a, q.choices)) {
            io.out << fmt::format("    one of a-{}, please\n",
                                  static_cast<char>('a' + q.choices.size() - 1));
            continue;
          }
          if (!a.empty()) p.answers[q.id] = a;
          break;
        }
      }
      people.push_back(std::move(p));
    }
  }
  if (io.dashboard != nullptr && io.wait_for_room > 0) {
    // The room answers on the page; the lesson goes on when enough did, or at the deadline.
    const std::int64_t deadline = now_us() + io.room_timeout.count() * 1'000'000;
    while (io.dashboard->predictions().size() < static_cast<std::size_t>(io.wait_for_room) &&
           now_us() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
  if (io.dashboard != nullptr) io.dashboard->close_predictions();
  return people;
}

std::string score(const PredictQuestion& q, const std::string& answer,
                  const report::Effect& effect) {
  if (q.is_effect()) return score_effect_prediction(parse_effect_prediction(answer), effect);
  auto c = match_choice(answer, q.choices);
  if (!c) return "not one of the choices";
  if (!q.answer) return fmt::format("chose \"{}\" (see the evidence)", q.choices[*c]);
  return *c == *q.answer ? "right" : fmt::format("the evidence says \"{}\"", q.choices[*q.answer]);
}

// An effect prediction as a ratio for the instructor's record; 0 for choices.
double quantified(const PredictQuestion& q, const std::string& answer) {
  return q.is_effect() ? predicted_ratio(parse_effect_prediction(answer)) : 0;
}

}  // namespace

results::Run run_lesson(const LessonSetup& s, LessonIo& io, Progress& progress,
                        report::Reveal& reveal) {
  const Lesson& l = s.lesson;
  io.out << fmt::format("LESSON {}: {}{}\n", l.name, l.title,
                        l.minutes > 0 ? fmt::format(" (about {} minutes)", l.minutes) : "");
  if (io.dashboard != nullptr) io.dashboard->set_step("explain", l.title);
  explain(s, io.out);
  std::vector<Participant> people = predict(s, io);

  heading(io.out, "RUN",
          fmt::format("{} ({} stages, about {:.0f} s of measuring)", s.plan.scenario.name,
                      s.plan.stages.size(), s.plan.estimated_seconds));
  io.out << std::flush;
  if (io.dashboard != nullptr) io.dashboard->set_step("run", l.title);
  results::Run run;
  measure_plan(s.plan, s.server, s.catalog, s.workdir, s.run_options, progress, run);

  const results::StageResult* stage = find_stage(run, l.stage);
  const results::StageResult* ref = find_stage(run, l.reference);
  if (stage == nullptr || ref == nullptr)
    throw RuntimeError("the lesson's compared stages did not run");
  reveal.lesson = l.name;
  reveal.stage = stage->name;
  reveal.reference_stage = ref->name;
  reveal.effect = report::effect_in_run(run, *stage, *ref);
  if (l.show_latency) {
    for (const auto& st : run.stages) {
      if (!st.repeats.empty()) reveal.latency.push_back({st.name, report::latency_check(st)});
    }
  }
  for (const Participant& p : people) {
    for (const PredictQuestion& q : l.predict) {
      auto a = p.answers.find(q.id);
      if (a == p.answers.end()) continue;
      reveal.predictions.push_back(
          {p.name, q.id, a->second, score(q, a->second, reveal.effect), quantified(q, a->second)});
    }
  }
  if (io.dashboard != nullptr) {
    const PredictQuestion& first = l.predict.front();
    for (const RoomPrediction& p : io.dashboard->predictions()) {
      reveal.predictions.push_back({p.name + " (page)", first.id, p.answer,
                                    score(first, p.answer, reveal.effect),
                                    quantified(first, p.answer)});
    }
  }
  reveal.evidence = report::evidence_rows(*stage, *ref, l.reveal_evidence);
  for (report::EvidenceRow& w : report::wait_rows(*stage, *ref))
    reveal.evidence.push_back(std::move(w));
  reveal.gap = l.gap;
  heading(io.out, "REVEAL", "");
  std::ostringstream text;
  report::render(reveal, "console", text);
  // The room's names and answers as the reports show them: control characters (DEL, C1,
  // bidirectional overrides) escaped, never sent raw to the instructor's terminal.
  io.out << report::printable_lines(text.str());
  if (io.dashboard != nullptr) {
    io.dashboard->set_step("reveal", l.title);
    io.dashboard->set_reveal(text.str());
  }

  if (!l.diagnose.empty()) {
    heading(io.out, "DIAGNOSE", "(answer from the evidence)");
    if (io.dashboard != nullptr) io.dashboard->set_step("diagnose", l.title);
    for (std::size_t i = 0; i < l.diagnose.size(); ++i) {
      const DiagnoseQuestion& q = l.diagnose[i];
      io.out << fmt::format("  {}. {}\n", i + 1, q.ask);
      for (const report::EvidenceRow& e : report::evidence_rows(*stage, *ref, q.evidence))
        io.out << fmt::format("       {}: {} → {}\n", e.label, e.reference, e.stage);
      if (io.in != nullptr && !io.answers)
        read_line(*io.in, io.out, "     (Enter shows the answer) ");
      io.out << "     answer:\n" << wrap(q.answer, "       ") << "\n";
    }
  }
  io.out << std::flush;
  return run;
}

}  // namespace pgslow::workshop
