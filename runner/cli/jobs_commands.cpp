// `pgslow jobs SCENARIO --versions 15,16 --envelopes 512MB/1,1GB/2 --image IMG -o DIR`: the
// version × envelope matrix as Kubernetes Jobs (docs/server.md, "The matrix as Kubernetes
// Jobs"). One Job per cell; each Job's pod runs the server of the cell's version as a sibling
// container (`db`, limited to the cell's envelope) and pgslow beside it, which writes its
// results to a shared volume in a folder named after the cell, so that `pgslow compare` puts
// any two cells side by side. Writes files only; talks to no cluster.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/errors.h"
#include "common/paths.h"
#include "common/process.h"
#include "common/safe_fs.h"
#include "common/strings.h"
#include "scenario/library.h"
#include "scenario/scenario.h"
#include "server/envelope.h"
#include "server/pg_versions.h"

namespace pgslow::cli {

namespace {

namespace fs = std::filesystem;

// Where the pgslow container finds the results volume, and the scenario when it is not in the
// image's library.
constexpr const char* kResultsDir = "/results";
constexpr const char* kScenarioDir = "/etc/pgslow-scenario";
constexpr int kServerUid = 999;    // `postgres` in pgslow's image and in the official images
constexpr int kPgslowUid = 10001;  // the Dockerfile's pgslow user

struct JobsArgs {
  std::string scenario;
  std::vector<std::string> versions;
  std::vector<std::string> envelopes;
  std::string image;
  std::vector<std::string> server_images;
  std::string out;
  std::string ns;
  std::string claim = "pgslow-results";
  std::optional<double> duration, warmup;
  std::optional<int> repeats;
  int deadline_min = 360;
};

// One envelope of --envelopes: the db container's limits (and requests, so the scheduler
// reserves them).
struct CellEnvelope {
  std::uint64_t memory_bytes = 0;  // 0: no limit
  double cpus = 0;                 // 0: no limit
  std::string label;               // "mem512mi-cpu1000m", "unlimited": part of the cell's name
};

// "512MB/1.5", "1GB", "2", "unlimited": a field with a unit is memory, a plain number CPUs.
CellEnvelope parse_cell_envelope(const std::string& text) {
  CellEnvelope e;
  const std::string t = to_lower(trim(text));
  if (t == "unlimited" || t == "none") {
    e.label = "unlimited";
    return e;
  }
  for (const std::string& raw : split(t, '/')) {
    const std::string field = trim(raw);
    std::string why;
    const bool is_number =
        !field.empty() && field.find_first_not_of("0123456789.") == std::string::npos;
    if (is_number) {
      std::optional<double> cpus = server::parse_envelope_cpus(field, &why);
      if (!cpus || e.cpus > 0)
        throw InputError(
            fmt::format("--envelopes: \"{}\": {}", text, cpus ? "gives the CPUs twice" : why));
      e.cpus = *cpus;
    } else {
      std::optional<std::uint64_t> memory = server::parse_envelope_memory(field, &why);
      if (!memory || e.memory_bytes > 0)
        throw InputError(
            fmt::format("--envelopes: \"{}\": {}", text, memory ? "gives the memory twice" : why));
      e.memory_bytes = *memory;
    }
  }
  if (e.memory_bytes == 0 && e.cpus == 0) {
    throw InputError(fmt::format(
        "--envelopes: \"{}\" is not an envelope: write MEMORY/CPUS (512MB/1.5), either alone "
        "(1GB, 2), or unlimited",
        text));
  }
  return e;
}

// Kubernetes quantities: memory in the largest binary unit that divides it, CPUs in millicores.
std::string memory_quantity(std::uint64_t bytes) {
  constexpr std::uint64_t kKi = 1024;
  for (const auto& [unit, size] : std::vector<std::pair<const char*, std::uint64_t>>{
           {"Gi", kKi * kKi * kKi}, {"Mi", kKi * kKi}, {"Ki", kKi}}) {
    if (bytes % size == 0) return fmt::format("{}{}", bytes / size, unit);
  }
  return std::to_string(bytes);
}

std::string cpu_quantity(double cpus) {
  return fmt::format("{}m", std::llround(cpus * 1000));
}

void name_envelope(CellEnvelope& e) {
  if (e.memory_bytes == 0 && e.cpus == 0) return;
  std::vector<std::string> parts;
  if (e.memory_bytes) parts.push_back("mem" + to_lower(memory_quantity(e.memory_bytes)));
  if (e.cpus > 0) parts.push_back("cpu" + cpu_quantity(e.cpus));
  e.label = join(parts, "-");
}

// A YAML scalar: JSON's double-quoted string is one.
std::string q(const std::string& s) {
  return nlohmann::json(s).dump();
}

// `text` as a YAML literal block scalar whose lines start at `indent` spaces.
std::string literal(const std::string& text, int indent) {
  std::string out = "|\n";
  for (const std::string& line : split(text, '\n')) {
    if (!line.empty()) out += std::string(static_cast<std::size_t>(indent), ' ') + line;
    out += "\n";
  }
  while (out.size() > 2 && out.ends_with("\n\n")) out.pop_back();
  return out;
}

// A DNS-1123 label: lowercase letters, digits and '-', at most 63 characters.
std::string dns_label(const std::string& text) {
  std::string out;
  for (char c : to_lower(text)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (ok) {
      out += c;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// The db container: initdb into the container's own file system, the server on 127.0.0.1 only
// (the pod's loopback: nothing outside the pod reaches it, so trust authentication lets only
// the pod's containers in), under a shell that restarts it on SIGUSR1 and stops it, and
// itself, on SIGUSR2 or SIGTERM. The pgslow container sends those through the server
// (the pgslow container's db-signal): the pod's containers share no process namespace and need
// share no volume. A server that ends on its own is started again, at most 5 times in a row. POSIX
// sh: the official postgres images have dash.
std::string db_script() {
  return R"SH(set -u
major=$1
export PATH="/usr/lib/postgresql/$major/bin:$PATH"
data=/var/lib/postgresql/pgslow-data
if [ ! -s "$data/PG_VERSION" ]; then
  initdb -D "$data" --username=postgres --auth=trust --encoding=UTF8 >/dev/null || exit 1
fi
echo $$ >"$data/pgslow-db.pid"
start() {
  postgres -D "$data" -c listen_addresses=127.0.0.1 -c port=5432 &
  pid=$!
}
stop() {
  kill -INT "$pid" 2>/dev/null
  wait "$pid"
}
action=
trap 'action=restart' USR1
trap 'action=stop' USR2 TERM INT
start
ended=0
while :; do
  if [ -z "$action" ]; then wait "$pid"; fi
  case $action in
    restart) action=; ended=0; stop; start ;;
    stop) stop; exit 0 ;;
    *)
      ended=$((ended + 1))
      if [ "$ended" -gt 5 ]; then echo "pgslow db: the server ended 5 times in a row" >&2; exit 1; fi
      start ;;
  esac
done
)SH";
}

// The pgslow container's helper that sends a signal to the db container's shell through the
// server: COPY TO PROGRAM runs `kill` as the server's user, in its data folder, where the shell
// wrote its pid. psql's exit status 2 (the connection went away) is the restart outrunning the
// reply; pgslow then waits for the new server itself.
constexpr const char* kSignalHelper = "/home/pgslow/work/db-signal";

// The pgslow container: writes the helper, waits (up to 5 minutes) for the server, runs the
// scenario against it as a `command` target whose restart is `db-signal USR1`, copies the
// results folder onto the results volume (pgslow writes it in its own folder first: a volume
// mounted with fsGroup is group-writable, which pgslow refuses to write through), then stops
// the server with `db-signal USR2`, so that the db container exits and the Job completes, and
// exits with pgslow's exit code.
std::string pgslow_script(const std::vector<std::string>& run_argv, const std::string& out,
                          const std::string& results) {
  return fmt::format(R"SH(set -u
cat >{0} <<'EOF'
#!/bin/sh
psql -XAtq -h 127.0.0.1 -p 5432 -U postgres -d postgres \
  -c "COPY (SELECT 1) TO PROGRAM 'kill -$1 \$(cat pgslow-db.pid)'" || [ $? -eq 2 ]
EOF
chmod 0755 {0}
tries=0
until pg_isready -q -h 127.0.0.1 -p 5432 -t 1; do
  tries=$((tries + 1))
  if [ "$tries" -ge 300 ]; then echo "pgslow: the db container's server did not start in 5 minutes" >&2; exit 1; fi
  sleep 1
done
rc=0
{1} || rc=$?
if [ -d {2} ]; then
  mkdir -p {3} && cp -R {2}/. {3}/ || rc=1
fi
timeout 60 {0} USR2 || echo "pgslow: could not stop the db container" >&2
exit "$rc"
)SH",
                     kSignalHelper, shell_quote(run_argv), shell_quote({out}),
                     shell_quote({results}));
}

