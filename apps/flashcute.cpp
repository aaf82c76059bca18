// The `flashcute` command: run the attention forward on random inputs from the command line.
//
//   flashcute info                 version, build configuration, GPU
//   flashcute run [options]        forward on random data (defaults: batch 4, seqlen 4096, 16 heads,
//                                  d 128, bf16): median time of --iters launches (CUDA events),
//                                  TFLOP/s (BENCHMARKING.md), and the error of --check-heads
//                                  (batch, head) pairs against the fp64 reference, beside the error
//                                  of an unfused implementation in the same dtype
// Exit codes: 0 ok, 1 no usable GPU (or a CUDA failure), 2 the library refused the problem, 3 the
// check against the reference failed, 64 bad command line.

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "flashcute/flashcute.h"
#include "reference/numeric.h"
#include "reference/reference.h"

namespace {

struct RunOptions {
  int64_t batch = 4, seqlen_q = 4096, seqlen_k = 4096, heads = 16, heads_kv = 0, d = 128, dv = 0;
  flashcute::DType dtype = flashcute::DType::kBFloat16;
  int iters = 20;
  int check_heads = 2;
  uint64_t seed = 1;
  flashcute::AttentionOptions attn;
};

void usage(FILE* f) {
  std::fprintf(f,
               "usage: flashcute info\n"
               "       flashcute run [--batch N] [--seqlen N | --seqlen-q N --seqlen-k N] [--heads N]\n"
               "                     [--heads-kv N] [--d N] [--dv N] [--dtype bf16|fp16] [--causal]\n"
               "                     [--window-left N] [--window-right N] [--softcap C] [--scale S]\n"
               "                     [--backend auto|sm80|sm90] [--iters N] [--check-heads N] [--seed N]\n");
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
    else if (flag == "--iters") o->iters = std::max(1, static_cast<int>(num));
    else if (flag == "--check-heads") o->check_heads = std::max(0, static_cast<int>(num));
    else if (flag == "--seed") o->seed = static_cast<uint64_t>(num);
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

#define FC_CUDA_OR_RETURN(expr)                                                      \
  do {                                                                               \
    const cudaError_t e_ = (expr);                                                   \
    if (e_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "flashcute: %s: %s\n", #expr, cudaGetErrorString(e_));    \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

// Random normal values rounded to the dtype: 16-bit bits for the GPU, doubles for the reference.
void randn(flashcute::DType dt, int64_t n, std::mt19937_64& rng, std::vector<uint16_t>* bits,
           std::vector<double>* values) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  bits->resize(n);
  values->resize(n);
  for (int64_t i = 0; i < n; ++i) {
    (*bits)[i] = flashcute::numeric::to_bits(dt, normal(rng));
    (*values)[i] = flashcute::numeric::from_bits(dt, (*bits)[i]);
  }
}

int cmd_run(const RunOptions& o) {
  cudaDeviceProp prop{};
  if (gpu_or_explain(&prop) != 0) return 1;
  const int64_t hkv = o.heads_kv > 0 ? o.heads_kv : o.heads;
  const int64_t dv = o.dv > 0 ? o.dv : o.d;
  const int64_t nq = o.batch * o.seqlen_q * o.heads * o.d, nk = o.batch * o.seqlen_k * hkv * o.d;
  const int64_t nv = o.batch * o.seqlen_k * hkv * dv, no = o.batch * o.seqlen_q * o.heads * dv;
  const int64_t nlse = o.batch * o.heads * o.seqlen_q;

  std::mt19937_64 rng(o.seed);
  std::vector<uint16_t> hq, hk, hv;
  std::vector<double> vq, vk, vv;
  randn(o.dtype, nq, rng, &hq, &vq);
  randn(o.dtype, nk, rng, &hk, &vk);
  randn(o.dtype, nv, rng, &hv, &vv);

  void *q = nullptr, *k = nullptr, *v = nullptr, *out = nullptr;
  float* lse = nullptr;
  FC_CUDA_OR_RETURN(cudaMalloc(&q, std::max<int64_t>(nq, 1) * 2));
  FC_CUDA_OR_RETURN(cudaMalloc(&k, std::max<int64_t>(nk, 1) * 2));
  FC_CUDA_OR_RETURN(cudaMalloc(&v, std::max<int64_t>(nv, 1) * 2));
  FC_CUDA_OR_RETURN(cudaMalloc(&out, std::max<int64_t>(no, 1) * 2));
  FC_CUDA_OR_RETURN(cudaMalloc(&lse, std::max<int64_t>(nlse, 1) * sizeof(float)));
  FC_CUDA_OR_RETURN(cudaMemcpy(q, hq.data(), nq * 2, cudaMemcpyHostToDevice));
  FC_CUDA_OR_RETURN(cudaMemcpy(k, hk.data(), nk * 2, cudaMemcpyHostToDevice));
  FC_CUDA_OR_RETURN(cudaMemcpy(v, hv.data(), nv * 2, cudaMemcpyHostToDevice));
  FC_CUDA_OR_RETURN(cudaMemset(out, 0xFF, no * 2));  // NaN: an unwritten element fails the check

  flashcute::FwdArgs args;
  args.q = flashcute::make_tensor_4d(q, o.dtype, o.batch, o.seqlen_q, o.heads, o.d);
  args.k = flashcute::make_tensor_4d(k, o.dtype, o.batch, o.seqlen_k, hkv, o.d);
  args.v = flashcute::make_tensor_4d(v, o.dtype, o.batch, o.seqlen_k, hkv, dv);
  args.out = flashcute::make_tensor_4d(out, o.dtype, o.batch, o.seqlen_q, o.heads, dv);
  args.lse = flashcute::make_tensor_3d(lse, flashcute::DType::kFloat32, o.batch, o.heads, o.seqlen_q);
  args.options = o.attn;
  cudaStream_t stream;
  FC_CUDA_OR_RETURN(cudaStreamCreate(&stream));
  args.stream = reinterpret_cast<flashcute::Stream>(stream);

  // First call: correctness (and warm-up).
  flashcute::Status s = flashcute::fwd(args);
  if (!s.ok()) {
    std::fprintf(stderr, "flashcute run: %s: %s\n", flashcute::to_string(s.code()), s.message().c_str());
    return 2;
  }
  FC_CUDA_OR_RETURN(cudaStreamSynchronize(stream));
  std::vector<uint16_t> hout(no);
  std::vector<float> hlse(nlse);
  FC_CUDA_OR_RETURN(cudaMemcpy(hout.data(), out, no * 2, cudaMemcpyDeviceToHost));
  FC_CUDA_OR_RETURN(cudaMemcpy(hlse.data(), lse, nlse * sizeof(float), cudaMemcpyDeviceToHost));

  // Timing: median of `iters` launches, each bracketed by CUDA events.
  std::vector<float> ms(o.iters);
  cudaEvent_t start, stop;
  FC_CUDA_OR_RETURN(cudaEventCreate(&start));
  FC_CUDA_OR_RETURN(cudaEventCreate(&stop));
  for (int i = 0; i < 3; ++i) flashcute::fwd(args);
  for (int i = 0; i < o.iters; ++i) {
    cudaEventRecord(start, stream);
    flashcute::fwd(args);
    cudaEventRecord(stop, stream);
    FC_CUDA_OR_RETURN(cudaEventSynchronize(stop));
    cudaEventElapsedTime(&ms[i], start, stop);
  }
  std::sort(ms.begin(), ms.end());
  const double median_ms = ms[ms.size() / 2];
  // BENCHMARKING.md: 2*(d + dv) FLOPs per (query, key) pair; halved for causal when seqlen_q == seqlen_k.
  double flops = 2.0 * (o.d + dv) * o.batch * o.heads * o.seqlen_q * o.seqlen_k;
  if (o.attn.causal && o.seqlen_q == o.seqlen_k) flops /= 2;

  // Check: the first and last (batch, head) pairs (up to --check-heads) against the fp64 reference.
  double max_err = 0.0, max_lp_err = 0.0, max_lse_err = 0.0, max_golden = 0.0;
  bool all_finite_where_expected = true;
  flashcute::ref::set_num_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  for (int c = 0; c < o.check_heads && c < o.batch * o.heads; ++c) {
    const int64_t pair = c == 0 ? 0 : o.batch * o.heads - c;  // first, then from the end
    const int64_t b = pair / o.heads, h = pair % o.heads, hk_idx = h / (o.heads / hkv);
    flashcute::ref::Problem p;
    p.batch = 1, p.heads_q = 1, p.heads_kv = 1;
    p.seqlen_q = o.seqlen_q, p.seqlen_k = o.seqlen_k, p.head_dim = o.d, p.head_dim_v = dv;
    p.softmax_scale = o.attn.softmax_scale.value_or(0.0f);
    p.causal = o.attn.causal, p.window_left = o.attn.window_left, p.window_right = o.attn.window_right;
    p.softcap = o.attn.softcap;
    const flashcute::ref::ConstView rq{vq.data() + (b * o.seqlen_q * o.heads + h) * o.d, 0, o.heads * o.d, 0};
    const flashcute::ref::ConstView rk{vk.data() + (b * o.seqlen_k * hkv + hk_idx) * o.d, 0, hkv * o.d, 0};
    const flashcute::ref::ConstView rv{vv.data() + (b * o.seqlen_k * hkv + hk_idx) * dv, 0, hkv * dv, 0};
    std::vector<double> golden(o.seqlen_q * dv), lp(o.seqlen_q * dv), glse(o.seqlen_q), lplse(o.seqlen_q);
    flashcute::ref::forward(p, rq, rk, rv, flashcute::ref::MutView{golden.data(), 0, dv, 0}, glse.data());
    flashcute::ref::forward_lowp(o.dtype, p, rq, rk, rv, flashcute::ref::MutView{lp.data(), 0, dv, 0}, lplse.data());
    for (int64_t i = 0; i < o.seqlen_q; ++i) {
      for (int64_t j = 0; j < dv; ++j) {
        const double got = flashcute::numeric::from_bits(o.dtype, hout[((b * o.seqlen_q + i) * o.heads + h) * dv + j]);
        const double g = golden[i * dv + j];
        if (std::isfinite(g) != std::isfinite(got)) all_finite_where_expected = false;
        max_err = std::max(max_err, std::fabs(got - g));
        if (std::isfinite(g)) max_golden = std::max(max_golden, std::fabs(g));
        max_lp_err = std::max(max_lp_err, std::fabs(lp[i * dv + j] - g));
      }
      const double l = hlse[(b * o.heads + h) * o.seqlen_q + i];
      if (std::isfinite(glse[i])) max_lse_err = std::max(max_lse_err, std::fabs(l - glse[i]));
      else if (l != glse[i]) all_finite_where_expected = false;
    }
  }

  std::printf("flashcute run: %s b=%lld sq=%lld sk=%lld h=%lld/%lld d=%lld dv=%lld causal=%d on %s\n",
              o.dtype == flashcute::DType::kBFloat16 ? "bf16" : "fp16", (long long)o.batch, (long long)o.seqlen_q,
              (long long)o.seqlen_k, (long long)o.heads, (long long)hkv, (long long)o.d, (long long)dv,
              o.attn.causal ? 1 : 0, prop.name);
  std::printf("  time %.3f ms (median of %d), %.1f TFLOP/s\n", median_ms, o.iters, flops / (median_ms * 1e-3) / 1e12);
  if (o.check_heads > 0)
    std::printf("  check (%d heads vs fp64): max|out-golden| %.3g (unfused %s: %.3g), max|lse-golden| %.3g, %s\n",
                std::min<int>(o.check_heads, static_cast<int>(o.batch * o.heads)), max_err,
                o.dtype == flashcute::DType::kBFloat16 ? "bf16" : "fp16", max_lp_err, max_lse_err,
                all_finite_where_expected ? "non-finite parity ok" : "NON-FINITE MISMATCH");
  cudaFree(q);
  cudaFree(k);
  cudaFree(v);
  cudaFree(out);
  cudaFree(lse);
  // Pass/fail for scripts: TESTING.md's max rule (2x the unfused error + 2 ulp at max|golden|).
  const int mantissa = o.dtype == flashcute::DType::kBFloat16 ? 7 : 10;
  const double ulp2 = max_golden > 0 ? 2.0 * std::ldexp(1.0, std::ilogb(max_golden) - mantissa) : 0.0;
  const bool ok = all_finite_where_expected && max_err <= 2.0 * max_lp_err + ulp2 && max_lse_err <= 1e-3;
  return ok ? 0 : 3;
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
