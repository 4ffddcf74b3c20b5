#include "workshop/lesson_run.h"

#include <fmt/format.h>

#include <functional>
#include <iostream>
#include <sstream>
#include <thread>

#include "common/clock.h"
#include "common/errors.h"
#include "common/strings.h"
#include "report/cliff_view.h"
#include "report/registry.h"
#include "report/text.h"
#include "report/workshop.h"
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

void explain(const Lesson& l, const knobs::Catalog& catalog, const knobs::ServerSettings& live,
             std::ostream& out) {
  heading(out, "EXPLAIN", "");
  out << wrap(l.explain) << "\n";
  for (const std::string& name : l.knobs) {
    const knobs::Knob* k = catalog.find(name);
    if (k == nullptr) continue;
    out << fmt::format("  {}: now {} on this server (healthy: {}; slow: {})\n", k->name,
                       scenario::current_value(live, k->name),
                       k->healthy.empty() ? "-" : k->healthy,
                       k->slow.empty() ? "-" : join(k->slow, ", "));
    out << wrap(k->why, "    ");
    if (!k->watch.empty()) out << fmt::format("    watch: {}\n", join(k->watch, ", "));
    out << "\n";
  }
}

// A value of a cliff lesson's range as the search would write it: the grid's middle.
double middle_of_the_range(const search::CliffSpace& space) {
  const std::vector<double> grid = search::cliff_grid(space, 2);
  return grid[grid.size() / 2];
}