struct Cell {
  int version = 0;
  CellEnvelope envelope;
  std::string name;  // "pg15-mem512mi-cpu1000m"
  std::string server_image;
};

std::string resources_yaml(const CellEnvelope& e, int indent) {
  if (e.memory_bytes == 0 && e.cpus == 0) return "";
  std::string pad(static_cast<std::size_t>(indent), ' ');
  std::string values;
  if (e.memory_bytes) values += fmt::format("memory: {}", q(memory_quantity(e.memory_bytes)));
  if (e.cpus > 0) {
    if (!values.empty()) values += ", ";
    values += fmt::format("cpu: {}", q(cpu_quantity(e.cpus)));
  }
  return fmt::format("{0}resources:\n{0}  requests: {{{1}}}\n{0}  limits: {{{1}}}\n", pad, values);
}

std::string job_yaml(const JobsArgs& a, const std::string& matrix, const Cell& cell,
                     const std::string& scenario_path, bool scenario_in_config_map) {
  const std::string job = dns_label(fmt::format("pgslow-{}-{}", matrix, cell.name));
  const std::string out = "/home/pgslow/work/results";
  std::vector<std::string> run{"pgslow",
                               "--workdir",
                               "/home/pgslow/work/pgslow",
                               "run",
                               scenario_path,
                               "--conninfo",
                               "host=127.0.0.1 port=5432 user=postgres dbname=postgres",
                               "--restart-command",
                               fmt::format("timeout 60 {} USR1", kSignalHelper),
                               "--allow-changes",
                               "--out",
                               out};
  if (a.duration) {
    run.push_back("--duration");
    run.push_back(fmt::format("{}", *a.duration));
  }
  if (a.warmup) {
    run.push_back("--warmup");
    run.push_back(fmt::format("{}", *a.warmup));
  }
  if (a.repeats) {
    run.push_back("--repeats");
    run.push_back(std::to_string(*a.repeats));
  }
  const std::string ns = a.ns.empty() ? "" : fmt::format("\n  namespace: {}", q(a.ns));
  const std::string labels =
      fmt::format("{{app.kubernetes.io/name: pgslow, pgslow/matrix: {}, pgslow/cell: {}}}",
                  q(matrix), q(cell.name));
  std::string scenario_mount, scenario_volume;
  if (scenario_in_config_map) {
    scenario_mount = fmt::format(
        "\n            - {{name: scenario, mountPath: {}, readOnly: true}}", q(kScenarioDir));
    scenario_volume = fmt::format("\n        - name: scenario\n          configMap: {{name: {}}}",
                                  q(dns_label("pgslow-scenario-" + matrix)));
  }
  return fmt::format(
      R"YAML(# Cell {cell} of the matrix {matrix}: PostgreSQL {version}, envelope {envelope}.
# The pod runs the server (`db`, {server_image}) and pgslow side by side; pgslow writes its
# results to {results}/{cell} on the claim {claim}.
apiVersion: batch/v1
kind: Job
metadata:
  name: {job}{ns}
  labels: {labels}
spec:
  backoffLimit: 0
  activeDeadlineSeconds: {deadline}
  template:
    metadata:
      labels: {labels}
    spec:
      restartPolicy: Never
      automountServiceAccountToken: false
      securityContext: {{fsGroup: {pgslow_uid}}}
      containers:
        - name: db
          image: {server_image_q}
          command:
            - /bin/sh
            - -c
            - {db_script}            - db
            - "{version}"
          securityContext: {{runAsUser: {server_uid}, runAsGroup: {server_uid}, runAsNonRoot: true, allowPrivilegeEscalation: false}}
{resources}          volumeMounts:
            - {{name: shm, mountPath: /dev/shm}}
        - name: pgslow
          image: {image}
          command:
            - /bin/sh
            - -c
            - {pgslow_script}          securityContext: {{runAsUser: {pgslow_uid}, runAsGroup: {pgslow_uid}, runAsNonRoot: true, allowPrivilegeEscalation: false}}
          volumeMounts:
            - {{name: results, mountPath: {results}}}{scenario_mount}
      volumes:
        - name: shm
          emptyDir: {{medium: Memory, sizeLimit: 256Mi}}
        - name: results
          persistentVolumeClaim: {{claimName: {claim}}}{scenario_volume}
)YAML",
      fmt::arg("cell", cell.name), fmt::arg("matrix", matrix), fmt::arg("version", cell.version),
      fmt::arg("envelope", cell.envelope.label), fmt::arg("server_image", cell.server_image),
      fmt::arg("server_image_q", q(cell.server_image)), fmt::arg("results", kResultsDir),
      fmt::arg("claim", a.claim), fmt::arg("job", q(job)), fmt::arg("ns", ns),
      fmt::arg("labels", labels), fmt::arg("deadline", a.deadline_min * 60),
      fmt::arg("pgslow_uid", kPgslowUid), fmt::arg("server_uid", kServerUid),
      fmt::arg("db_script", literal(db_script(), 14)),
      fmt::arg("resources", resources_yaml(cell.envelope, 10)), fmt::arg("image", q(a.image)),
      fmt::arg("pgslow_script",
               literal(pgslow_script(run, out, fmt::format("{}/{}", kResultsDir, cell.name)), 14)),
      fmt::arg("scenario_mount", scenario_mount), fmt::arg("scenario_volume", scenario_volume));
}

