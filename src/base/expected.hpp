// Expected<T>: a value or an error message a person can act on.
// Expected<T, E>: the same with a richer error E (any type with a `message`),
// for callers that must tell failures apart (e.g. SshError's kind).
//
// Used at every boundary where failure is ordinary (a bad cwd, a spawn that
// fails, an unknown execution): callers must look before they use the value.
// Broken invariants are not errors of this kind; they abort.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace agentty {

struct Error {
  std::string message;
};

inline Error make_error(std::string message) {
  return Error{std::move(message)};
}

template <class T, class E = Error>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}
  Expected(E error) : state_(std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(state_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

  const std::string& error() const { return failure().message; }
  const E& failure() const {
    assert(!ok());
    return std::get<1>(state_);
  }

 private:
  std::variant<T, E> state_;
};

template <>
class [[nodiscard]] Expected<void, Error> {
 public:
  Expected() = default;
  Expected(Error error) : error_(std::move(error.message)), failed_(true) {}
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const std::string& error() const {
    assert(failed_);
    return error_;
  }

 private:
  std::string error_;
  bool failed_ = false;
};

}  // namespace agentty
