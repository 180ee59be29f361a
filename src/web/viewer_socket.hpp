// ViewerSocket: the server side of one viewer's WebSocket (a terminal page,
// `agentty attach`, a dashboard): what every viewer does with its socket,
// written once.
//
// start() completes the upgrade the request guard already checked (agentty's
// subprotocol echoed, keep-alive pings, the message size limit) and registers
// the connection so the server's stop() can close it. A read is always
// pending, so pings, pongs and close frames are processed; each message goes
// to on_message(). At most one write is in flight: write() sends one message
// gathered from shared frames (no copies) and on_write_done() tells the
// subclass it may send the next; what to send next (a bounded queue, the
// newest list only) is the subclass's business. close() ends the connection
// with a code and a reason the peer is told. finish() runs once, whatever
// ended the socket (peer close, error, shutdown, close()): on_finish() does
// the subclass's cleanup, then the socket is closed. A base destructor cannot
// call a subclass's on_finish(), so subclasses call finish() from theirs.
//
// Beast-style do_x/on_x callbacks holding shared_from_this(). Threading: the
// one I/O event loop (no strand needed: the loop has one thread).
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "web/connection.hpp"
#include "web/request_guard.hpp"

namespace agentty::web {

class WebContext;

class ViewerSocket : public Connection {
 public:
  using Frame = std::shared_ptr<const std::string>;

  // Completes the upgrade `request` asked for; on_open() follows on success.
  void start(HttpRequest request);
  // Closes the socket now; pending operations complete with an error.
  void shutdown() override;
  // Ends the connection with a close frame carrying `code` and `reason` (what
  // happened, for the person), then finish(); a peer that does not take the
  // frame within a few seconds (it does not read) is cut off without it.
  void close(std::uint16_t code, const std::string& reason);

 protected:
  ViewerSocket(boost::asio::ip::tcp::socket&& socket, std::shared_ptr<WebContext> context,
               std::string peer);

  virtual void on_open() = 0;
  virtual void on_message(std::string message, bool text) = 0;
  virtual void on_write_done() = 0;
  virtual void on_finish() = 0;

  // Sends `frames` back to back as one message; only when !writing().
  void write(std::vector<Frame> frames, bool binary);
  bool writing() const { return !writing_.empty(); }
  bool open() const { return open_ && !finished_ && !closing_; }
  bool finished() const { return finished_; }
  void finish();
  boost::asio::any_io_executor executor() { return ws_.get_executor(); }

  std::shared_ptr<WebContext> context_;
  std::string peer_;

 private:
  void on_accept(boost::beast::error_code ec);
  void do_read();
  void on_read(boost::beast::error_code ec);
  void on_write(boost::beast::error_code ec);

  boost::beast::websocket::stream<boost::beast::tcp_stream> ws_;
  boost::asio::steady_timer close_timer_;  // bounds close()
  boost::beast::flat_buffer buffer_;
  std::vector<Frame> writing_;  // the message in flight, kept alive until written
  bool open_ = false;
  bool closing_ = false;  // close() sent or is sending the close frame
  bool finished_ = false;
};

}  // namespace agentty::web