// The results claim, and the scenario as a ConfigMap when it is not in the image's library.
std::string common_yaml(const JobsArgs& a, const std::string& matrix,
                        const std::optional<std::pair<std::string, std::string>>& scenario_file) {
  const std::string ns = a.ns.empty() ? "" : fmt::format(", namespace: {}", q(a.ns));
  std::string out = fmt::format(
      R"YAML(# What every Job of the matrix {0} shares: the claim its results go to (one folder per
# cell). ReadWriteOnce: run the Jobs one after another (run.sh), which also keeps the cells
# from measuring side by side on one node.
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {1}{2}}}
spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}}}
)YAML",
      matrix, a.claim, ns);
  if (scenario_file) {
    out += fmt::format(R"YAML(---
# The scenario, {0}: not in the image's library, so the Jobs mount it from here.
apiVersion: v1
kind: ConfigMap
metadata: {{name: {1}{2}}}
data:
  {3}: {4}
)YAML",
                       matrix, q(dns_label("pgslow-scenario-" + matrix)), ns,
                       q(scenario_file->first), literal(scenario_file->second, 4));
  }
  return out;
}

// A pod that mounts the results claim, for `kubectl cp` (run.sh).
std::string collect_yaml(const JobsArgs& a) {
  const std::string ns = a.ns.empty() ? "" : fmt::format(", namespace: {}", q(a.ns));
  return fmt::format(
      R"YAML(# Mounts the results claim so that run.sh can copy it out (kubectl cp); deleted after.
apiVersion: v1
kind: Pod
metadata: {{name: pgslow-results{0}}}
spec:
  restartPolicy: Never
  automountServiceAccountToken: false
  securityContext: {{runAsUser: {1}, runAsGroup: {1}, fsGroup: {1}}}
  containers:
    - name: results
      image: {2}
      command: [sleep, "3600"]
      volumeMounts: [{{name: results, mountPath: {3}}}]
  volumes:
    - name: results
      persistentVolumeClaim: {{claimName: {4}}}
)YAML",
      ns, kPgslowUid, q(a.image), kResultsDir, q(a.claim));
}

