// The `flashcute` command: run the attention forward on random inputs from the command line.
//
//   flashcute info                 version, build configuration, GPU
//   flashcute run [options]        forward on random data (defaults: batch 4, seqlen 4096, 16 heads,
//                                  d 128, bf16)
// Exit codes: 0 ok, 1 no usable GPU, 2 the library refused the problem, 64 bad command line.

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "flashcute/flashcute.h"

namespace {

struct RunOptions {
  int64_t batch = 4, seqlen_q = 4096, seqlen_k = 4096, heads = 16, heads_kv = 0, d = 128, dv = 0;
  flashcute::DType dtype = flashcute::DType::kBFloat16;
  flashcute::AttentionOptions attn;
};

void usage(FILE* f) {
  std::fprintf(f,
               "usage: flashcute info\n"
               "       flashcute run [--batch N] [--seqlen N | --seqlen-q N --seqlen-k N] [--heads N]\n"
               "                     [--heads-kv N] [--d N] [--dv N] [--dtype bf16|fp16] [--causal]\n"
               "                     [--window-left N] [--window-right N] [--softcap C] [--scale S]\n"
               "                     [--backend auto|sm80|sm90]\n");
}

bool parse_run(int argc, char** argv, RunOptions* o) {
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--causal") {
      o->attn.causal = true;
      continue;
    }
    if (flag == "--help" || flag == "-h") return false;
    if (i + 1 >= argc) {
      std::fprintf(stderr, "flashcute: %s needs a value\n", flag.c_str());
      return false;
    }
    const std::string value = argv[++i];
    char* end = nullptr;
    const double num = std::strtod(value.c_str(), &end);
    const bool numeric = end && *end == '\0';
    auto need_num = [&]() {
      if (!numeric) std::fprintf(stderr, "flashcute: %s=%s is not a number\n", flag.c_str(), value.c_str());
      return numeric;
    };
    if (flag == "--dtype") {
      if (value == "bf16" || value == "bfloat16") o->dtype = flashcute::DType::kBFloat16;
      else if (value == "fp16" || value == "float16") o->dtype = flashcute::DType::kFloat16;
      else {
        std::fprintf(stderr, "flashcute: --dtype %s is not bf16 or fp16\n", value.c_str());
        return false;
      }
    } else if (flag == "--backend") {
      if (value == "auto") o->attn.backend = flashcute::Backend::kAuto;
      else if (value == "sm80") o->attn.backend = flashcute::Backend::kSm80;
      else if (value == "sm90") o->attn.backend = flashcute::Backend::kSm90;
      else {
        std::fprintf(stderr, "flashcute: --backend %s is not auto, sm80 or sm90\n", value.c_str());
        return false;
      }
    } else if (!need_num()) {
      return false;
    } else if (flag == "--batch") o->batch = static_cast<int64_t>(num);
    else if (flag == "--seqlen") o->seqlen_q = o->seqlen_k = static_cast<int64_t>(num);
    else if (flag == "--seqlen-q") o->seqlen_q = static_cast<int64_t>(num);
    else if (flag == "--seqlen-k") o->seqlen_k = static_cast<int64_t>(num);
    else if (flag == "--heads") o->heads = static_cast<int64_t>(num);
    else if (flag == "--heads-kv") o->heads_kv = static_cast<int64_t>(num);
    else if (flag == "--d") o->d = static_cast<int64_t>(num);
    else if (flag == "--dv") o->dv = static_cast<int64_t>(num);
    else if (flag == "--window-left") o->attn.window_left = static_cast<int64_t>(num);
    else if (flag == "--window-right") o->attn.window_right = static_cast<int64_t>(num);
    else if (flag == "--softcap") o->attn.softcap = static_cast<float>(num);
    else if (flag == "--scale") o->attn.softmax_scale = static_cast<float>(num);
    else {
      std::fprintf(stderr, "flashcute: unknown option %s\n", flag.c_str());
      return false;
    }
  }
  return true;
}

int gpu_or_explain(cudaDeviceProp* prop) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    std::fprintf(stderr, "flashcute: no usable CUDA GPU (%s); this command needs one\n",
                 err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
    return 1;
  }
  cudaGetDeviceProperties(prop, 0);
  return 0;
}

int cmd_info() {
  std::printf("flashcute %s\nbuild: %s\n", flashcute::version(), flashcute::build_config());
  cudaDeviceProp prop{};
  if (gpu_or_explain(&prop) != 0) return 1;
  std::printf("device 0: %s (compute capability %d.%d, %d SMs)\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount);
  return 0;
}

int cmd_run(const RunOptions& o) {
  cudaDeviceProp prop{};
  if (gpu_or_explain(&prop) != 0) return 1;
  const int64_t hkv = o.heads_kv > 0 ? o.heads_kv : o.heads;
  const int64_t dv = o.dv > 0 ? o.dv : o.d;
  const int64_t nq = o.batch * o.seqlen_q * o.heads * o.d, nk = o.batch * o.seqlen_k * hkv * o.d;
  const int64_t nv = o.batch * o.seqlen_k * hkv * dv, no = o.batch * o.seqlen_q * o.heads * dv;
  void *q = nullptr, *k = nullptr, *v = nullptr, *out = nullptr;
  float* lse = nullptr;
  if (cudaMalloc(&q, nq * 2) != cudaSuccess || cudaMalloc(&k, nk * 2) != cudaSuccess ||
      cudaMalloc(&v, nv * 2) != cudaSuccess || cudaMalloc(&out, no * 2) != cudaSuccess ||
      cudaMalloc(&lse, o.batch * o.heads * o.seqlen_q * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "flashcute: cannot allocate the inputs on the GPU\n");
    return 1;
  }
  flashcute::FwdArgs args;
  args.q = flashcute::make_tensor_4d(q, o.dtype, o.batch, o.seqlen_q, o.heads, o.d);
  args.k = flashcute::make_tensor_4d(k, o.dtype, o.batch, o.seqlen_k, hkv, o.d);
  args.v = flashcute::make_tensor_4d(v, o.dtype, o.batch, o.seqlen_k, hkv, dv);
  args.out = flashcute::make_tensor_4d(out, o.dtype, o.batch, o.seqlen_q, o.heads, dv);
  args.lse = flashcute::make_tensor_3d(lse, flashcute::DType::kFloat32, o.batch, o.heads, o.seqlen_q);
  args.options = o.attn;
  const flashcute::Status s = flashcute::fwd(args);
  cudaFree(q);
  cudaFree(k);
  cudaFree(v);
  cudaFree(out);
  cudaFree(lse);
  if (!s.ok()) {
    std::fprintf(stderr, "flashcute run: %s: %s\n", flashcute::to_string(s.code()), s.message().c_str());
    return 2;
  }
  std::printf("flashcute run: ok\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 64;
  }
  const std::string cmd = argv[1];
  if (cmd == "info") return cmd_info();
  if (cmd == "run") {
    RunOptions o;
    if (!parse_run(argc, argv, &o)) {
      usage(stderr);
      return 64;
    }
    return cmd_run(o);
  }
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    usage(stdout);
    return 0;
  }
  std::fprintf(stderr, "flashcute: unknown command '%s'\n", cmd.c_str());
  usage(stderr);
  return 64;
}
