// The user call a kernel lookup serves, for missing-kernel errors. Ops like allclose, printing or
// an all_reduce call kernels the user never named (sub, abs, cast, add); when a backend lacks one,
// the error says which call needed it, so a backend author sees what to implement and a user sees
// which line of theirs cannot run on that backend.
#pragma once

namespace tessera::dispatch {

// While alive, kernel lookups on this thread are made for `call` ("ts::allclose"). Nested scopes
// keep the outermost call: the one the user wrote. Rank tasks on pool threads inherit the issuing
// thread's call (dispatch/spmd.cpp). `call` must outlive the scope (a string literal).
class UserCall {
 public:
  explicit UserCall(const char* call) : saved_(current_) {
    if (current_ == nullptr) current_ = call;
  }
  ~UserCall() { current_ = saved_; }
  UserCall(const UserCall&) = delete;
  UserCall& operator=(const UserCall&) = delete;

  // The outermost call in progress on this thread; nullptr when none.
  static const char* current() { return current_; }

 private:
  static thread_local const char* current_;
  const char* saved_;
};

}  // namespace tessera::dispatch