// Applies the Jobs one at a time, then copies the results folder out of the claim. Not run
// where pgslow is developed (no cluster there): docs/server.md says what is tested.
std::string run_sh(const JobsArgs& a, const std::vector<std::string>& jobs) {
  const std::string kubectl = a.ns.empty() ? "kubectl" : "kubectl -n " + shell_quote({a.ns});
  return fmt::format(R"SH(#!/bin/sh
# Runs the matrix's Jobs on the cluster kubectl points at, one after another (cells measured at
# the same time would share a node), then copies every cell's results into ./results:
#   pgslow compare results/CELL_A/report.json results/CELL_B/report.json
set -eu
cd "$(dirname "$0")"
{0} apply -f common.yaml
for job in {1}; do
  {0} apply -f "$job.yaml"
  if ! {0} wait --for=condition=complete --timeout={2}s "job/$job"; then
    {0} logs "job/$job" --all-containers --tail=40 || true
    echo "$job did not complete" >&2
    exit 1
  fi
done
{0} apply -f collect.yaml
{0} wait --for=condition=Ready --timeout=300s pod/pgslow-results
{0} cp pgslow-results:{3} ./results
{0} delete -f collect.yaml --wait=false
echo "results in $(pwd)/results"
)SH",
                     kubectl, join(jobs, " "), a.deadline_min * 60, kResultsDir);
}

