#pragma once
// The CUDA device a call runs on: properties (cached) and a guard that makes it current.

#include "api/problem.h"
#include "flashcute/status.h"

namespace flashcute {

// Properties of device `index`, queried once per device and cached.
Status device_info(int index, DeviceInfo* info);

// Makes `index` the current device for the guard's lifetime, restoring the previous one after.
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  const Status& status() const { return status_; }

 private:
  int previous_ = -1;
  Status status_;
};

// Status from a CUDA runtime error code, naming what was being done.
Status cuda_status(int error, const char* what);

}  // namespace flashcute
