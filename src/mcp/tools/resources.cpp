// MCP resources: each retained execution's output and screen as text, so a
// person can attach a build log to the conversation in a client that lists
// resources (Claude Code's @ mentions) and such clients can read them. The
// tools remain the agent's way in: these are read-only views of the same data.
#include "mcp/schema.hpp"
#include "mcp/tools/common.hpp"
#include "session/display_command.hpp"

namespace agentty::mcp::tools {

namespace {

constexpr std::string_view kScheme = "agentty://executions/";

std::string output_uri(const std::string& id) {
  return std::string(kScheme) + id + "/output";
}

// What a listing shows of a command: one line, not too long.
std::string one_line(std::string text) {
  constexpr std::size_t kMax = 80;
  for (char& c : text)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (text.size() > kMax) text = text.substr(0, kMax - 3) + "...";
  return text;
}

json list(ToolContext& ctx) {
  json resources = json::array();
  auto executions = ctx.registry.list();
  for (auto it = executions.rbegin(); it != executions.rend(); ++it) {  // newest first
    auto& execution = **it;
    const auto& log = execution.log();
    resources.push_back({
        {"uri", output_uri(execution.id())},
        {"name", execution.id()},
        // The name given at execute/open first, then what ps lists ("bash
        // (session)", not the shell's path).
        {"title",
         one_line(execution.spec().name.empty() ? session::display_command(execution)
                                                : execution.redacted(execution.spec().name) + ": " +
                                                      session::display_command(execution))},
        {"description", "Output of execution " + execution.id() + " (" +
                            session::to_string(execution.status()) + ", " +
                            std::to_string(log.latest_seq() - 1) +
                            " bytes) as text; its screen is at .../screen."},
        {"mimeType", "text/plain"},
    });
  }
  return {{"resources", resources}};
}

json templates() {
  auto entry = [](std::string what, std::string description) {
    return json{{"uriTemplate", std::string(kScheme) + "{execution_id}/" + what},
                {"name", "execution-" + what},
                {"description", std::move(description)},
                {"mimeType", "text/plain"}};
  };
  return {{"resourceTemplates",
           json::array({entry("output",
                              "An execution's output as text (the newest part, up to the "
                              "server's response cap, when it is longer)."),
                        entry("screen", "What an execution's terminal shows now.")})}};
}

// The newest output up to the server's response cap, as the agent's text view.
std::string output_text(ToolContext& ctx, session::Execution& execution) {
  const auto& log = execution.log();
  auto page =
      log.tail_lines(std::numeric_limits<std::size_t>::max() / 2, ctx.config.max_output_bytes);
  // The cap cut the page mid-line ("30" of "1830"): it starts at the next
  // whole line, unless that would leave nothing.
  if (page.start_seq > 1 && log.copy_range(page.start_seq - 1, page.start_seq) != "\n") {
    const auto line_end = page.bytes.find('\n');
    if (line_end != std::string::npos && line_end + 1 < page.bytes.size()) {
      page.bytes.erase(0, line_end + 1);
      page.start_seq += line_end + 1;
    }
  }
  ReadRequest request;
  std::string text = rendered(execution, request, page.bytes, page.start_seq);
  if (page.start_seq > 1) {
    text = "[the first " + std::to_string(page.start_seq - 1) +
           " bytes are left out: read with execution_id=\"" + execution.id() +
           "\" and since_seq=1, or explore, for them]\n" + text;
  }
  return text;
}

Expected<json> read(ToolContext& ctx, const std::string& uri) {
  auto not_found = [&](const std::string& why) -> Expected<json> {
    return make_error("Resource not found: " + name_for_message(uri) + " (" + why + ")");
  };
  if (!uri.starts_with(kScheme))
    return not_found("agentty's resources start with agentty://executions/");
  std::string rest = uri.substr(kScheme.size());
  auto slash = rest.find('/');
  if (slash == std::string::npos) return not_found("give .../ID/output or .../ID/screen");
  std::string id = rest.substr(0, slash);
  std::string what = rest.substr(slash + 1);
  auto execution = ctx.registry.find(id);
  if (!execution) return not_found("no execution " + id + "; resources/list names them");
  std::string text;
  if (what == "output") {
    text = output_text(ctx, *execution);
  } else if (what == "screen") {
    for (const auto& line : execution->screen().snapshot().lines) text += line + "\n";
  } else {
    return not_found("\"" + what + "\" is not a view: output or screen");
  }
  return json{
      {"contents",
       json::array({{{"uri", uri}, {"mimeType", "text/plain"}, {"text", std::move(text)}}})}};
}

}  // namespace

ResourceHandlers make_resource_handlers() {
  return {list, read, templates};
}

}  // namespace agentty::mcp::tools
