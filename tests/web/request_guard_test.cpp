#include "web/request_guard.hpp"

#include <gtest/gtest.h>

#include "base/random_id.hpp"

namespace agentty::web {
namespace {
namespace http = boost::beast::http;

const std::string kSecret = "5f0e" + std::string(60, 'a');

HttpRequest request(std::string host, std::optional<std::string> origin = std::nullopt) {
  HttpRequest r{http::verb::get, "/api/executions", 11};
  r.set(http::field::host, host);
  if (origin) r.set(http::field::origin, *origin);
  return r;
}

RequestGuard guard() {
  return RequestGuard(kSecret, 7681, "127.0.0.1");
}

TEST(RequestGuard, AcceptsLoopbackHostsWithThePort) {
  auto g = guard();
  for (std::string host : {"127.0.0.1:7681", "localhost:7681", "LOCALHOST:7681", "[::1]:7681"}) {
    EXPECT_FALSE(g.check_site(request(host))) << host;
  }
}

TEST(RequestGuard, RefusesOtherHostsAndPorts) {
  auto g = guard();
  for (std::string host : {"evil.example:7681", "127.0.0.1:7682", "127.0.0.1", "localhost",
                           "attacker.test", "", "127.0.0.1:7681.evil", "[::1]:80"}) {
    auto refused = g.check_site(request(host));
    ASSERT_TRUE(refused) << host;
    EXPECT_EQ(refused->check, "Host");
    EXPECT_EQ(refused->status, http::status::forbidden);
  }
}

// Two Host headers, ours first: the guard read the first and accepted it,
// while a proxy in front may route by the other.
TEST(RequestGuard, RefusesTwoHostOrTwoOriginHeaders) {
  auto g = guard();
  auto two_hosts = request("127.0.0.1:7681");
  two_hosts.insert(http::field::host, "evil.example");
  auto refused = g.check_site(two_hosts);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->check, "Host");
  auto two_origins = request("127.0.0.1:7681", "http://127.0.0.1:7681");
  two_origins.insert(http::field::origin, "http://evil.example");
  EXPECT_TRUE(g.check_site(two_origins));
}

TEST(RequestGuard, ASpecificListenAddressIsAlsoAnAllowedHost) {
  RequestGuard g(kSecret, 9000, "192.168.7.5");
  EXPECT_FALSE(g.check_site(request("192.168.7.5:9000")));
  EXPECT_TRUE(g.check_site(request("192.168.7.6:9000")));
  // A wildcard listen address adds nothing: names cannot be checked against it.
  RequestGuard wildcard(kSecret, 9000, "0.0.0.0");
  EXPECT_TRUE(wildcard.check_site(request("0.0.0.0:9000")));
  EXPECT_FALSE(wildcard.check_site(request("127.0.0.1:9000")));
}

TEST(RequestGuard, OriginMustBeThisServer) {
  auto g = guard();
  EXPECT_FALSE(g.check_site(request("127.0.0.1:7681", "http://127.0.0.1:7681")));
  EXPECT_FALSE(g.check_site(request("localhost:7681", "http://localhost:7681")));
  for (std::string origin :
       {"http://evil.example", "http://127.0.0.1:7682", "https://127.0.0.1:7681", "null",
        "http://localhost:7681", "http://127.0.0.1:7681.evil.test"}) {
    auto refused = g.check_site(request("127.0.0.1:7681", origin));
    ASSERT_TRUE(refused) << origin;
    EXPECT_EQ(refused->check, "Origin");
    EXPECT_EQ(refused->status, http::status::forbidden);
  }
}

TEST(RequestGuard, SecretFromAnyOfTheThreeCarriers) {
  auto g = guard();
  auto r = request("127.0.0.1:7681");
  r.set("X-Agentty-Token", kSecret);
  EXPECT_FALSE(g.check_secret(r));

  r = request("127.0.0.1:7681");
  r.set(http::field::authorization, "Bearer " + kSecret);
  EXPECT_FALSE(g.check_secret(r));

  r = request("127.0.0.1:7681");
  r.set(http::field::sec_websocket_protocol, "agentty.v1, agentty-token." + kSecret);
  EXPECT_FALSE(g.check_secret(r));
}

TEST(RequestGuard, MissingOrWrongSecretIsA404) {
  auto g = guard();
  std::vector<HttpRequest> requests;
  requests.push_back(request("127.0.0.1:7681"));
  auto wrong = request("127.0.0.1:7681");
  wrong.set("X-Agentty-Token", kSecret.substr(0, 63) + "b");
  requests.push_back(wrong);
  auto prefix = request("127.0.0.1:7681");
  prefix.set(http::field::authorization, "Bearer " + kSecret.substr(0, 10));
  requests.push_back(prefix);
  auto longer = request("127.0.0.1:7681");
  longer.set(http::field::sec_websocket_protocol, "agentty.v1, agentty-token." + kSecret + "0");
  requests.push_back(longer);
  auto empty = request("127.0.0.1:7681");
  empty.set(http::field::sec_websocket_protocol, "agentty.v1, agentty-token.");
  requests.push_back(empty);
  auto basic = request("127.0.0.1:7681");
  basic.set(http::field::authorization, "Basic " + kSecret);
  requests.push_back(basic);
  for (const auto& r : requests) {
    auto refused = g.check_secret(r);
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, http::status::not_found);
    EXPECT_EQ(refused->check, "secret");
    EXPECT_EQ(refused->detail.find(kSecret), std::string::npos);
  }
}