// `space`: a cliff lesson's search, whose value the questions without choices ask for.
std::vector<Participant> predict(const Lesson& l, LessonIo& io,
                                 const search::CliffSpace* space = nullptr) {
  heading(io.out, "PREDICT", "(write your answers down before the run)");
  for (std::size_t i = 0; i < l.predict.size(); ++i) {
    const PredictQuestion& q = l.predict[i];
    io.out << fmt::format("  {}. {}\n", i + 1, q.ask);
    for (std::size_t c = 0; c < q.choices.size(); ++c)
      io.out << fmt::format("       {}) {}\n", static_cast<char>('a' + c), q.choices[c]);
    if (q.is_effect() && space != nullptr) {
      io.out << fmt::format("       (a value of {} between {} and {}, e.g. \"{}\")\n", space->knob,
                            search::cliff_value_text(*space, space->from),
                            search::cliff_value_text(*space, space->to),
                            search::cliff_value_text(*space, middle_of_the_range(*space)));
    } else if (q.is_effect()) {
      io.out << "       (in words: \"slower, about 3x\", \"-20%\", \"no change\")\n";
    }
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
          if (q.is_effect() && space != nullptr && !a.empty() && !parse_cliff_guess(a, *space)) {
            io.out << fmt::format("    a value of {}, please, e.g. {}\n", space->knob,
                                  search::cliff_value_text(*space, space->from));
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

// A multiple-choice answer against the lesson's right choice.
std::string score_choice(const PredictQuestion& q, const std::string& answer) {
  auto c = match_choice(answer, q.choices);
  if (!c) return "not one of the choices";
  if (!q.answer) return fmt::format("chose \"{}\" (see the evidence)", q.choices[*c]);
  return *c == *q.answer ? "right" : fmt::format("the evidence says \"{}\"", q.choices[*q.answer]);
}

std::string score(const PredictQuestion& q, const std::string& answer,
                  const report::Effect& effect) {
  if (q.is_effect()) return score_effect_prediction(parse_effect_prediction(answer), effect);
  return score_choice(q, answer);
}

// An effect prediction as a ratio for the instructor's record; 0 for choices.
double quantified(const PredictQuestion& q, const std::string& answer) {
  return q.is_effect() ? predicted_ratio(parse_effect_prediction(answer)) : 0;
}

// The Diagnose step: each question with the evidence it names (`rows` gives them), then its
// answer (after Enter at a terminal).
void diagnose(
    const Lesson& l, LessonIo& io,
    const std::function<std::vector<report::EvidenceRow>(const std::vector<std::string>&)>& rows) {
  if (l.diagnose.empty()) return;
  heading(io.out, "DIAGNOSE", "(answer from the evidence)");
  if (io.dashboard != nullptr) io.dashboard->set_step("diagnose", l.title);
  for (std::size_t i = 0; i < l.diagnose.size(); ++i) {
    const DiagnoseQuestion& q = l.diagnose[i];
    io.out << fmt::format("  {}. {}\n", i + 1, q.ask);
    for (const report::EvidenceRow& e : rows(q.evidence))
      io.out << fmt::format("       {}: {} → {}\n", e.label, e.reference, e.stage);
    if (io.in != nullptr && !io.answers)
      read_line(*io.in, io.out, "     (Enter shows the answer) ");
    io.out << "     answer:\n" << wrap(q.answer, "       ") << "\n";
  }
}

// Shows the reveal: on the terminal (the room's names and answers with control characters
// escaped, never raw) and on the dashboard.
template <typename Reveal>
void show_reveal(const Reveal& reveal, const Lesson& l, LessonIo& io) {
  heading(io.out, "REVEAL", "");
  std::ostringstream text;
  report::render(reveal, "console", text);
  io.out << report::printable_lines(text.str());
  if (io.dashboard != nullptr) {
    io.dashboard->set_step("reveal", l.title);
    io.dashboard->set_reveal(text.str());
  }
}

// The cliff lesson's search space against the live server; a problem names the lesson's
// `cliff:` (its file, line and column), where the value was written.
search::CliffSpace checked_space(const CliffLessonSetup& s) {
  try {
    return experiment::cliff_space(s.experiment.options, s.catalog, s.live,
                                   s.server.current_envelope());
  } catch (const InputError& e) {
    std::vector<ConfigError> problems = e.problems();
    if (problems.empty()) problems.push_back({{}, e.what(), "", ConfigError::Severity::kError});
    for (ConfigError& p : problems) {
      p.message =
          fmt::format("cliff: {}{}", p.where.file.empty() ? "" : p.where.file + ": ", p.message);
      p.where = s.lesson.cliff->where;
    }
    throw InputError(std::move(problems));
  }
}

// One answer of a cliff lesson, from the answers file, the terminal or the page.
struct Guess {
  std::string who;
  const PredictQuestion* question;
  std::string answer;
};

// A value by its distance from the cliff (score_cliff_guess), a choice as in any lesson.
report::PredictionRow score_cliff_answer(const Guess& g, const results::CliffResult& c,
                                         const search::CliffSpace& space) {
  report::PredictionRow row{g.who, g.question->id, g.answer, "", 0, 0};
  if (!g.question->is_effect()) {
    row.verdict = score_choice(*g.question, g.answer);
  } else if (auto v = parse_cliff_guess(g.answer, space)) {
    const CliffGuessScore score = score_cliff_guess(*v, c, space);
    row.verdict = score.verdict;
    row.off_by = score.off_by;
  } else {
    row.verdict = fmt::format("not a value of {} (write it as {})", space.knob, c.from);
  }
  return row;
}

// The two points the knee's evidence compares: the last safe value (the baseline when the
// first step was harmful) and the first harmful one; without a cliff, the baseline and the far
// end. {nullptr, nullptr} when nothing was measured.
std::pair<const results::CliffPoint*, const results::CliffPoint*> knee_points(
    const results::CliffResult& c) {
  if (c.first_harmful)
    return {c.last_safe ? &c.points[*c.last_safe] : &c.baseline, &c.points[*c.first_harmful]};
  for (const results::CliffPoint& p : c.points)
    if (p.base_value == c.to_value) return {&c.baseline, &p};
  return {nullptr, nullptr};
}

}  // namespace

results::Run run_lesson(const LessonSetup& s, LessonIo& io, Progress& progress,
                        report::Reveal& reveal) {
  const Lesson& l = s.lesson;
  io.out << fmt::format("LESSON {}: {}{}\n", l.name, l.title,
                        l.minutes > 0 ? fmt::format(" (about {} minutes)", l.minutes) : "");
  if (io.dashboard != nullptr) io.dashboard->set_step("explain", l.title);
  explain(l, s.catalog, s.live, io.out);
  std::vector<Participant> people = predict(l, io);

  heading(io.out, "RUN",
          fmt::format("{} ({} stages, about {:.0f} s of measuring)", s.plan.scenario.name,
                      s.plan.stages.size(), s.plan.estimated_seconds));
  io.out << std::flush;
  if (io.dashboard != nullptr) io.dashboard->set_step("run", l.title);
  results::Run run;
  experiment::run_plan(s.plan, s.server, s.catalog, s.workdir, s.run_options, progress, run);

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
  show_reveal(reveal, l, io);
  diagnose(l, io, [&](const std::vector<std::string>& keys) {
    return report::evidence_rows(*stage, *ref, keys);
  });
  io.out << std::flush;
  return run;
}

experiment::CliffExperiment cliff_experiment(const Lesson& lesson) {
  experiment::CliffExperiment e = lesson.cliff->search;
  e.options.evidence = lesson.reveal_evidence;
  for (const DiagnoseQuestion& q : lesson.diagnose)
    e.options.evidence.insert(e.options.evidence.end(), q.evidence.begin(), q.evidence.end());
  return e;
}

report::CliffReveal run_cliff_lesson(CliffLessonSetup& s, LessonIo& io, Progress& progress) {
  const Lesson& l = s.lesson;
  experiment::CliffExperiment& e = s.experiment;
  // The values the room guesses, checked against the live server before anyone answers.
  const search::CliffSpace space = checked_space(s);
  io.out << fmt::format("LESSON {}: {}{}\n", l.name, l.title,
                        l.minutes > 0 ? fmt::format(" (about {} minutes)", l.minutes) : "");
  if (io.dashboard != nullptr) io.dashboard->set_step("explain", l.title);
  explain(l, s.catalog, s.live, io.out);
  const std::vector<Participant> people = predict(l, io, &space);

  // The guesses, scored once the cliff is known; the first question's are the curve's markers.
  std::vector<Guess> guesses;
  for (const Participant& p : people) {
    for (const PredictQuestion& q : l.predict) {
      auto a = p.answers.find(q.id);
      if (a != p.answers.end()) guesses.push_back({p.name, &q, a->second});
    }
  }
  if (io.dashboard != nullptr) {
    for (const RoomPrediction& p : io.dashboard->predictions())
      guesses.push_back({p.name + " (page)", &l.predict.front(), p.answer});
  }

  const int steps =
      static_cast<int>(search::cliff_grid(space, e.options.search.resolution).size()) - 1;
  heading(io.out, "RUN",
          fmt::format("the cliff of {} from {} towards {} (at most {} points of {} runs, each "
                      "between runs of {})",
                      space.knob, search::cliff_value_text(space, space.from), e.options.to,
                      search::cliff_max_points(steps), e.options.search.repeats,
                      search::cliff_value_text(space, space.from)));
  io.out << std::flush;
  if (io.dashboard != nullptr) {
    io.dashboard->set_step("run", l.title);
    results::CliffPoint from;
    from.value = search::cliff_value_text(space, space.from);
    from.base_value = space.from;
    io.dashboard->open_cliff(space.knob, from, search::cliff_value_text(space, space.to), space.to);
    std::vector<CliffGuessMark> marks;
    for (const Guess& g : guesses) {
      if (g.question != &l.predict.front()) continue;
      if (auto v = parse_cliff_guess(g.answer, space)) marks.push_back({g.who, g.answer, *v});
    }
    io.dashboard->set_cliff_guesses(std::move(marks));
  }
  e.options.search.on_point = [&](const results::CliffPoint& p) {
    progress.note(report::cliff_point_line(p, e.options.search.metric));
    if (io.dashboard != nullptr) io.dashboard->add_cliff_point(p);
  };
  report::CliffReveal reveal;
  reveal.lesson = l.name;
  reveal.cliff = experiment::run_cliff_experiment(e, s.server, s.catalog, progress);
  const results::CliffResult& c = reveal.cliff;

  for (const Guess& g : guesses) reveal.predictions.push_back(score_cliff_answer(g, c, space));

  const auto [safe, harmful] = knee_points(c);
  if (harmful != nullptr) {
    reveal.safe =
        fmt::format("{} ({})", safe->value, safe == &c.baseline ? "baseline" : "last safe");
    reveal.harmful =
        fmt::format("{} ({})", harmful->value, c.first_harmful ? "first harmful" : "far end, safe");
    reveal.evidence = report::evidence_rows(harmful->evidence, safe->evidence, l.reveal_evidence);
    for (report::EvidenceRow& w : report::wait_rows(harmful->waits, safe->waits))
      reveal.evidence.push_back(std::move(w));
  }
  reveal.gap = l.gap;
  show_reveal(reveal, l, io);
  diagnose(l, io, [&](const std::vector<std::string>& keys) {
    return harmful == nullptr ? std::vector<report::EvidenceRow>{}
                              : report::evidence_rows(harmful->evidence, safe->evidence, keys);
  });
  io.out << std::flush;
  return reveal;
}

}  // namespace pgslow::workshop
