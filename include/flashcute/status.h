#pragma once
// flashcute::Status: the result of every public call. A non-OK status carries a message that names
// the argument, the offending value and the rule it breaks (DESIGN.md, "Errors").

#include <string>
#include <utility>

namespace flashcute {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,  // bad input: shapes, dtypes, strides, options (Python: ValueError/TypeError)
  kNotSupported = 2,     // valid input this build or this GPU cannot run (not compiled, old GPU)
  kCudaError = 3,        // a CUDA runtime call failed (Python: RuntimeError)
  kInternal = 4,         // a bug in flashcute: please report it
};

const char* to_string(StatusCode code);

class Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  static Status Invalid(std::string message) { return {StatusCode::kInvalidArgument, std::move(message)}; }
  static Status NotSupported(std::string message) { return {StatusCode::kNotSupported, std::move(message)}; }
  static Status Cuda(std::string message) { return {StatusCode::kCudaError, std::move(message)}; }
  static Status Internal(std::string message) { return {StatusCode::kInternal, std::move(message)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

}  // namespace flashcute
