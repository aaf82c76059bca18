#include "flashcute/status.h"

#include "api/kernel_key.h"
#include "flashcute/args.h"
#include "flashcute/tensor.h"

namespace flashcute {

const char* to_string(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotSupported: return "not supported";
    case StatusCode::kCudaError: return "CUDA error";
    case StatusCode::kInternal: return "internal error";
  }
  return "unknown status";
}

const char* to_string(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kOther: return "other";
  }
  return "unknown";
}

const char* to_string(DeviceType device) {
  switch (device) {
    case DeviceType::kCUDA: return "cuda";
    case DeviceType::kCPU: return "cpu";
    case DeviceType::kOther: return "other";
  }
  return "unknown";
}

const char* to_string(Backend backend) {
  switch (backend) {
    case Backend::kAuto: return "auto";
    case Backend::kSm80: return "sm80";
    case Backend::kSm90: return "sm90";
  }
  return "unknown";
}

const char* to_string(Arch arch) {
  switch (arch) {
    case Arch::kSm80: return "sm80";
    case Arch::kSm90: return "sm90";
  }
  return "unknown";
}

}  // namespace flashcute
