#pragma once
// TensorDesc: a framework-neutral view of one tensor (raw pointer, dtype, device, int64 shape and
// strides in elements). The Python layer fills it from DLPack; C++ callers fill it by hand. No
// torch and no CuTe types appear in the public headers.

#include <cstdint>

namespace flashcute {

enum class DType : int32_t {
  kFloat16 = 0,
  kBFloat16 = 1,
  kFloat32 = 2,
  kFloat64 = 3,
  kInt32 = 4,
  kInt64 = 5,
  kOther = 6,  // anything else a binding may see (int8, fp8, bool, ...): always rejected
};

const char* to_string(DType dtype);
int64_t element_size(DType dtype);  // bytes; 0 for kOther

enum class DeviceType : int32_t { kCUDA = 0, kCPU = 1, kOther = 2 };

const char* to_string(DeviceType device);

inline constexpr int kMaxRank = 4;

struct TensorDesc {
  void* data = nullptr;
  DType dtype = DType::kOther;
  DeviceType device_type = DeviceType::kCUDA;
  int32_t device_index = 0;
  int32_t rank = 0;                  // 0 = "not given" for optional tensors
  int64_t shape[kMaxRank] = {};      // outermost first
  int64_t stride[kMaxRank] = {};     // in elements

  bool given() const { return rank != 0 || data != nullptr; }
  int64_t numel() const;
};

// Helpers for C++ callers: a contiguous (row-major) descriptor of the given shape.
TensorDesc make_tensor(void* data, DType dtype, int32_t rank, const int64_t* shape,
                       int32_t device_index = 0);
TensorDesc make_tensor_4d(void* data, DType dtype, int64_t s0, int64_t s1, int64_t s2, int64_t s3,
                          int32_t device_index = 0);
TensorDesc make_tensor_3d(void* data, DType dtype, int64_t s0, int64_t s1, int64_t s2,
                          int32_t device_index = 0);
TensorDesc make_tensor_2d(void* data, DType dtype, int64_t s0, int64_t s1, int32_t device_index = 0);
TensorDesc make_tensor_1d(void* data, DType dtype, int64_t s0, int32_t device_index = 0);

}  // namespace flashcute
