#include "report/waits_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <utility>

#include "report/text.h"

namespace pgslow::report {

std::string waits_svg(const Run& run) {
  // The run's largest waits by their summed shares keep their own colour in every bar.
  std::map<std::string, double> weight;
  std::vector<const StageResult*> sampled;
  for (const auto& stage : run.stages) {
    if (!stage.waits) continue;
    const auto shares = wait_shares(*stage.waits);
    if (shares.empty()) continue;
    sampled.push_back(&stage);
    for (const auto& s : shares) weight[s.wait] += s.share;
  }
  if (sampled.empty()) return {};
  std::vector<std::pair<std::string, double>> ranked(weight.begin(), weight.end());
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  static const char* const kColours[] = {"#1e8449", "#3b6fd8", "#c0392b", "#8e44ad",
                                         "#e67e22", "#16a085", "#7f8c8d"};
  constexpr std::size_t kNamed = std::size(kColours);
  std::map<std::string, std::string> colour;
  for (std::size_t i = 0; i < ranked.size() && i < kNamed; ++i)
    colour[ranked[i].first] = kColours[i];
  const std::string other_colour = "#bdc3c7";

  constexpr int label_w = 170, bar_w = 540, row = 28, top = 6;
  const int legend_rows = static_cast<int>((std::min(ranked.size(), kNamed + 1) + 3) / 4);
  const int height = top + row * static_cast<int>(sampled.size()) + 8 + 20 * legend_rows;
  std::string svg = fmt::format(
      "<svg class=\"waits\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"share of backend time "
      "per wait, per stage\">",
      label_w + bar_w + 10, height);
  for (std::size_t r = 0; r < sampled.size(); ++r) {
    const StageResult& stage = *sampled[r];
    const int y = top + row * static_cast<int>(r);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"12\">{}</text>",
                       label_w - 8, y + row / 2 + 4, html_escape(stage.name));
    double x = label_w;
    double other = 0;
    auto segment = [&](const std::string& name, double share, const std::string& fill) {
      const double w = share * bar_w;
      svg += fmt::format(
          "<rect class=\"wait\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" "
          "fill=\"{}\"><title>{}: {} {} of backend time</title></rect>",
          x, y + 4, w, row - 8, fill, html_escape(stage.name), html_escape(name),
          format_share(share));
      x += w;
    };
    for (const auto& s : wait_shares(*stage.waits)) {
      const auto c = colour.find(s.wait);
      if (c == colour.end())
        other += s.share;
      else
        segment(s.wait, s.share, c->second);
    }
    if (other > 0) segment("other waits", other, other_colour);
  }
  // The legend, four entries a line.
  std::vector<std::pair<std::string, std::string>> legend;
  for (std::size_t i = 0; i < ranked.size() && i < kNamed; ++i)
    legend.emplace_back(ranked[i].first, kColours[i]);
  if (ranked.size() > kNamed) legend.emplace_back("other waits", other_colour);
  const int legend_top = top + row * static_cast<int>(sampled.size()) + 8;
  for (std::size_t i = 0; i < legend.size(); ++i) {
    const int lx = label_w + static_cast<int>(i % 4) * (bar_w / 4);
    const int ly = legend_top + static_cast<int>(i / 4) * 20;
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" "
        "font-size=\"11\">{}</text>",
        lx, ly, legend[i].second, lx + 14, ly + 9, html_escape(legend[i].first));
  }
  return svg + "</svg>";
}

}  // namespace pgslow::report
