#include "api/device.h"

#include <cuda_runtime.h>

#include <mutex>
#include <string>
#include <vector>

namespace flashcute {

Status cuda_status(int error, const char* what) {
  if (error == cudaSuccess) return Status::Ok();
  const auto e = static_cast<cudaError_t>(error);
  return Status::Cuda(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

Status device_info(int index, DeviceInfo* info) {
  static std::mutex mutex;
  static std::vector<DeviceInfo> cache;
  static std::vector<bool> cached;
  std::lock_guard<std::mutex> lock(mutex);
  if (index >= 0 && index < static_cast<int>(cached.size()) && cached[index]) {
    *info = cache[index];
    return Status::Ok();
  }
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // do not leave a sticky error for the caller's next check
    return cuda_status(err, "no usable CUDA device (cudaGetDeviceCount)");
  }
  if (index < 0 || index >= count)
    return Status::Invalid("device index " + std::to_string(index) + " is out of range; this machine has " +
                           std::to_string(count) + " CUDA device(s)");
  cudaDeviceProp prop{};
  err = cudaGetDeviceProperties(&prop, index);
  if (err != cudaSuccess) return cuda_status(err, "cudaGetDeviceProperties");
  DeviceInfo d;
  d.index = index;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.name = prop.name;
  d.sm_count = prop.multiProcessorCount;
  d.max_smem_per_block_optin = static_cast<int64_t>(prop.sharedMemPerBlockOptin);
  if (static_cast<int>(cache.size()) < count) {
    cache.resize(count);
    cached.resize(count, false);
  }
  cache[index] = d;
  cached[index] = true;
  *info = d;
  return Status::Ok();
}

DeviceGuard::DeviceGuard(int index) {
  int current = -1;
  cudaError_t err = cudaGetDevice(&current);
  if (err != cudaSuccess) {
    cudaGetLastError();
    status_ = cuda_status(err, "cudaGetDevice");
    return;
  }
  if (current != index) {
    err = cudaSetDevice(index);
    if (err != cudaSuccess) {
      cudaGetLastError();
      status_ = cuda_status(err, "cudaSetDevice");
      return;
    }
    previous_ = current;
  }
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

}  // namespace flashcute
