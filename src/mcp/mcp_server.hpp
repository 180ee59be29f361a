// McpServer: the MCP protocol over any line transport (stdio in practice).
//
// handle_line() takes one line: a JSON-RPC message, or a batch of them (a
// JSON array) in a session that negotiated MCP 2025-03-26, the one version
// with batches. Responses leave through a ResponseFunnel (the order of
// answers for one id; a batch's one array line), notifications and requests
// to the client straight through the `send` callback, one serialized line
// each. Tool calls run as coroutines on the I/O loop, so a blocking `wait`
// never stops the server from reading `ping` or `notifications/cancelled`.
// A cancelled call stops at once and sends no response (the process it was
// watching keeps running).
//
// Lifecycle: until `initialize` has been answered only `ping` is served
// (-32600 otherwise). Another `initialize` is answered like the first, as
// the official SDK servers do (a proxy sharing one server among clients
// sends one per client); the last one's version holds from then on.
//
// Request ids: a client matches answers to requests by id alone, so a request
// that reuses the id of one not yet answered is refused (-32600, naming the
// id) and its answer is held back until that request's answer (or its
// cancellation) has gone out. Answered at once, the refusal would complete
// the earlier call with an error that is not its own (the SDK matched it so).
// Every answer for that id waits, whatever produced it (an unparseable line
// carrying the id, a line over the size cap).
//
// Requests to the client: a handoff becomes a URL elicitation in the client
// when it declared that capability (handoff_elicitations.hpp), from its
// notifications/initialized on (MCP: no server requests before); the answers
// come back as responses, matched by ClientRequests.
//
// Threading: everything on the one I/O event loop.
#pragma once

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "mcp/client_requests.hpp"
#include "mcp/handoff_elicitations.hpp"
#include "mcp/json_rpc.hpp"
#include "mcp/response_funnel.hpp"
#include "mcp/tool.hpp"

namespace agentty::mcp {

inline constexpr const char* kLatestProtocolVersion = "2025-11-25";
// The one protocol version whose base protocol has JSON-RPC batches.
inline constexpr const char* kBatchProtocolVersion = "2025-03-26";
bool is_supported_protocol_version(const std::string& version);

class McpServer {
 public:
  // Tool calls in progress at most; past it a call is refused (isError).
  static constexpr std::size_t kMaxCallsInFlight = 1000;

  struct Hooks {
    std::function<void(std::string line)> send;
    std::function<std::string(const std::string& execution_id)> terminal_url;
    std::function<void(const json& record)> audit;  // tool calls, client elicitations
  };

  McpServer(boost::asio::io_context& io, session::Registry& registry, ToolConfig config,
            session::Policy* policy, Hooks hooks);
  ~McpServer();

  void handle_line(std::string_view line);
  // Replies to a message the transport refused (e.g. a line over the size
  // cap); `id` is the request's, or null when it could not be found.
  void reject(const json& id, int code, const std::string& message);
  // Sends notifications/message when `level` is at or above the client's level.
  void log(const std::string& level, const std::string& message);
  std::size_t calls_in_flight() const { return in_flight_.size(); }
  const std::vector<ToolDefinition>& tools() const { return tools_; }

 private:
  void handle_batch(std::vector<Message> messages);
  // One message; its response goes into `batch` (null: a line of its own).
  void handle_message(Message message, const ResponseFunnel::BatchHandle& batch);
  void handle_request(Request request, const ResponseFunnel::BatchHandle& batch);
  void dispatch_request(Request request);
  void handle_notification(const Notification& notification);
  void handle_resources(const Request& request);
  void call_tool(Request request);
  const ToolDefinition* find_tool(const std::string& name) const;
  // Sends notifications/progress for a call whose request asked for them
  // (a progressToken in _meta), until it is answered; empty otherwise.
  std::function<void(double, const std::string&)> progress_sender(const json& params,
                                                                  std::shared_ptr<bool> responded);
  json initialize(const json& params);
  json list_tools() const;
  // A notification or a request to the client.
  void send(const json& message);
  // The response (result or error) to the request being carried out with `id`.
  void answer_result(const json& id, json result);
  void answer_error(const json& id, int code, const std::string& message);
  void audit_call(const std::string& tool, const json& args, const ToolResult& result);
  ToolContext tool_context();

  boost::asio::io_context& io_;
  session::Registry& registry_;
  ToolConfig config_;
  session::Policy* policy_;
  Hooks hooks_;
  std::vector<ToolDefinition> tools_;
  ResourceHandlers resources_;
  std::map<std::string, std::shared_ptr<boost::asio::cancellation_signal>>
      in_flight_;  // by request id (its JSON text)
  ResponseFunnel responses_;
  std::string protocol_version_;               // negotiated by initialize; empty before
  bool client_takes_url_elicitation_ = false;  // declared in initialize
  int log_level_ = 1;                          // index into the syslog-style level list; "info"
  ClientRequests client_requests_;
  HandoffElicitations handoff_elicitations_;  // after client_requests_: it uses them
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace agentty::mcp
