#include "scenario/sweep.h"

#include <fmt/format.h>

#include "common/strings.h"

namespace pgslow::scenario {

const std::vector<std::string>& sweep_dimensions() {
  static const std::vector<std::string> dims = {"clients", "pool_size", "rate", "workers"};
  return dims;
}

void read_sweep(yaml::Reader& r, const YAML::Node& node, Scenario& s) {
  std::vector<std::string> allowed = sweep_dimensions();
  allowed.push_back("load");
  yaml::Fields f = r.fields(node, "sweep", allowed);
  if (!node.IsMap()) return;
  s.sweep.where = r.where(node);
  for (const auto& [key, value] : f.entries()) {
    if (key == "load") {
      s.sweep.load = read_load(r, value, "sweep.load");
      continue;
    }
    const std::string what = "sweep." + key;
    if (!r.is_sequence(value, what)) continue;
    std::vector<LoadKnobs> values;
    for (const auto& item : value) {
      LoadKnobs k;
      if (read_load_value(r, item, key, what, k)) values.push_back(k);
    }
    if (values.empty()) {
      r.error(value, fmt::format("{} has no values", what), "list the values, e.g. [1, 10, 50]");
      continue;
    }
    s.sweep.dimensions.push_back(key);
    s.sweep.values.push_back(std::move(values));
  }
  if (s.sweep.dimensions.empty()) {
    r.error(node, "the sweep varies nothing",
            "give it one or two of " + join(sweep_dimensions(), ", ") + ", each a list of values");
  } else if (s.sweep.dimensions.size() > 2) {
    r.error(node,
            fmt::format("the sweep varies {} dimensions ({}); a curve has one, a family of "
                        "curves two",
                        s.sweep.dimensions.size(), join(s.sweep.dimensions, ", ")),
            "keep two; write the others as stages or under sweep.load");
    s.sweep.dimensions.resize(2);
    s.sweep.values.resize(2);
  }
}

std::string sweep_value_text(const std::string& dimension, const LoadKnobs& k) {
  if (dimension == "clients" && k.clients) return std::to_string(*k.clients);
  if (dimension == "pool_size" && k.pool_size) return std::to_string(*k.pool_size);
  if (dimension == "workers" && k.workers) return std::to_string(*k.workers);
  if (dimension == "rate" && k.rate_percent) return fmt::format("{:g}%", *k.rate_percent);
  if (dimension == "rate" && k.rate) return fmt::format("{:g}", *k.rate);
  return "?";
}

std::vector<StageSpec> expand_sweep(const SweepSpec& sweep) {
  std::vector<StageSpec> out;
  if (sweep.empty()) return out;
  auto stage = [&](const std::vector<std::pair<std::string, const LoadKnobs*>>& point) {
    StageSpec st;
    st.where = sweep.where;
    st.sweep_point = true;
    st.load = sweep.load;
    std::vector<std::string> parts;
    for (const auto& [dim, knobs] : point) {
      st.load = merge_load(st.load, *knobs);
      parts.push_back(dim + " " + sweep_value_text(dim, *knobs));
    }
    st.name = join(parts, ", ");
    return st;
  };
  // The second dimension outer: each of its values is one curve over the first.
  if (sweep.dimensions.size() == 1) {
    for (const auto& v : sweep.values[0]) out.push_back(stage({{sweep.dimensions[0], &v}}));
  } else {
    for (const auto& series : sweep.values[1]) {
      for (const auto& v : sweep.values[0]) {
        out.push_back(stage({{sweep.dimensions[0], &v}, {sweep.dimensions[1], &series}}));
      }
    }
  }
  return out;
}

}  // namespace pgslow::scenario
