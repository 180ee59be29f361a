#include "mcp/tools/argument_length.hpp"

#include <unistd.h>

namespace agentty::mcp::tools {

std::size_t longest_program_argument() {
  // The kernel's MAX_ARG_STRLEN is 32 pages and counts the terminating NUL.
  const long page = ::sysconf(_SC_PAGESIZE);
  return static_cast<std::size_t>(page > 0 ? page : 4096) * 32 - 1;
}

std::optional<std::string> argument_length_problem(const json& args,
                                                   const session::ExecutionSpec& spec) {
  if (!spec.host.empty()) return std::nullopt;  // the host's own limits apply there
  const std::size_t limit = longest_program_argument();
  for (std::size_t i = 0; i < spec.argv.size(); ++i) {
    const std::size_t bytes = spec.argv[i].size();
    if (bytes <= limit) continue;
    const std::string too_long = std::to_string(bytes) +
                                 " bytes, more than Linux lets one program argument hold (" +
                                 std::to_string(limit) + " bytes, MAX_ARG_STRLEN)";
    if (args.contains("argv")) {
      return "argv[" + std::to_string(i) + "]: " + too_long +
             ". Nothing was started. Pass long text through stdin (the program reads it as its "
             "standard input, up to 1 MiB) or a file the program reads, not as an argument.";
    }
    return "command: " + too_long +
           ", and bash -c gets the command as one. Nothing was started. Send long text another "
           "way: as script (run from a file, up to 1 MiB), as stdin (e.g. command=\"cat > "
           "notes.txt\" with the text in stdin), or with execute(session=ID) in an open "
           "session, which types it into the shell.";
  }
  return std::nullopt;
}

}  // namespace agentty::mcp::tools