TEST(RequestGuard, ComparesSecretsThroughTheConstantTimeCompare) {
  int calls = 0;
  RequestGuard g(kSecret, 7681, "127.0.0.1", [&](const std::string& a, const std::string& b) {
    ++calls;
    return secure_equals(a, b);
  });
  auto r = request("127.0.0.1:7681");
  r.set("X-Agentty-Token", kSecret);
  EXPECT_FALSE(g.check_secret(r));
  r.set("X-Agentty-Token", "nope");
  EXPECT_TRUE(g.check_secret(r));
  EXPECT_EQ(calls, 2);
  // The default compare is agentty::secure_equals (CRYPTO_memcmp).
  EXPECT_TRUE(secure_equals(kSecret, kSecret));
  EXPECT_FALSE(secure_equals(kSecret, kSecret.substr(1)));
}

TEST(RequestGuard, SubprotocolParsing) {
  EXPECT_EQ(secret_from_subprotocols("agentty.v1, agentty-token.abc"), "abc");
  EXPECT_EQ(secret_from_subprotocols("agentty-token.abc,agentty.v1"), "abc");
  EXPECT_FALSE(secret_from_subprotocols("agentty.v1"));
  EXPECT_FALSE(secret_from_subprotocols("xagentty-token.abc"));
  EXPECT_TRUE(subprotocol_offered("chat, agentty.v1", "agentty.v1"));
  EXPECT_FALSE(subprotocol_offered("agentty.v10", "agentty.v1"));
  EXPECT_FALSE(subprotocol_offered("", "agentty.v1"));
}

TEST(RequestGuard, SecurityHeadersAllowNoExternalSource) {
  http::fields fields;
  add_security_headers(fields, "127.0.0.1:7681");
  std::string csp(fields["Content-Security-Policy"]);
  EXPECT_NE(csp.find("default-src 'self'"), std::string::npos);
  EXPECT_NE(csp.find("connect-src 'self' ws://127.0.0.1:7681;"), std::string::npos);
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos);
  EXPECT_EQ(csp.find("http"), std::string::npos);
  EXPECT_EQ(csp.find('*'), std::string::npos);
  EXPECT_EQ(fields["X-Content-Type-Options"], "nosniff");
}

}  // namespace
}  // namespace agentty::web