std::string server_image_for(const std::vector<std::string>& images, int version) {
  std::string pattern = "docker.io/library/postgres:{version}";
  for (const std::string& entry : images) {
    const std::size_t eq = entry.find('=');
    if (eq == std::string::npos) {
      pattern = entry;
    } else if (server::parse_major_version(entry.substr(0, eq)) == version) {
      return entry.substr(eq + 1);
    }
  }
  std::string out;
  const std::string key = "{version}";
  for (std::size_t i = 0; i < pattern.size();) {
    if (pattern.compare(i, key.size(), key) == 0) {
      out += std::to_string(version);
      i += key.size();
    } else {
      out += pattern[i++];
    }
  }
  return out;
}

void write_jobs(const JobsArgs& a) {
  const fs::path file = scenario::resolve_scenario(a.scenario);
  const scenario::Scenario sc = scenario::load_scenario(file);
  if (!sc.target.envelope.empty() || sc.sweep.envelope_dimension()) {
    throw InputError(fmt::format(
        "{}: the scenario sets the server's envelope (server: or a sweep of server.memory/cpus); "
        "in a Job the envelope is the db container's limits: give it with --envelopes instead",
        file.string()));
  }
  // A scenario of the library is in the image too; a file of the user's goes in a ConfigMap.
  std::optional<std::pair<std::string, std::string>> scenario_file;
  std::string scenario_path = a.scenario;
  if (names_a_file(a.scenario) && fs::is_regular_file(a.scenario)) {
    const std::string key = file.filename().string();
    scenario_file = std::make_pair(key, read_trusted_file(file, "the scenario"));
    scenario_path = fmt::format("{}/{}", kScenarioDir, key);
  }
  if (dns_label(a.claim) != a.claim) {
    throw InputError(fmt::format(
        "--results-claim {}: a claim's name is lowercase letters, digits and '-'", a.claim));
  }
  const std::string matrix = dns_label(sc.name);
  if (matrix.empty()) throw InputError("the scenario's name gives no Kubernetes name");

  std::vector<int> versions;
  for (const std::string& v : a.versions) {
    const int major = server::parse_major_version(v);
    if (std::find(versions.begin(), versions.end(), major) != versions.end())
      throw InputError(fmt::format("--versions names PostgreSQL {} twice", major));
    versions.push_back(major);
  }
  std::vector<CellEnvelope> envelopes;
  for (const std::string& text : a.envelopes) {
    CellEnvelope e = parse_cell_envelope(text);
    name_envelope(e);
    for (const CellEnvelope& other : envelopes) {
      if (other.label == e.label)
        throw InputError(fmt::format("--envelopes names the envelope {} twice", e.label));
    }
    envelopes.push_back(e);
  }
  if (envelopes.empty()) envelopes.push_back(CellEnvelope{0, 0, "unlimited"});
  for (const std::string& entry : a.server_images) {
    const std::size_t eq = entry.find('=');
    if (eq != std::string::npos) {
      const int major = server::parse_major_version(entry.substr(0, eq));
      if (std::find(versions.begin(), versions.end(), major) == versions.end())
        throw InputError(
            fmt::format("--server-image {}: PostgreSQL {} is not in --versions", entry, major));
    }
  }

  const fs::path out = a.out;
  create_output_folders(out, "the Jobs' folder");
  std::vector<std::string> jobs;
  std::string cells;
  for (int version : versions) {
    for (const CellEnvelope& e : envelopes) {
      Cell cell{version, e, fmt::format("pg{}-{}", version, e.label),
                server_image_for(a.server_images, version)};
      const std::string job = dns_label(fmt::format("pgslow-{}-{}", matrix, cell.name));
      write_file_durably(out / (job + ".yaml"),
                         job_yaml(a, matrix, cell, scenario_path, scenario_file.has_value()), 0644);
      jobs.push_back(job);
      cells += fmt::format("  {:<48} PostgreSQL {} ({}), envelope {}\n", job + ".yaml", version,
                           cell.server_image, e.label);
    }
  }
  write_file_durably(out / "common.yaml", common_yaml(a, matrix, scenario_file), 0644);
  write_file_durably(out / "collect.yaml", collect_yaml(a), 0644);
  write_file_durably(out / "run.sh", run_sh(a, jobs), 0755);
  std::cout << fmt::format(
      "Wrote {} Jobs ({} versions × {} envelopes) of {} in {}:\n{}"
      "  common.yaml                                      the results claim{}\n"
      "  run.sh                                           applies them one after another, copies "
      "the "
      "results into {}/results (with collect.yaml)\n"
      "Then: pgslow compare {}/results/CELL_A/report.json {}/results/CELL_B/report.json\n",
      jobs.size(), versions.size(), envelopes.size(), sc.name, out.string(), cells,
      scenario_file ? " and the scenario (a ConfigMap)" : "", out.string(), out.string(),
      out.string());
}

}  // namespace

