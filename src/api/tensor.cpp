#include "flashcute/tensor.h"

namespace flashcute {

int64_t element_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
    case DType::kBFloat16: return 2;
    case DType::kFloat32:
    case DType::kInt32: return 4;
    case DType::kFloat64:
    case DType::kInt64: return 8;
    case DType::kOther: return 0;
  }
  return 0;
}

int64_t TensorDesc::numel() const {
  int64_t n = 1;
  for (int i = 0; i < rank && i < kMaxRank; ++i) n *= shape[i];
  return rank == 0 ? 0 : n;
}

TensorDesc make_tensor(void* data, DType dtype, int32_t rank, const int64_t* shape, int32_t device_index) {
  TensorDesc t;
  t.data = data;
  t.dtype = dtype;
  t.device_type = DeviceType::kCUDA;
  t.device_index = device_index;
  t.rank = rank;
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    t.shape[i] = shape[i];
    t.stride[i] = stride;
    stride *= shape[i] > 0 ? shape[i] : 1;
  }
  return t;
}

TensorDesc make_tensor_4d(void* data, DType dtype, int64_t s0, int64_t s1, int64_t s2, int64_t s3,
                          int32_t device_index) {
  const int64_t shape[4] = {s0, s1, s2, s3};
  return make_tensor(data, dtype, 4, shape, device_index);
}

TensorDesc make_tensor_3d(void* data, DType dtype, int64_t s0, int64_t s1, int64_t s2, int32_t device_index) {
  const int64_t shape[3] = {s0, s1, s2};
  return make_tensor(data, dtype, 3, shape, device_index);
}

TensorDesc make_tensor_2d(void* data, DType dtype, int64_t s0, int64_t s1, int32_t device_index) {
  const int64_t shape[2] = {s0, s1};
  return make_tensor(data, dtype, 2, shape, device_index);
}

TensorDesc make_tensor_1d(void* data, DType dtype, int64_t s0, int32_t device_index) {
  return make_tensor(data, dtype, 1, &s0, device_index);
}

}  // namespace flashcute
