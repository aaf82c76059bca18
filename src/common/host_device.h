#pragma once
// FC_HOST_DEVICE marks the small pieces shared by the CUDA kernels and the CPU reference.
#if defined(__CUDACC__)
#define FC_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define FC_HOST_DEVICE inline
#endif