void add_jobs_commands(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<JobsArgs>();
  auto* cmd = app.add_subcommand(
      "jobs",
      "write a scenario's version × envelope matrix as Kubernetes Jobs, one per cell: the "
      "server beside pgslow in each pod, results to one volume for `compare`");
  cmd->add_option("scenario", a->scenario, "scenario file or name (scenarios/NAME.yaml)")
      ->required();
  cmd->add_option("--versions", a->versions,
                  "the PostgreSQL major versions of the matrix (e.g. 15,16)")
      ->delimiter(',')
      ->required();
  cmd->add_option("--envelopes", a->envelopes,
                  "the server's envelopes, each MEMORY/CPUS (512MB/1.5), either alone (1GB, 2) "
                  "or unlimited: the db container's limits (default: unlimited)")
      ->delimiter(',');
  cmd->add_option("--image", a->image, "pgslow's image, as the cluster pulls it (make image)")
      ->required();
  cmd->add_option("--server-image", a->server_images,
                  "the server's image: a name with {version} in it (default "
                  "docker.io/library/postgres:{version}), or VERSION=IMAGE for one version "
                  "(15=IMG: pgslow's image holds PostgreSQL 15); repeatable")
      ->delimiter(',');
  cmd->add_option("--out,-o", a->out, "the folder the manifests go to")->required();
  cmd->add_option("--results-claim", a->claim,
                  "the PersistentVolumeClaim the results go to (default pgslow-results)");
  cmd->add_option("--namespace,-n", a->ns, "the namespace of every object (default: kubectl's)");
  cmd->add_option("--duration", a->duration, "seconds per measured run (run --duration)");
  cmd->add_option("--warmup", a->warmup, "warm-up seconds (run --warmup)");
  cmd->add_option("--repeats", a->repeats, "measured runs per stage (run --repeats)");
  cmd->add_option("--deadline", a->deadline_min,
                  "minutes a Job may run before Kubernetes stops it (default 360)")
      ->check(CLI::Range(1, 10080));
  cmd->callback([a, &ctx] {
    (void)ctx;
    write_jobs(*a);
  });
}

}  // namespace pgslow::cli
