// SPDX-License-Identifier: Apache-2.0
// prewarm-runtime env --root DIR [--format sh|json]
// The variables that point an application at the installed caches:
//   eval "$(prewarm-runtime env --root /var/cache/prewarm)"
#include "base/json_schema.hpp"
#include "cli/runtime_commands.hpp"
#include "install/application_environment.hpp"

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace prewarm::runtime_cli {

namespace {

struct EnvCommand
{
  std::string root;
  std::string format = "sh";
  std::string paths = "version";

  Status run() const
  {
    // Holds nothing past its exit (install/application_environment.hpp says what that means).
    PW_ASSIGN(const auto env, install::environment(root, install::VersionHold::none, exported_paths(paths)));
    const auto& settings = env.settings;
    if (format == "json") {
      nlohmann::json variables = nlohmann::json::object();
      for (const auto& s : settings) {
        variables[s.name] = s.value;
      }
      const nlohmann::json out{{k_json_schema_version_key, k_json_schema_version}, {"environment", variables}};
      std::cout << out.dump(2) << "\n";
    } else {
      std::cout << install::format_shell_exports(settings);
    }
    return {};
  }
};

} // namespace

void
add_paths_option(CLI::App& command, std::string& paths)
{
  command
    .add_option("--paths", paths,
                "version: the installed version's own directories (one bundle for the application's life); root: "
                "ROOT/<kind>, the paths a `prewarm build --capture-root ROOT` saw (path-keyed caches hit; a later "
                "install's switch shows through)")
    ->check(CLI::IsMember({"version", "root"}))
    ->capture_default_str();
}

install::ExportedPaths
exported_paths(const std::string& paths)
{
  return paths == "root" ? install::ExportedPaths::root_links : install::ExportedPaths::version;
}

void
add_env_command(CLI::App& app, Action& action)
{
  auto command = std::make_shared<EnvCommand>();
  auto* sub = app.add_subcommand("env", "print the environment that points applications at the installed caches");
  sub->add_option("--root", command->root, "cache root")->required();
  sub->add_option("--format", command->format, "sh: export lines for eval; json: an object")
    ->check(CLI::IsMember({"sh", "json"}))
    ->capture_default_str();
  add_paths_option(*sub, command->paths);
  sub->callback([command, &action] { action = [command] { return command->run(); }; });
}

} // namespace prewarm::runtime_cli
